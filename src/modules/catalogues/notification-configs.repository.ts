import { Injectable } from '@nestjs/common';
import { NotificationConfigEntity } from './entities/notification-config.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';

@Injectable()
export class NotificationConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(NotificationConfigEntity);
  }

  page(workspaceId: string, window: { skip: number; take: number }): Promise<[NotificationConfigEntity[], number]> {
    return this.repo.findAndCount({ where: { workspaceId }, order: { name: 'ASC', id: 'ASC' }, ...window });
  }

  async nameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'notification_configs', { column: 'workspace_id', value: workspaceId }, name);
  }

  findForUpdate(workspaceId: string, id: string): Promise<NotificationConfigEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async insert(config: Partial<NotificationConfigEntity>): Promise<NotificationConfigEntity> {
    const repo = this.repo;
    return repo.save(repo.create(config));
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }

  /** Enabled configs of the workspace that want this event. */
  subscribed(workspaceId: string, event: string): Promise<NotificationConfigEntity[]> {
    return this.repo
      .createQueryBuilder('c')
      .where('c.workspace_id = :workspaceId AND c.enabled AND :event = ANY(c.events)', { workspaceId, event })
      .orderBy('c.name')
      .getMany();
  }

  async insertDelivery(d: {
    id: string;
    workspaceId: string;
    configId: string;
    event: string;
    payload: Record<string, unknown>;
  }): Promise<void> {
    await this.db.query(
      'INSERT INTO notification_deliveries (id, workspace_id, config_id, event, payload) VALUES ($1, $2, $3, $4, $5)',
      [d.id, d.workspaceId, d.configId, d.event, JSON.stringify(d.payload)],
    );
  }

  async delivery(id: string): Promise<DeliveryRow | null> {
    const rows: DeliveryRow[] = await this.repo.query(
      `SELECT d.id, d.workspace_id, d.event, d.payload, d.status, d.attempts, d.last_status_code, c.url, c.secret_id
         FROM notification_deliveries d JOIN notification_configs c ON c.id = d.config_id WHERE d.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async recordAttempt(
    id: string,
    outcome: {
      attempts: number;
      statusCode: number | null;
      error: string | null;
      final: 'delivered' | 'failed' | null;
    },
  ): Promise<void> {
    await this.repo.query(
      `UPDATE notification_deliveries SET attempts = $2, last_status_code = $3, last_error = $4, status = coalesce($5, status), delivered_at = CASE WHEN $5 = 'delivered' THEN now() ELSE delivered_at END WHERE id = $1`,
      [id, outcome.attempts, outcome.statusCode, outcome.error, outcome.final],
    );
  }

  /** Recent deliveries of a config, newest first. */
  deliveries(
    configId: string,
    limit: number,
  ): Promise<
    Array<
      Omit<DeliveryRow, 'url' | 'secret_id' | 'workspace_id' | 'payload'> & {
        created_at: Date;
        delivered_at: Date | null;
        last_error: string | null;
      }
    >
  > {
    return this.repo.query(
      'SELECT id, event, status, attempts, last_status_code, last_error, created_at, delivered_at FROM notification_deliveries WHERE config_id = $1 ORDER BY created_at DESC LIMIT $2',
      [configId, limit],
    );
  }
}

export interface DeliveryRow {
  id: string;
  workspace_id: string;
  event: string;
  payload: Record<string, unknown>;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  url: string;
  secret_id: string;
}
