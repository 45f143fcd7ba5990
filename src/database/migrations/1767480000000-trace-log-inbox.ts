import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OTLP log records (POST /v1/logs, LogsService/Export) wait here, acknowledged, until they are
 * joined to their span's row: at once when the span has landed, else when it lands (the landing
 * looks up the records of the spans it takes), or they are dropped once older than
 * OTLP_LOG_PENDING_SECONDS. `row_id` is the span's row id (dataset, trace id, span id); `key`
 * identifies a record's content, so an exporter's retry is not kept twice. `seen`: the landing
 * looked for the span once and it had not landed (the record then waits for the span, not for a
 * landing of its own).
 */
export class TraceLogInbox1767480000000 implements MigrationInterface {
  name = 'TraceLogInbox1767480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE trace_log_inbox (
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      row_id uuid NOT NULL,
      key text NOT NULL,
      seq bigserial NOT NULL,
      seen boolean NOT NULL DEFAULT false,
      received_at timestamptz NOT NULL DEFAULT now(),
      data jsonb NOT NULL,
      PRIMARY KEY (dataset_id, row_id, key)
    )`);
    await q.query('CREATE INDEX trace_log_inbox_unseen_idx ON trace_log_inbox (dataset_id, seq) WHERE NOT seen');
    await q.query('CREATE INDEX trace_log_inbox_age_idx ON trace_log_inbox (dataset_id, received_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE trace_log_inbox');
  }
}
