import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import type { JsonObject, NotificationConfigs, NotificationDeliveries } from '#libs/database/schema.js';
import { NotificationConfigEntity } from '../entities/notification-config.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { entityPage, holds } from '#libs/database/typed-fragments.js';

@Injectable()
export class NotificationConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(NotificationConfigEntity);
  }

  page(workspaceId: string, window: { skip: number; take: number }): Promise<[NotificationConfigEntity[], number]> {
    return entityPage(
      this.db,
      this.repo,
      (q) => q.selectFrom('notification_configs').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
      window,
    );
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
  async subscribed(workspaceId: string, event: string): Promise<NotificationConfigEntity[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('notification_configs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb.ref('enabled'))
        .where((eb) => holds(eb, 'events', event))
        .orderBy('name'),
    );
    return entitiesFrom(this.repo, rows);
  }

  async insertDelivery(d: {
    id: string;
    workspaceId: string;
    configId: string;
    event: string;
    payload: Record<string, unknown>;
  }): Promise<void> {
    await this.db.typedWrite((q) =>
      q.insertInto('notification_deliveries').values({
        id: d.id,
        workspace_id: d.workspaceId,
        config_id: d.configId,
        event: d.event,
        payload: JSON.stringify(d.payload),
      }),
    );
  }

  async delivery(id: string): Promise<DeliveryRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('notification_deliveries as d')
        .innerJoin('notification_configs as c', 'c.id', 'd.config_id')
        .select([
          'd.id',
          'd.workspace_id',
          'd.event',
          'd.payload',
          'd.status',
          'd.attempts',
          'd.last_status_code',
          'c.url',
          'c.secret_id',
        ])
        .where('d.id', '=', id)
        .$narrowType<Pick<DeliveryRow, 'payload' | 'status'>>(),
    );
    return rows[0] ?? null;
  }

  /** Records an attempt; a final outcome settles the status (and the time of a delivery). */
  async recordAttempt(
    id: string,
    outcome: {
      attempts: number;
      statusCode: number | null;
      error: string | null;
      final: Exclude<DeliveryStatus, 'pending'> | null;
    },
  ): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('notification_deliveries')
        .set({
          attempts: outcome.attempts,
          last_status_code: outcome.statusCode,
          last_error: outcome.error,
          ...(outcome.final ? { status: outcome.final } : {}),
          ...(outcome.final === 'delivered' ? { delivered_at: sql<Date>`now()` } : {}),
        })
        .where('id', '=', id),
    );
  }
}

/** A delivery's status (a CHECK constraint): pending until delivered, or failed for good. */
type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery with its config's URL and secret, as the dispatcher sends it (the payload is the event object it stored). */
export type DeliveryRow = Pick<
  Selectable<NotificationDeliveries>,
  'id' | 'workspace_id' | 'event' | 'attempts' | 'last_status_code'
> &
  Pick<Selectable<NotificationConfigs>, 'url' | 'secret_id'> & {
    payload: JsonObject;
    status: DeliveryStatus;
  };
