import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { CustomOpRevisionEntity } from './entities/custom-op-revision.entity.js';
import { CustomOpEntity, type CustomOpState } from './entities/custom-op.entity.js';
import { RegistryOpEntity } from './entities/registry-op.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { entityList, entityPage, sameText } from '#libs/database/typed-fragments.js';
import { trackedRecord } from '#libs/queue/tracked-job.js';

/** The record a custom op's health check settles (its `revision_id`): the queue keeps its tracked columns. */
export const CUSTOM_OP_REVISIONS = trackedRecord('custom_op_revisions', 'revision_id');

/** Registered op versions, custom ops and their revisions: queries only. */
@Injectable()
export class OpsRepository {
  constructor(private readonly db: Db) {}

  private get ops() {
    return this.db.repository(RegistryOpEntity);
  }

  private get customOps() {
    return this.db.repository(CustomOpEntity);
  }

  /** Every version of every registered op of the workspace, newest version first per name. */
  registered(workspaceId: string): Promise<RegistryOpEntity[]> {
    return entityList(
      this.db,
      this.ops,
      (q) => q.selectFrom('registry_ops').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('op_version', 'desc'),
    );
  }

  async versionsOf(workspaceId: string, name: string): Promise<RegistryOpEntity[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('registry_ops')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => sameText(eb, 'name', name))
        .orderBy('op_version', 'desc'),
    );
    return entitiesFrom(this.ops, rows);
  }

  async insertOpVersion(
    op: Pick<
      RegistryOpEntity,
      'workspaceId' | 'name' | 'kind' | 'description' | 'paramsSchema' | 'customOpId' | 'createdBy'
    >,
  ): Promise<RegistryOpEntity> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('registry_ops')
        .select(sql<number>`coalesce(max(op_version), 0) + 1`.as('next'))
        .where('workspace_id', '=', op.workspaceId)
        .where((eb) => sameText(eb, 'name', op.name)),
    );
    const repo = this.ops;
    return repo.save(repo.create({ ...op, opVersion: rows[0].next }));
  }

  async customOpsByIds(ids: string[]): Promise<CustomOpEntity[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) => q.selectFrom('custom_ops').selectAll().where('id', 'in', ids));
    return entitiesFrom(this.customOps, rows);
  }

  pageCustomOps(
    workspaceId: string,
    state: CustomOpState | undefined,
    window: { skip: number; take: number },
  ): Promise<[CustomOpEntity[], number]> {
    return entityPage(
      this.db,
      this.customOps,
      (q) =>
        q
          .selectFrom('custom_ops')
          .where('workspace_id', '=', workspaceId)
          .$if(state !== undefined, (query) => query.where('state', '=', state!)),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
      window,
    );
  }

  async findCustomOp(workspaceId: string, name: string, lock = false): Promise<CustomOpEntity | null> {
    const rows = await this.db.typed((q) => {
      const query = q
        .selectFrom('custom_ops')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => sameText(eb, 'name', name));
      return lock ? query.forUpdate() : query;
    });
    return entitiesFrom(this.customOps, rows)[0] ?? null;
  }

  /** Workspace-free, for the health check resolving its job's custom op. */
  findCustomOpForUpdateUnscoped(id: string): Promise<CustomOpEntity | null> {
    return this.customOps.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  saveCustomOp(op: Partial<CustomOpEntity>): Promise<CustomOpEntity> {
    const repo = this.customOps;
    return repo.save(repo.create(op));
  }

  async deleteCustomOp(id: string): Promise<void> {
    await this.customOps.delete({ id });
  }

  revisions(customOpId: string): Promise<CustomOpRevisionEntity[]> {
    return entityList(
      this.db,
      this.db.repository(CustomOpRevisionEntity),
      (q) => q.selectFrom('custom_op_revisions').where('custom_op_id', '=', customOpId),
      (query) => query.orderBy('revision', 'desc'),
    );
  }

  saveRevision(revision: Partial<CustomOpRevisionEntity>): Promise<CustomOpRevisionEntity> {
    const repo = this.db.repository(CustomOpRevisionEntity);
    return repo.save(repo.create(revision));
  }

  findRevision(customOpId: string, revision: number): Promise<CustomOpRevisionEntity | null> {
    return this.db.repository(CustomOpRevisionEntity).findOne({ where: { customOpId, revision } });
  }

  /** Marks earlier revisions that were active (or still being checked) as superseded once a later one is. */
  async supersedeBefore(customOpId: string, revision: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('custom_op_revisions')
        .set({ superseded_at: sql`now()` })
        .where('custom_op_id', '=', customOpId)
        .where('revision', '<', revision)
        .where('superseded_at', 'is', null)
        .where('state', 'in', ['queued', 'running', 'succeeded']),
    );
  }

  async markSuperseded(id: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('custom_op_revisions')
        .set((eb) => ({ superseded_at: eb.fn.coalesce('superseded_at', sql<Date>`now()`) }))
        .where('id', '=', id),
    );
  }

  /** The names (lower case) of the registered ops this custom op serves. */
  async opNamesServedBy(workspaceId: string, customOpId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('registry_ops')
        .select((eb) => eb.fn<string>('lower', ['name']).as('name'))
        .distinct()
        .where('workspace_id', '=', workspaceId)
        .where('custom_op_id', '=', customOpId),
    );
    return rows.map((r) => r.name);
  }
}
