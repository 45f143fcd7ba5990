import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spans dropped on live receipt wait without a version until the landing puts their export's
 * spans into one (trace_drops.version_id); each landing batch looks them up by the stream's
 * ingest run, so only those waiting are indexed. Drops received before this version stay on
 * their ingest run and join the version their stream's next batch lands in.
 */
export class LiveDropVersions1766450000000 implements MigrationInterface {
  name = 'LiveDropVersions1766450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX trace_drops_unversioned_idx ON trace_drops (run_id) WHERE version_id IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS trace_drops_unversioned_idx');
  }
}
