import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Alerts on drops of online scores (docs/online-alerts.md): a rule compares an evaluator metric's
 * pass rate in a recent window with a reference (the trailing period before it, or a fixed
 * baseline window) and keeps its alert state beside its settings: ok or firing, the streaks that
 * move it, the last evaluation. `state_version` moves with every change of that state, so a check
 * writes only over the state it read; `check_seq` numbers the scheduled checks, whose job key it
 * is part of, so one chain of checks runs per rule. Each firing and resolution is kept with its
 * evidence in `online_alert_events`.
 */
export class OnlineAlerts1767200000000 implements MigrationInterface {
  name = 'OnlineAlerts1767200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE online_alert_rules (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      evaluator_id uuid NOT NULL REFERENCES online_evaluators(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      metric text NOT NULL,
      kind text NOT NULL DEFAULT 'pass_rate' CHECK (kind IN ('pass_rate')),
      recent_seconds integer NOT NULL CHECK (recent_seconds > 0),
      reference_kind text NOT NULL CHECK (reference_kind IN ('trailing', 'fixed')),
      reference_seconds integer CHECK (reference_seconds > 0),
      reference_from timestamptz,
      reference_to timestamptz,
      alpha double precision NOT NULL,
      alpha_resolve double precision NOT NULL,
      min_samples integer NOT NULL,
      min_drop double precision NOT NULL,
      fire_after integer NOT NULL,
      resolve_after integer NOT NULL,
      check_seconds integer NOT NULL CHECK (check_seconds BETWEEN 10 AND 86400),
      enabled boolean NOT NULL DEFAULT true,
      status text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'firing')),
      breaches integer NOT NULL DEFAULT 0,
      calms integer NOT NULL DEFAULT 0,
      last_checked_at timestamptz,
      last_evaluation jsonb,
      fired_at timestamptz,
      resolved_at timestamptz,
      state_version integer NOT NULL DEFAULT 0,
      check_seq integer NOT NULL DEFAULT 0,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (evaluator_id, name),
      CHECK (0 < alpha AND alpha < alpha_resolve AND alpha_resolve <= 1),
      CHECK (CASE reference_kind
        WHEN 'trailing' THEN reference_seconds IS NOT NULL AND reference_from IS NULL AND reference_to IS NULL
        ELSE reference_seconds IS NULL AND reference_from < reference_to END)
    )`);
    await q.query(
      'CREATE INDEX online_alert_rules_evaluator_idx ON online_alert_rules (evaluator_id, created_at DESC, id)',
    );
    await q.query('CREATE INDEX online_alert_rules_workspace_idx ON online_alert_rules (workspace_id)');
    await q.query(`CREATE TABLE online_alert_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      rule_id uuid NOT NULL REFERENCES online_alert_rules(id) ON DELETE CASCADE,
      evaluator_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('firing', 'resolved')),
      evidence jsonb NOT NULL,
      deliveries integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    await q.query('CREATE INDEX online_alert_events_rule_idx ON online_alert_events (rule_id, created_at DESC, id)');
    await q.query('CREATE INDEX online_alert_events_workspace_idx ON online_alert_events (workspace_id)');
    // Records with a workspace follow a move like every other (1766300000000-access-changes).
    for (const table of ['online_alert_rules', 'online_alert_events'])
      await q.query(`CREATE TRIGGER ${table}_access_moved AFTER UPDATE OF workspace_id ON ${table}
        FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE online_alert_events');
    await q.query('DROP TABLE online_alert_rules');
  }
}
