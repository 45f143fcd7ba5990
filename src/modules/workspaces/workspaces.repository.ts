import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { AccessCache } from '#libs/auth/access-cache.js';
import type { WorkspaceRole } from '#libs/auth/roles.js';
import { WorkspaceEntity, type EmbeddingConfigValue } from './entities/workspace.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { containsPattern } from '#libs/database/like.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { sorted } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';

/** What the workspace list sorts by: names case-insensitively. */
export type WorkspaceSort = 'name' | 'created_at';

/** Workspaces with the caller's membership (`m`) beside each, when they have one. */
function withMembership(q: QueryBuilder, userId: string) {
  return q
    .selectFrom('workspaces as w')
    .leftJoin('workspace_members as m', (join) =>
      join.onRef('m.workspace_id', '=', 'w.id').on('m.user_id', '=', userId),
    );
}

/** A workspace as one caller sees it: with their role and the member count. */
export interface WorkspaceView {
  workspace: WorkspaceEntity;
  role: WorkspaceRole | null;
  memberCount: number;
}

@Injectable()
export class WorkspacesRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  private get repo() {
    return this.db.repository(WorkspaceEntity);
  }

  /** The matching workspaces' columns, the caller's role and the member count, as views. */
  private async views(matching: (q: QueryBuilder) => ReturnType<typeof withMembership>): Promise<WorkspaceView[]> {
    const rows = await this.db.typed((q) =>
      matching(q)
        .selectAll('w')
        .select('m.role as caller_role')
        .select((eb) =>
          eb
            .selectFrom('workspace_members as c')
            .select(sql<number>`count(*)::int`.as('count'))
            .whereRef('c.workspace_id', '=', 'w.id')
            .as('member_count'),
        ),
    );
    const entities = entitiesFrom(this.repo, rows);
    return entities.map((workspace, i) => ({
      workspace,
      role: (rows[i].caller_role as WorkspaceRole | null) ?? null,
      memberCount: Number(rows[i].member_count),
    }));
  }

  async list(
    userId: string,
    filter: { q?: string; onlyMine: boolean; only?: string },
    sort: { column: WorkspaceSort; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ): Promise<[WorkspaceView[], number]> {
    const { onlyMine, only, q: text } = filter;
    const matching = (q: QueryBuilder) => {
      let query = withMembership(q, userId);
      if (onlyMine) query = query.where('m.user_id', 'is not', null);
      if (only) query = query.where('w.id', '=', only);
      if (text)
        query = query.where((eb) => eb(eb.fn('lower', ['w.name']), 'like', containsPattern(text.toLowerCase())));
      return query;
    };
    const [{ total }] = await this.db.typed((q) =>
      matching(q).select((eb) => eb.fn.count<string>('w.id').distinct().as('total')),
    );
    const views = await this.views((q) =>
      sorted(
        matching(q),
        { column: `w.${sort.column}`, direction: sort.direction, lower: sort.column === 'name' },
        'w.id',
      )
        .offset(window.skip)
        .limit(window.take),
    );
    return [views, Number(total)];
  }

  async findView(id: string, userId: string): Promise<WorkspaceView | null> {
    const [view] = await this.views((q) => withMembership(q, userId).where('w.id', '=', id));
    return view ?? null;
  }

  findByIdForUpdate(id: string): Promise<WorkspaceEntity | null> {
    return this.repo.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The workspace's embedding choice, null when there is no such workspace. */
  async embeddingConfig(id: string): Promise<EmbeddingConfigValue | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspaces')
        .select('embedding_config')
        .where('id', '=', id)
        // The object the service wrote (WorkspaceEntity.embeddingConfig): the schema knows it as JSON only.
        .$castTo<{ embedding_config: EmbeddingConfigValue }>(),
    );
    return rows[0]?.embedding_config ?? null;
  }

  /** Locks the workspace row until the unit of work ends. */
  async lock(id: string): Promise<void> {
    await this.db.typed((q) => q.selectFrom('workspaces').select('id').where('id', '=', id).forUpdate());
  }

  create(workspace: Pick<WorkspaceEntity, 'name' | 'description' | 'createdBy'>): Promise<WorkspaceEntity> {
    const repo = this.repo;
    return repo.save(repo.create({ ...workspace, embeddingConfig: { provider: 'local' } }));
  }

  save(workspace: WorkspaceEntity): Promise<WorkspaceEntity> {
    return this.repo.save(workspace);
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
    this.access.changed({ workspace: id });
  }
}
