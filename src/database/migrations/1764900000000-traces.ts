import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Trace ingestion: connections, uploads, ingest runs, drops, spans, ground truth, enrichment, tags. */
export class Traces1764900000000 implements MigrationInterface {
  name = 'Traces1764900000000';

  async up(q: QueryRunner): Promise<void> {
    void q;
  }

  async down(q: QueryRunner): Promise<void> {
    void q;
  }
}
