import { Injectable } from '@nestjs/common';
import { EvalConfigEntity } from './entities/eval-config.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';
import { containsPattern } from '../../../libs/database/like.js';

@Injectable()
export class EvalConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(EvalConfigEntity);
  }

  page(
    workspaceId: string,
    q: string | undefined,
    window: { skip: number; take: number },
  ): Promise<[EvalConfigEntity[], number]> {
    const query = this.repo.createQueryBuilder('e').where('e.workspace_id = :workspaceId', { workspaceId });
    if (q) query.andWhere(`e.name ILIKE :q ESCAPE '\\'`, { q: containsPattern(q) });
    return query.orderBy('lower(e.name)').addOrderBy('e.id').skip(window.skip).take(window.take).getManyAndCount();
  }

  find(workspaceId: string, id: string): Promise<EvalConfigEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string): Promise<EvalConfigEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(this.db, 'eval_configs', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  save(config: Partial<EvalConfigEntity>): Promise<EvalConfigEntity> {
    const repo = this.repo;
    return repo.save(repo.create(config));
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }
}
