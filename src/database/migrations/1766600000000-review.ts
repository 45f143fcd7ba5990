import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Human review queues (docs/review.md, docs/decisions/0018-review-queues.md): a queue with its
 * rubric versions, the items it holds (a reference into its source and a bounded snapshot of
 * what a reviewer needs), the slots reviewers hold on an item (on a lease, or with their label), and the labels (or skips)
 * they give, each with its history. An item is unique per queue and reference (adding it twice is
 * a no-op); a reviewer labels or skips an item once (then edits that label).
 */
export class Review1766600000000 implements MigrationInterface {
  name = 'Review1766600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE review_queues (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
      source_kind text NOT NULL CHECK (source_kind IN ('run', 'dataset_version', 'traces', 'sessions')),
      source_id uuid NOT NULL,
      overlap integer NOT NULL CHECK (overlap BETWEEN 1 AND 10),
      reviewers uuid[],
      adjudicators uuid[],
      lease_seconds integer NOT NULL CHECK (lease_seconds BETWEEN 30 AND 86400),
      show_verdicts boolean NOT NULL DEFAULT false,
      rubric_version integer NOT NULL DEFAULT 1,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX review_queues_workspace_idx ON review_queues (workspace_id, created_at DESC, id)');
    await q.query(`CREATE TABLE review_rubric_versions (
      queue_id uuid NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
      version integer NOT NULL,
      fields jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (queue_id, version)
    )`);
    await q.query(`CREATE TABLE review_items (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      queue_id uuid NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
      position bigint NOT NULL,
      ref text NOT NULL,
      context jsonb NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'final', 'disagreement')),
      labelled integer NOT NULL DEFAULT 0,
      final_label jsonb,
      final_source text CHECK (final_source IN ('consensus', 'adjudication')),
      final_rubric_version integer,
      adjudicated_by uuid,
      finalised_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (queue_id, ref)
    )`);
    await q.query('CREATE UNIQUE INDEX review_items_position_idx ON review_items (queue_id, position)');
    await q.query('CREATE INDEX review_items_state_idx ON review_items (queue_id, state, position)');
    // An item of overlap k has slots 0..k-1: a reviewer holds one on a lease (expires_at) or with
    // a label (expires_at null). The primary key is what keeps two reviewers off one slot.
    await q.query(`CREATE TABLE review_slots (
      item_id uuid NOT NULL REFERENCES review_items(id) ON DELETE CASCADE,
      slot integer NOT NULL,
      reviewer_id uuid NOT NULL,
      expires_at timestamptz,
      PRIMARY KEY (item_id, slot),
      UNIQUE (item_id, reviewer_id)
    )`);
    await q.query(`CREATE TABLE review_labels (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      item_id uuid NOT NULL REFERENCES review_items(id) ON DELETE CASCADE,
      queue_id uuid NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
      reviewer_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('label', 'skip')),
      "values" jsonb,
      reason text,
      rubric_version integer NOT NULL,
      history jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (item_id, reviewer_id)
    )`);
    await q.query('CREATE INDEX review_labels_queue_idx ON review_labels (queue_id, reviewer_id)');
    // Records with a workspace follow a move like every other (1766300000000-access-changes).
    for (const table of ['review_queues', 'review_items'])
      await q.query(`CREATE TRIGGER ${table}_access_moved AFTER UPDATE OF workspace_id ON ${table}
        FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE review_labels, review_slots, review_items, review_rubric_versions, review_queues');
  }
}
