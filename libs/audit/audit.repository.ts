import { Injectable } from '@nestjs/common';
import { entityPage } from '#libs/database/typed-fragments.js';
import { Db } from '#libs/database/unit-of-work.js';
import { AuditEventEntity } from './audit-event.entity.js';

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
}
