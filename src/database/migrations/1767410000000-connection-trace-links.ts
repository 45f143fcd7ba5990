import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A connection may name the trace dataset its SUT exports its own spans to, so runs join each row to its trace (docs/agents.md). */
export class ConnectionTraceLinks1767410000000 implements MigrationInterface {
  name = 'ConnectionTraceLinks1767410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sut_connections ADD COLUMN trace_link jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sut_connections DROP COLUMN trace_link`);
  }
}
