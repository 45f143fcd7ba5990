import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { CustomOpRevisionEntity } from './entities/custom-op-revision.entity.js';
import { CustomOpEntity, type CustomOpState } from './entities/custom-op.entity.js';
import { RegistryOpEntity } from './entities/registry-op.entity.js';

/** Registered op versions, custom ops and their revisions: queries only. */
@Injectable()
export class OpsRepository {
  constructor(
    @InjectRepository(RegistryOpEntity) private readonly ops: Repository<RegistryOpEntity>,
    @InjectRepository(CustomOpEntity) private readonly customOps: Repository<CustomOpEntity>,
  ) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.ops.manager;
  }

  /** Every version of every registered op of the workspace, newest version first per name. */
  registered(workspaceId: string, manager?: EntityManager): Promise<RegistryOpEntity[]> {
    return this.m(manager).getRepository(RegistryOpEntity).find({ where: { workspaceId }, order: { name: 'ASC', opVersion: 'DESC' } });
  }

  versionsOf(workspaceId: string, name: string, manager?: EntityManager): Promise<RegistryOpEntity[]> {
    return this.m(manager).getRepository(RegistryOpEntity).createQueryBuilder('o').where('o.workspace_id = :workspaceId AND lower(o.name) = lower(:name)', { workspaceId, name }).orderBy('o.op_version', 'DESC').getMany();
  }

  async insertOpVersion(op: Pick<RegistryOpEntity, 'workspaceId' | 'name' | 'kind' | 'description' | 'paramsSchema' | 'customOpId' | 'createdBy'>, manager: EntityManager): Promise<RegistryOpEntity> {
    const rows: Array<{ next: number }> = await manager.query('SELECT coalesce(max(op_version), 0) + 1 AS next FROM registry_ops WHERE workspace_id = $1 AND lower(name) = lower($2)', [op.workspaceId, op.name]);
    const repo = manager.getRepository(RegistryOpEntity);
    return repo.save(repo.create({ ...op, opVersion: rows[0].next }));
  }

  customOpsByIds(ids: string[], manager?: EntityManager): Promise<CustomOpEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m(manager).getRepository(CustomOpEntity).createQueryBuilder('c').where('c.id IN (:...ids)', { ids }).getMany();
  }

  pageCustomOps(workspaceId: string, state: CustomOpState | undefined, window: { skip: number; take: number }): Promise<[CustomOpEntity[], number]> {
    return this.customOps.findAndCount({ where: { workspaceId, ...(state ? { state } : {}) }, order: { name: 'ASC', id: 'ASC' }, ...window });
  }

  findCustomOp(workspaceId: string, name: string, manager?: EntityManager, lock = false): Promise<CustomOpEntity | null> {
    const query = this.m(manager).getRepository(CustomOpEntity).createQueryBuilder('c').where('c.workspace_id = :workspaceId AND lower(c.name) = lower(:name)', { workspaceId, name });
    if (lock) query.setLock('pessimistic_write');
    return query.getOne();
  }

  findCustomOpById(id: string, manager: EntityManager): Promise<CustomOpEntity | null> {
    return manager.getRepository(CustomOpEntity).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  saveCustomOp(op: Partial<CustomOpEntity>, manager: EntityManager): Promise<CustomOpEntity> {
    const repo = manager.getRepository(CustomOpEntity);
    return repo.save(repo.create(op));
  }

  async deleteCustomOp(id: string, manager: EntityManager): Promise<void> {
    await manager.getRepository(CustomOpEntity).delete({ id });
  }

  revisions(customOpId: string, manager?: EntityManager): Promise<CustomOpRevisionEntity[]> {
    return this.m(manager).getRepository(CustomOpRevisionEntity).find({ where: { customOpId }, order: { revision: 'DESC' } });
  }

  saveRevision(revision: Partial<CustomOpRevisionEntity>, manager: EntityManager): Promise<CustomOpRevisionEntity> {
    const repo = manager.getRepository(CustomOpRevisionEntity);
    return repo.save(repo.create(revision));
  }

  findRevision(customOpId: string, revision: number, manager: EntityManager): Promise<CustomOpRevisionEntity | null> {
    return manager.getRepository(CustomOpRevisionEntity).findOne({ where: { customOpId, revision } });
  }

  /** Marks earlier revisions that were active as superseded once a later one is. */
  async supersedeBefore(customOpId: string, revision: number, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE custom_op_revisions SET outcome = 'superseded' WHERE custom_op_id = $1 AND revision < $2 AND outcome IN ('active', 'deploying')`, [customOpId, revision]);
  }

  /** Metric config versions that score with any op this custom op serves. */
  async metricConfigsUsing(workspaceId: string, customOpId: string, manager: EntityManager): Promise<string[]> {
    const rows: Array<{ ref: string }> = await manager.query(
      `SELECT DISTINCT m.name || ' v' || m.config_version AS ref FROM metric_configs m
       JOIN registry_ops o ON o.workspace_id = m.workspace_id AND lower(o.name) = lower(m.metric)
       WHERE m.workspace_id = $1 AND m.kind = 'custom' AND o.custom_op_id = $2 ORDER BY 1 LIMIT 20`,
      [workspaceId, customOpId],
    );
    return rows.map((r) => r.ref);
  }
}
