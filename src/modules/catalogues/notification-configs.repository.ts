import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { NotificationConfigEntity } from './entities/notification-config.entity.js';

@Injectable()
export class NotificationConfigsRepository {
  constructor(@InjectRepository(NotificationConfigEntity) private readonly repo: Repository<NotificationConfigEntity>) {}

  page(workspaceId: string, window: { skip: number; take: number }): Promise<[NotificationConfigEntity[], number]> {
    return this.repo.findAndCount({ where: { workspaceId }, order: { name: 'ASC', id: 'ASC' }, ...window });
  }

  async nameTaken(workspaceId: string, name: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query('SELECT 1 FROM notification_configs WHERE workspace_id = $1 AND lower(name) = lower($2)', [workspaceId, name]);
    return rows.length > 0;
  }

  async workspaceOf(id: string): Promise<string | null> {
    const rows: Array<{ workspace_id: string }> = await this.repo.query('SELECT workspace_id FROM notification_configs WHERE id = $1', [id]);
    return rows[0]?.workspace_id ?? null;
  }

  findForUpdate(workspaceId: string, id: string, manager: EntityManager): Promise<NotificationConfigEntity | null> {
    return manager.getRepository(NotificationConfigEntity).findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async insert(config: Partial<NotificationConfigEntity>, manager: EntityManager): Promise<NotificationConfigEntity> {
    const repo = manager.getRepository(NotificationConfigEntity);
    return repo.save(repo.create(config));
  }

  async delete(id: string, manager: EntityManager): Promise<void> {
    await manager.getRepository(NotificationConfigEntity).delete({ id });
  }
}
