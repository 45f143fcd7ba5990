import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs: a dataset version (or partition) through a SUT connection, scored by the metrics of a
 * snapshot taken when the run starts. One item per row and repetition keeps what the SUT
 * answered and how it scored, so a restarted worker never calls the SUT again for a finished
 * row; events keep the run's history in order.
 */
export class Runs1764600000000 implements MigrationInterface {
  name = 'Runs1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL DEFAULT '',
      dataset_id uuid NOT NULL,
      version_id uuid NOT NULL,
      partition_id uuid,
      sut_id uuid NOT NULL,
      connection_id uuid NOT NULL,
      eval_config_id uuid,
      state text NOT NULL CHECK (state IN ('queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled')),
      state_reason text,
      snapshot jsonb NOT NULL,
      concurrency integer NOT NULL,
      sample jsonb,
      repetitions integer NOT NULL DEFAULT 1,
      tags text[] NOT NULL DEFAULT '{}',
      rerun_of uuid REFERENCES runs(id) ON DELETE SET NULL,
      rerun_mode text,
      total integer NOT NULL DEFAULT 0,
      completed integer NOT NULL DEFAULT 0,
      errored integer NOT NULL DEFAULT 0,
      summary jsonb,
      passed boolean,
      job_id uuid,
      cancel_requested_at timestamptz,
      started_at timestamptz,
      finished_at timestamptz,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      version integer NOT NULL DEFAULT 1
    )`);
    await q.query('CREATE INDEX runs_workspace_idx ON runs (workspace_id, created_at DESC, id)');
    await q.query('CREATE INDEX runs_sut_idx ON runs (sut_id, created_at DESC)');
    await q.query('CREATE INDEX runs_dataset_idx ON runs (dataset_id)');

    await q.query(`CREATE TABLE run_items (
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      row_id uuid NOT NULL,
      repetition integer NOT NULL,
      ordinal bigint NOT NULL,
      session_id text,
      turn integer,
      data jsonb NOT NULL,
      dimensions jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'error')),
      output text,
      latency_ms double precision,
      usage jsonb,
      cost_usd double precision,
      extras jsonb,
      error jsonb,
      attempts integer,
      scores jsonb,
      passed boolean,
      called_at timestamptz,
      scored_at timestamptz,
      PRIMARY KEY (run_id, row_id, repetition)
    )`);
    await q.query('CREATE INDEX run_items_order_idx ON run_items (run_id, ordinal, repetition)');

    await q.query(`CREATE TABLE run_events (
      id bigserial PRIMARY KEY,
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      type text NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      data jsonb NOT NULL DEFAULT '{}'::jsonb
    )`);
    await q.query('CREATE INDEX run_events_run_idx ON run_events (run_id, id)');

    await q.query(`CREATE TABLE notification_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      config_id uuid NOT NULL REFERENCES notification_configs(id) ON DELETE CASCADE,
      event text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    await q.query(
      'CREATE INDEX notification_deliveries_config_idx ON notification_deliveries (config_id, created_at DESC)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE notification_deliveries');
    await q.query('DROP TABLE run_events');
    await q.query('DROP TABLE run_items');
    await q.query('DROP TABLE runs');
  }
}
