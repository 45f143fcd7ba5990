import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { TrackedJobColumns } from '#libs/queue/tracked-job.entity.js';

/** One generation: its inputs, its tracked state (the queue's, libs/queue/tracked-job.ts) and the candidate version it made. */
@Entity('sdg_runs')
export class SdgRunEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'adapter_id', type: 'uuid' })
  adapterId: string;

  @Column({ name: 'target_dataset_id', type: 'uuid' })
  targetDatasetId: string;

  @Column(() => TrackedJobColumns, { prefix: false })
  tracked: TrackedJobColumns;

  @Column({ type: 'jsonb' })
  params: {
    /** The seed: the first `limit` rows of the version (runs queued before docs/decisions/0013 also hold `where: 'TRUE'`, `params: []`). */
    seed: { dataset_id: string; version_number: number; limit: number } | null;
    max_rows: number;
    message: string;
  };

  @Column({ type: 'integer', default: 0 })
  generated: number;

  @Column({ type: 'integer', default: 0 })
  dropped: number;

  @Column({ type: 'jsonb', default: [] })
  errors: string[];

  @Column({ name: 'version_id', type: 'uuid', nullable: true })
  versionId: string | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
