import { Injectable } from '@nestjs/common';
import type { ExpressionBuilder, SelectQueryBuilder } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { entityColumns, entityPage } from '#libs/database/typed-fragments.js';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { Db } from '#libs/database/unit-of-work.js';
import { AuditEventEntity } from './audit-event.entity.js';

/** What a read of the audit log asks for; every member but the scope is optional. */
export interface AuditFilter {
  /** A workspace's events, or (null) the system's: those recorded with no workspace. */
  workspaceId: string | null;
  actorId?: string;
  action?: string;
  /** The action starts with it (`member.`, `api_key`). */
  actionPrefix?: string;
  targetType?: string;
  targetId?: string;
  /** Recorded at or after. */
  from?: Date;
  /** Recorded before. */
  to?: Date;
}

/** Events older than `cutoff`: of one workspace, or of the system and every workspace but `except`. */
export type AuditExpiry =
  { workspaceId: string; cutoff: Date } | { workspaceId: null; except: readonly string[]; cutoff: Date };

type Events = SelectQueryBuilder<DB, 'audit_events', object>;

/** A LIKE pattern matching what starts with `prefix`, its own `%`, `_` and `\` taken literally. */
const startsWith = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function matching(query: Events, filter: AuditFilter): Events {
  return query
    .where('audit_events.workspace_id', filter.workspaceId === null ? 'is' : '=', filter.workspaceId)
    .$if(filter.actorId !== undefined, (s) => s.where('audit_events.actor_id', '=', filter.actorId!))
    .$if(filter.action !== undefined, (s) => s.where('audit_events.action', '=', filter.action!))
    .$if(filter.actionPrefix !== undefined, (s) =>
      s.where('audit_events.action', 'like', startsWith(filter.actionPrefix!)),
    )
    .$if(filter.targetType !== undefined, (s) => s.where('audit_events.target_type', '=', filter.targetType!))
    .$if(filter.targetId !== undefined, (s) => s.where('audit_events.target_id', '=', filter.targetId!))
    .$if(filter.from !== undefined, (s) => s.where('audit_events.created_at', '>=', filter.from!))
    .$if(filter.to !== undefined, (s) => s.where('audit_events.created_at', '<', filter.to!));
}

/** Older than the event `after` (newest first, the id breaking ties): the event's own time, read in the statement, keeps its microseconds. */
function olderThan(after: string, workspaceId: string | null) {
  return (eb: ExpressionBuilder<DB, 'audit_events'>) =>
    eb(
      eb.refTuple('audit_events.created_at', 'audit_events.id'),
      '<',
      eb
        .selectFrom('audit_events as c')
        .select(['c.created_at', 'c.id'])
        .where('c.id', '=', after)
        .where('c.workspace_id', workspaceId === null ? 'is' : '=', workspaceId)
        .$asTuple('created_at', 'id'),
    );
}

@Injectable()
export class AuditRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(AuditEventEntity);
  }

  async insert(event: Partial<AuditEventEntity>): Promise<AuditEventEntity> {
    const repo = this.repo;
    return repo.save(repo.create(event));
  }

  /** Newest first; `before` pages back in time. */
  async findByTarget(
    targetType: string,
    targetId: string,
    options: { skip: number; take: number; before?: Date },
  ): Promise<[AuditEventEntity[], number]> {
    const { before, ...window } = options;
    return entityPage(
      this.db,
      this.repo,
      (q) =>
        q
          .selectFrom('audit_events')
          .where('target_type', '=', targetType)
          .where('target_id', '=', targetId)
          .$if(before !== undefined, (query) => query.where('created_at', '<', before!)),
      (query) => query.orderBy('created_at', 'desc').orderBy('id', 'desc'),
      window,
    );
  }

  /** Up to `limit` events the filter matches, newest first, older than the event `after` when given. */
  @GenerateSql(
    { name: 'a workspace, first page', params: [{ workspaceId: DummyValue.UUID }, null, 51] },
    {
      name: 'every filter, after a cursor',
      params: [
        {
          workspaceId: DummyValue.UUID,
          actorId: DummyValue.UUID2,
          actionPrefix: 'member.',
          targetType: 'user',
          targetId: DummyValue.UUID2,
          from: DummyValue.DATE,
          to: DummyValue.DATE,
        },
        DummyValue.UUID2,
        51,
      ],
    },
    { name: 'the system', params: [{ workspaceId: null }, null, 51] },
  )
  async page(filter: AuditFilter, after: string | null, limit: number): Promise<AuditEventEntity[]> {
    const repo = this.repo;
    const rows = await this.db.typed((q) =>
      matching(q.selectFrom('audit_events'), filter)
        .$if(after !== null, (s) => s.where(olderThan(after!, filter.workspaceId)))
        .select(entityColumns(repo, 'audit_events'))
        .orderBy('audit_events.created_at', 'desc')
        .orderBy('audit_events.id', 'desc')
        .limit(limit),
    );
    return entitiesFrom(repo, rows);
  }

  /** Whether the event is in the log of `workspaceId` (null: the system's). */
  async exists(workspaceId: string | null, id: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('audit_events')
        .select('id')
        .where('id', '=', id)
        .where('workspace_id', workspaceId === null ? 'is' : '=', workspaceId),
    );
    return rows.length > 0;
  }

  /** Deletes up to `limit` expired events, answering the workspace of each (null: the system's). */
  @GenerateSql(
    { name: 'a workspace', params: [{ workspaceId: DummyValue.UUID, cutoff: DummyValue.DATE }, 5000] },
    {
      name: 'the default, but for workspaces of their own',
      params: [{ workspaceId: null, except: [DummyValue.UUID2], cutoff: DummyValue.DATE }, 5000],
    },
  )
  async deleteExpired(expiry: AuditExpiry, limit: number): Promise<Array<string | null>> {
    const except = expiry.workspaceId === null ? [...expiry.except] : [];
    const rows = await this.db.typed((q) =>
      q
        .deleteFrom('audit_events')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('audit_events as e')
            .select('e.id')
            .where('e.created_at', '<', expiry.cutoff)
            .$if(expiry.workspaceId !== null, (s) => s.where('e.workspace_id', '=', expiry.workspaceId!))
            .$if(except.length > 0, (s) =>
              s.where((w) => w.or([w('e.workspace_id', 'is', null), w('e.workspace_id', 'not in', except)])),
            )
            .limit(limit),
        )
        .returning('workspace_id'),
    );
    return rows.map((r) => r.workspace_id);
  }
}
