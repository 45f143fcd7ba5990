import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { EvalConfigEntity } from './entities/eval-config.entity.js';

@Injectable()
export class EvalConfigsRepository {
  constructor(@InjectRepository(EvalConfigEntity) private readonly repo: Repository<EvalConfigEntity>) {}

  page(workspaceId: string, q: string | undefined, window: { skip: number; take: number }): Promise<[EvalConfigEntity[], number]> {
    const query = this.repo.createQueryBuilder('e').where('e.workspace_id = :workspaceId', { workspaceId });
    if (q) query.andWhere(`e.name ILIKE :q ESCAPE '\\'`, { q: `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` });
    return query.orderBy('lower(e.name)').addOrderBy('e.id').skip(window.skip).take(window.take).getManyAndCount();
  }

  find(workspaceId: string, id: string, manager?: EntityManager): Promise<EvalConfigEntity | null> {
    return (manager ?? this.repo.manager).getRepository(EvalConfigEntity).findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string, manager: EntityManager): Promise<EvalConfigEntity | null> {
    return manager.getRepository(EvalConfigEntity).findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | null, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query('SELECT 1 FROM eval_configs WHERE workspace_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3', [workspaceId, name, exceptId]);
    return rows.length > 0;
  }

  async workspaceOf(id: string): Promise<string | null> {
    const rows: Array<{ workspace_id: string }> = await this.repo.query('SELECT workspace_id FROM eval_configs WHERE id = $1', [id]);
    return rows[0]?.workspace_id ?? null;
  }

  save(config: Partial<EvalConfigEntity>, manager: EntityManager): Promise<EvalConfigEntity> {
    const repo = manager.getRepository(EvalConfigEntity);
    return repo.save(repo.create(config));
  }

  async delete(id: string, manager: EntityManager): Promise<void> {
    await manager.getRepository(EvalConfigEntity).delete({ id });
  }
}
