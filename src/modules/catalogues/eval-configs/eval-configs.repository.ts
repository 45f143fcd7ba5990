import { Injectable } from '@nestjs/common';
import { EvalConfigEntity } from '../entities/eval-config.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { containsText, entityPage, type PageWindow } from '#libs/database/typed-fragments.js';

@Injectable()
export class EvalConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(EvalConfigEntity);
  }

  page(workspaceId: string, q: string | undefined, window: PageWindow): Promise<[EvalConfigEntity[], number]> {
    return entityPage(
      this.db,
      this.repo,
      (b) =>
        b
          .selectFrom('eval_configs')
          .where('workspace_id', '=', workspaceId)
          .$if(!!q, (w) => w.where((eb) => containsText(eb, 'name', q!))),
      (matching) => matching.orderBy((eb) => eb.fn('lower', ['name'])).orderBy('id'),
      window,
    );
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
