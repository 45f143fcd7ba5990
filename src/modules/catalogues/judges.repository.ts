import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { JudgeEntity } from './entities/judge.entity.js';

@Injectable()
export class JudgesRepository {
  constructor(@InjectRepository(JudgeEntity) private readonly repo: Repository<JudgeEntity>) {}

  page(workspaceId: string, provider: string | undefined, window: { skip: number; take: number }): Promise<[JudgeEntity[], number]> {
    return this.repo.findAndCount({ where: { workspaceId, ...(provider ? { provider: provider as JudgeEntity['provider'] } : {}) }, order: { name: 'ASC', id: 'ASC' }, ...window });
  }

  find(workspaceId: string, id: string, manager?: EntityManager): Promise<JudgeEntity | null> {
    return (manager ?? this.repo.manager).getRepository(JudgeEntity).findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string, manager: EntityManager): Promise<JudgeEntity | null> {
    return manager.getRepository(JudgeEntity).findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | null, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query('SELECT 1 FROM judges WHERE workspace_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3', [workspaceId, name, exceptId]);
    return rows.length > 0;
  }

  async workspaceOf(id: string): Promise<string | null> {
    const rows: Array<{ workspace_id: string }> = await this.repo.query('SELECT workspace_id FROM judges WHERE id = $1', [id]);
    return rows[0]?.workspace_id ?? null;
  }

  /** What refers to the judge: metric config versions and eval configs, by name. */
  async references(id: string, manager: EntityManager): Promise<string[]> {
    const rows: Array<{ ref: string }> = await manager.query(
      `SELECT 'metric config ' || name || ' v' || config_version AS ref FROM metric_configs WHERE judge_id = $1
       UNION ALL SELECT 'eval config ' || name FROM eval_configs WHERE default_judge_id = $1 ORDER BY 1 LIMIT 20`,
      [id],
    );
    return rows.map((r) => r.ref);
  }

  save(judge: Partial<JudgeEntity>, manager: EntityManager): Promise<JudgeEntity> {
    const repo = manager.getRepository(JudgeEntity);
    return repo.save(repo.create(judge));
  }

  async delete(id: string, manager: EntityManager): Promise<void> {
    await manager.getRepository(JudgeEntity).delete({ id });
  }
}
