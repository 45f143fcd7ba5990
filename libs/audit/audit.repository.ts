import { Injectable } from '@nestjs/common';
import { LessThan } from 'typeorm';
import { Db } from '../database/unit-of-work.js';
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
    return this.repo.findAndCount({
      where: { targetType, targetId, ...(before ? { createdAt: LessThan(before) } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...window,
    });
  }

  async findByWorkspace(
    workspaceId: string,
    options: { skip: number; take: number; action?: string },
  ): Promise<[AuditEventEntity[], number]> {
    return this.repo.findAndCount({
      where: { workspaceId, ...(options.action ? { action: options.action } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: options.skip,
      take: options.take,
    });
  }
}
