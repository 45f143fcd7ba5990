import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type RevisionOutcome = 'deploying' | 'active' | 'failed' | 'superseded';

/** One deploy of a custom op: where it pointed and how its health check went. */
@Entity('custom_op_revisions')
export class CustomOpRevisionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'custom_op_id', type: 'uuid' })
  customOpId: string;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ name: 'endpoint_url', type: 'text' })
  endpointUrl: string;

  @Column({ name: 'health_url', type: 'text' })
  healthUrl: string;

  @Column({ name: 'timeout_ms', type: 'integer' })
  timeoutMs: number;

  @Column({ type: 'text' })
  outcome: RevisionOutcome;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  /** What the check saw: status, latency. */
  @Column({ type: 'jsonb', nullable: true })
  health: Record<string, unknown> | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'checked_at', type: 'timestamptz', nullable: true })
  checkedAt: Date | null;
}
