import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';

const COLUMNS = ['workspace_id', 'dataset_id', 'retention_days', 'updated_at'] as const;

export type RetentionRow = Pick<Selectable<DB['trace_retention']>, (typeof COLUMNS)[number]>;

const count = sql<number>`count(*)::int`.as('n');

/** `trace_retention`, and the deletions the retention sweep makes: queries only. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly db: Db) {}

  async find(workspaceId: string, datasetId: string | null): Promise<RetentionRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_retention')
        .select(COLUMNS)
        .where('workspace_id', '=', workspaceId)
        .where('dataset_id', 'is not distinct from', datasetId),
    );
    return rows[0] ?? null;
  }

  listForWorkspace(workspaceId: string): Promise<RetentionRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_retention')
        .select(COLUMNS)
        .where('workspace_id', '=', workspaceId)
        .orderBy('dataset_id', (o) => o.asc().nullsFirst()),
    );
  }

  async put(workspaceId: string, datasetId: string | null, days: number | null, userId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('trace_retention')
        .values({ workspace_id: workspaceId, dataset_id: datasetId, retention_days: days, updated_by: userId })
        .onConflict((oc) =>
          oc
            .expression(sql`workspace_id, COALESCE(dataset_id, '00000000-0000-0000-0000-000000000000'::uuid)`)
            .doUpdateSet((eb) => ({
              retention_days: eb.ref('excluded.retention_days'),
              updated_by: eb.ref('excluded.updated_by'),
              updated_at: sql<Date>`now()`,
            })),
        ),
    );
  }

  async remove(workspaceId: string, datasetId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q.deleteFrom('trace_retention').where('workspace_id', '=', workspaceId).where('dataset_id', '=', datasetId),
    );
  }

  /** Every retention setting (of one workspace, or all): workspace defaults and datasets' own. */
  settings(workspaceId: string | null): Promise<RetentionRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_retention')
        .select(COLUMNS)
        .$if(workspaceId !== null, (s) => s.where('workspace_id', '=', workspaceId!)),
    );
  }

  /** Workspaces whose default retention is set (their uploads and ingest payloads expire). */
  workspaceDefaults(workspaceId: string | null): Promise<Array<{ workspace_id: string; retention_days: number }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_retention')
        .select(['workspace_id', 'retention_days'])
        .where('dataset_id', 'is', null)
        .where('retention_days', 'is not', null)
        .$if(workspaceId !== null, (s) => s.where('workspace_id', '=', workspaceId!))
        .orderBy('workspace_id')
        .$narrowType<{ retention_days: number }>(),
    );
  }

  /** Uploads of a workspace received before `cutoff`: their rows are deleted here, and their files by the caller. */
  async deleteUploadsBefore(workspaceId: string, cutoff: Date): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .deleteFrom('trace_uploads')
        .where('workspace_id', '=', workspaceId)
        .where('created_at', '<', cutoff)
        .returning('path'),
    );
    return rows.map((r) => r.path);
  }

  /** Clears the records landings kept (inline bodies, dropped records' payloads) before `cutoff`; the counts and reasons stay. */
  async clearPayloadsBefore(workspaceId: string, cutoff: Date): Promise<number> {
    const [a] = await this.db.typed((q) =>
      q
        .with('changed', (w) =>
          w
            .updateTable('trace_ingest_runs')
            .set({ inline_records: null })
            .where('workspace_id', '=', workspaceId)
            .where('created_at', '<', cutoff)
            .where('inline_records', 'is not', null)
            .returning('id'),
        )
        .selectFrom('changed')
        .select(count),
    );
    const [b] = await this.db.typed((q) =>
      q
        .with('changed', (w) =>
          w
            .updateTable('trace_drops')
            .set({ payload: null })
            .where('workspace_id', '=', workspaceId)
            .where('created_at', '<', cutoff)
            .where('payload', 'is not', null)
            .returning('id'),
        )
        .selectFrom('changed')
        .select(count),
    );
    return a.n + b.n;
  }

  /** Deletes the end users' feedback posted before `cutoff` (comments and end-user ids are kept no longer than the traces). */
  async deleteFeedbackBefore(workspaceId: string, cutoff: Date): Promise<number> {
    const rows = await this.db.typed((q) =>
      q
        .deleteFrom('trace_feedback')
        .where('workspace_id', '=', workspaceId)
        .where('created_at', '<', cutoff)
        .returning('id'),
    );
    return rows.length;
  }

  /** Deletes the dataset's trace scores whose trace started before `cutoff` (they go with the spans they score). */
  async deleteScoresBefore(workspaceId: string, datasetId: string, cutoff: Date): Promise<number> {
    const rows = await this.db.typed((q) =>
      q
        .deleteFrom('trace_scores')
        .where('workspace_id', '=', workspaceId)
        .where('dataset_id', '=', datasetId)
        .where('observed_at', '<', cutoff)
        .returning('id'),
    );
    return rows.length;
  }
}
