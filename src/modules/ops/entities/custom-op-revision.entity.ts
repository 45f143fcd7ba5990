import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { TrackedJobColumns } from '#libs/queue/tracked-job.entity.js';

/**
 * One deploy of a custom op: where it pointed and how its health check went. The check is its
 * tracked job (libs/queue/tracked-job.ts): succeeded when healthy, failed with the reason when
 * not; `superseded_at` when a later revision replaced it.
 */
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

  @Column(() => TrackedJobColumns, { prefix: false })
  tracked: TrackedJobColumns;

  /** What the check saw: status, latency. */
  @Column({ type: 'jsonb', nullable: true })
  health: Record<string, unknown> | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  createdAt: Date;

  @Column({ name: 'superseded_at', type: 'timestamptz', nullable: true })
  supersededAt: Date | null;
}
