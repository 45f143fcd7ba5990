import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type {
  ConnectionAuth,
  ConnectionKind,
  HttpTransport,
  OpenAiChatTransport,
  RetryPolicy,
  TraceLink,
} from '#libs/evaluation/sut/sut.types.js';

export interface ConnectionLimits {
  timeout_ms: number;
  max_concurrency: number;
  requests_per_second: number | null;
  retry: RetryPolicy;
}

/** How one SUT is reached: the transport of its kind, its limits and the secret it sends (by reference). */
@Entity('sut_connections')
export class ConnectionEntity extends WorkspaceRecord {
  @Column({ name: 'sut_id', type: 'uuid' })
  sutId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  kind: ConnectionKind;

  /** HttpTransport or OpenAiChatTransport by kind; null for offline. */
  @Column({ type: 'jsonb', nullable: true })
  transport: HttpTransport | OpenAiChatTransport | null;

  /** Where the secret goes; the secret itself is `secret_id`. */
  @Column({ type: 'jsonb', nullable: true })
  auth: Omit<ConnectionAuth, 'secret_id'> | null;

  @Column({ name: 'secret_id', type: 'uuid', nullable: true })
  secretId: string | null;

  @Column({ type: 'jsonb' })
  limits: ConnectionLimits;

  /** Where the SUT exports its own trace of each call, joined to the run's rows; null when it exports none. */
  @Column({ name: 'trace_link', type: 'jsonb', nullable: true })
  traceLink: TraceLink | null;
}
