import { Injectable } from '@nestjs/common';
import { AccessCache } from '../../../libs/auth/access-cache.js';
import type { WorkspaceRole } from '../../../libs/auth/roles.js';
import { WorkspaceEntity, type EmbeddingConfigValue } from './entities/workspace.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { containsPattern } from '../../../libs/database/like.js';

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

  private viewQuery(userId: string) {
    return this.repo
      .createQueryBuilder('w')
      .leftJoin('workspace_members', 'm', 'm.workspace_id = w.id AND m.user_id = :userId', { userId })
      .addSelect('m.role', 'caller_role')
      .addSelect('(SELECT count(*) FROM workspace_members c WHERE c.workspace_id = w.id)::int', 'member_count');
  }

  private static toView(
    entities: WorkspaceEntity[],
    raw: Array<{ caller_role: WorkspaceRole | null; member_count: number }>,
  ): WorkspaceView[] {
    return entities.map((workspace, i) => ({
      workspace,
      role: raw[i].caller_role ?? null,
      memberCount: Number(raw[i].member_count),
    }));
  }

  async list(
    userId: string,
    filter: { q?: string; onlyMine: boolean; only?: string },
    sort: { column: string; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ): Promise<[WorkspaceView[], number]> {
    const qb = this.viewQuery(userId);
    if (filter.onlyMine) qb.andWhere('m.user_id IS NOT NULL');
    if (filter.only) qb.andWhere('w.id = :only', { only: filter.only });
    if (filter.q) qb.andWhere('lower(w.name) LIKE :pattern', { pattern: containsPattern(filter.q.toLowerCase()) });
    const total = await qb.getCount();
    const { entities, raw } = await qb
      .orderBy(sort.column, sort.direction)
      .addOrderBy('w.id', 'ASC')
      .offset(window.skip)
      .limit(window.take)
      .getRawAndEntities();
    return [WorkspacesRepository.toView(entities, raw), total];
  }

  async findView(id: string, userId: string): Promise<WorkspaceView | null> {
    const { entities, raw } = await this.viewQuery(userId).where('w.id = :id', { id }).getRawAndEntities();
    return entities.length ? WorkspacesRepository.toView(entities, raw)[0] : null;
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
