import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';

export interface RetentionRow {
  workspace_id: string;
  dataset_id: string | null;
  retention_days: number | null;
  updated_at: Date;
}

/** A trace dataset and the retention that applies to it (its own, else its workspace's). */
export interface RetainedDataset {
  workspace_id: string;
  dataset_id: string;
  retention_days: number;
}

/** `trace_retention`, and the deletions the retention sweep makes: queries only. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly db: Db) {}

  async find(workspaceId: string, datasetId: string | null): Promise<RetentionRow | null> {
    return (
      (
        await this.db.query(
          'SELECT workspace_id, dataset_id, retention_days, updated_at FROM trace_retention WHERE workspace_id = $1 AND dataset_id IS NOT DISTINCT FROM $2',
          [workspaceId, datasetId],
        )
      )[0] ?? null
    );
  }

  listForWorkspace(workspaceId: string): Promise<RetentionRow[]> {
    return this.db.query(
      'SELECT workspace_id, dataset_id, retention_days, updated_at FROM trace_retention WHERE workspace_id = $1 ORDER BY dataset_id NULLS FIRST',
      [workspaceId],
    );
  }

  async put(workspaceId: string, datasetId: string | null, days: number | null, userId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO trace_retention (workspace_id, dataset_id, retention_days, updated_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, COALESCE(dataset_id, '00000000-0000-0000-0000-000000000000'::uuid)) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_by = EXCLUDED.updated_by, updated_at = now()`,
      [workspaceId, datasetId, days, userId],
    );
  }

  async remove(workspaceId: string, datasetId: string): Promise<void> {
    await this.db.query('DELETE FROM trace_retention WHERE workspace_id = $1 AND dataset_id = $2', [
      workspaceId,
      datasetId,
    ]);
  }

  /** Every trace dataset (of one workspace, or all) with the retention that applies to it: a dataset's own setting (null keeps forever) wins over its workspace's. */
  retained(workspaceId: string | null): Promise<RetainedDataset[]> {
    return this.db.query(
      `SELECT d.workspace_id, d.id AS dataset_id, COALESCE(own.retention_days, CASE WHEN own.id IS NULL THEN ws.retention_days END) AS retention_days
         FROM datasets d
         LEFT JOIN trace_retention own ON own.workspace_id = d.workspace_id AND own.dataset_id = d.id
         LEFT JOIN trace_retention ws ON ws.workspace_id = d.workspace_id AND ws.dataset_id IS NULL
        WHERE d.kind = 'traces' AND ($1::uuid IS NULL OR d.workspace_id = $1)
          AND COALESCE(own.retention_days, CASE WHEN own.id IS NULL THEN ws.retention_days END) IS NOT NULL
        ORDER BY d.workspace_id, d.id`,
      [workspaceId],
    );
  }

  /** Workspaces whose default retention is set (their uploads and ingest payloads expire). */
  workspaceDefaults(workspaceId: string | null): Promise<Array<{ workspace_id: string; retention_days: number }>> {
    return this.db.query(
      'SELECT workspace_id, retention_days FROM trace_retention WHERE dataset_id IS NULL AND retention_days IS NOT NULL AND ($1::uuid IS NULL OR workspace_id = $1) ORDER BY workspace_id',
      [workspaceId],
    );
  }

  /**
   * Deletes up to `limit` of a trace dataset's spans that started before `cutoff` (from every
   * version) and answers, per version number, how many rows it lost, so its row count follows.
   */
  async deleteSpansBefore(
    datasetId: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ deleted: number; lost: Array<{ number: number; rows: number }> }> {
    const [row]: Array<{ deleted: number; lost: Array<{ number: number; rows: number }> | null }> = await this.db.query(
      `WITH gone AS (
         DELETE FROM dataset_rows r USING (
           SELECT row_id, added_in FROM dataset_rows WHERE dataset_id = $1 AND (data->>'start_time')::timestamptz < $2 LIMIT $3
         ) x WHERE r.dataset_id = $1 AND r.row_id = x.row_id AND r.added_in = x.added_in RETURNING r.added_in, r.removed_in
       ), lost AS (
         SELECT v.number, count(*)::int AS rows FROM dataset_versions v JOIN gone g ON g.added_in <= v.number AND (g.removed_in IS NULL OR g.removed_in > v.number)
          WHERE v.dataset_id = $1 GROUP BY v.number
       ) SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT json_agg(json_build_object('number', number, 'rows', rows)) FROM lost) AS lost`,
      [datasetId, cutoff, limit],
    );
    return { deleted: row.deleted, lost: row.lost ?? [] };
  }

  async shrinkVersion(datasetId: string, number: number, rows: number): Promise<string | null> {
    const [row]: Array<{ id: string }> = await this.db.query(
      'WITH changed AS (UPDATE dataset_versions SET row_count = GREATEST(row_count - $3, 0) WHERE dataset_id = $1 AND number = $2 RETURNING id) SELECT id FROM changed',
      [datasetId, number, rows],
    );
    return row?.id ?? null;
  }

  /** Uploads of a workspace received before `cutoff`: their rows are deleted here, and their files by the caller. */
  async deleteUploadsBefore(workspaceId: string, cutoff: Date): Promise<string[]> {
    const rows: Array<{ path: string }> = await this.db.query(
      'WITH gone AS (DELETE FROM trace_uploads WHERE workspace_id = $1 AND created_at < $2 RETURNING path) SELECT path FROM gone',
      [workspaceId, cutoff],
    );
    return rows.map((r) => r.path);
  }

  /** Clears the records landings kept (inline bodies, dropped records' payloads) before `cutoff`; the counts and reasons stay. */
  async clearPayloadsBefore(workspaceId: string, cutoff: Date): Promise<number> {
    const [a]: Array<{ n: number }> = await this.db.query(
      'WITH changed AS (UPDATE trace_ingest_runs SET inline_records = NULL WHERE workspace_id = $1 AND created_at < $2 AND inline_records IS NOT NULL RETURNING 1) SELECT count(*)::int AS n FROM changed',
      [workspaceId, cutoff],
    );
    const [b]: Array<{ n: number }> = await this.db.query(
      'WITH changed AS (UPDATE trace_drops SET payload = NULL WHERE workspace_id = $1 AND created_at < $2 AND payload IS NOT NULL RETURNING 1) SELECT count(*)::int AS n FROM changed',
      [workspaceId, cutoff],
    );
    return a.n + b.n;
  }
}
