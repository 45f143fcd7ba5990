import { Injectable } from '@nestjs/common';
import { entityPage } from '#libs/database/typed-fragments.js';
import { sql } from 'kysely';
import { JudgeEntity } from '../entities/judge.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';

@Injectable()
export class JudgesRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(JudgeEntity);
  }

  page(
    workspaceId: string,
    provider: string | undefined,
    window: { skip: number; take: number },
  ): Promise<[JudgeEntity[], number]> {
    return entityPage(
      this.db,
      this.repo,
      (q) =>
        q
          .selectFrom('judges')
          .where('workspace_id', '=', workspaceId)
          .$if(!!provider, (query) => query.where('provider', '=', provider!)),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
      window,
    );
  }

  find(workspaceId: string, id: string): Promise<JudgeEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string): Promise<JudgeEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(this.db, 'judges', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  /** What refers to the judge: metric config versions and eval configs, by name. */
  async references(id: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('metric_configs')
        .select((eb) =>
          sql<string>`'metric config ' || ${eb.ref('name')} || ' v' || ${eb.ref('config_version')}`.as('ref'),
        )
        .where('judge_id', '=', id)
        .unionAll((eb) =>
          eb
            .selectFrom('eval_configs')
            .select((e) => sql<string>`'eval config ' || ${e.ref('name')}`.as('ref'))
            .where('default_judge_id', '=', id),
        )
        .orderBy('ref')
        .limit(20),
    );
    return rows.map((r) => r.ref);
  }

  save(judge: Partial<JudgeEntity>): Promise<JudgeEntity> {
    const repo = this.repo;
    return repo.save(repo.create(judge));
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }
}
