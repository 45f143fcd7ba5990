import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agents (docs/agents.md): a run item keeps the trajectory the SUT took to its answer (its tool
 * and model calls, read from the answer or from the SUT's own trace) and the W3C trace id its call
 * carried, by which the SUT's exported spans are joined back to the row.
 */
export class RunItemTrajectories1767400000000 implements MigrationInterface {
  name = 'RunItemTrajectories1767400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_items ADD COLUMN trajectory jsonb, ADD COLUMN trace_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_items DROP COLUMN trajectory, DROP COLUMN trace_id`);
  }
}
