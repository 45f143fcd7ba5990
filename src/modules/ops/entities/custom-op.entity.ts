import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export const CUSTOM_OP_STATES = ['deploying', 'active', 'failed', 'stopped'] as const;
export type CustomOpState = (typeof CUSTOM_OP_STATES)[number];

/** A workspace's own operation service: an HTTP endpoint it runs, health checked on each deploy. */
@Entity('custom_ops')
export class CustomOpEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  state: CustomOpState;

  /** Why it is in its state (the failed check, who stopped it). */
  @Column({ name: 'state_reason', type: 'text', nullable: true })
  stateReason: string | null;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ name: 'endpoint_url', type: 'text' })
  endpointUrl: string;

  /** Empty: the check is a protocol probe (an empty batch POSTed to the endpoint). */
  @Column({ name: 'health_url', type: 'text' })
  healthUrl: string;

  @Column({ name: 'timeout_ms', type: 'integer' })
  timeoutMs: number;

  @Column({ name: 'secret_id', type: 'uuid', nullable: true })
  secretId: string | null;

  @Column({ name: 'last_checked_at', type: 'timestamptz', nullable: true })
  lastCheckedAt: Date | null;
}
