import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';

export type AuditRetentionRow = Selectable<DB['audit_retention']>;

/** `audit_retention`: how long each workspace that set one keeps its audit events. Queries only. */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly db: Db) {}

  async retention(workspaceId: string): Promise<AuditRetentionRow | null> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('audit_retention').selectAll().where('workspace_id', '=', workspaceId),
    );
    return rows[0] ?? null;
  }

  /** Every workspace's own setting, for the sweep. */
  allRetentions(): Promise<Array<Pick<AuditRetentionRow, 'workspace_id' | 'retention_days'>>> {
    return this.db.typed((q) =>
      q.selectFrom('audit_retention').select(['workspace_id', 'retention_days']).orderBy('workspace_id'),
    );
  }

  async putRetention(workspaceId: string, days: number, userId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('audit_retention')
        .values({ workspace_id: workspaceId, retention_days: days, updated_by: userId })
        .onConflict((oc) =>
          oc.column('workspace_id').doUpdateSet((eb) => ({
            retention_days: eb.ref('excluded.retention_days'),
            updated_by: eb.ref('excluded.updated_by'),
            updated_at: sql<Date>`now()`,
          })),
        ),
    );
  }

  async removeRetention(workspaceId: string): Promise<void> {
    await this.db.typedWrite((q) => q.deleteFrom('audit_retention').where('workspace_id', '=', workspaceId));
  }
}
