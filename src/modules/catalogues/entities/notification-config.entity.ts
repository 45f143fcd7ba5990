import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export const NOTIFICATION_EVENTS = [
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'quality_check.failed',
  'dataset.version_promoted',
  'online_alert.firing',
  'online_alert.resolved',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** A webhook: where to POST which events, signed with a workspace secret. */
@Entity('notification_configs')
export class NotificationConfigEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', array: true })
  events: NotificationEvent[];

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'secret_id', type: 'uuid' })
  secretId: string;
}
