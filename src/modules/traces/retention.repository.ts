import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';

export interface RetentionRow {
  workspace_id: string;
  dataset_id: string | null;
  retention_days: number | null;
  updated_at: Date;
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

  /** Every retention setting (of one workspace, or all): workspace defaults and datasets' own. */
  settings(workspaceId: string | null): Promise<RetentionRow[]> {
    return this.db.query(
      'SELECT workspace_id, dataset_id, retention_days, updated_at FROM trace_retention WHERE ($1::uuid IS NULL OR workspace_id = $1)',
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
