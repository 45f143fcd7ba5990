import { Column } from 'typeorm';
import type { JsonObject } from './job.types.js';
import type { TrackedColumns, TrackedFailure, TrackedState } from './tracked-job.js';

const READ_ONLY = { insert: false, update: false } as const;

/**
 * The tracked columns (libs/queue/tracked-job.ts) for a family whose record is an entity:
 * `@Column(() => TrackedJobColumns, { prefix: false }) tracked`. Read-only to TypeORM: the
 * queue and `TrackedRecords` write them, so saving the entity never puts back a stale state.
 * Named as the model names them; the `created_at` of the model is the entity's own.
 */
export class TrackedJobColumns implements Omit<TrackedColumns, 'created_at'> {
  @Column({ type: 'text', default: 'queued', ...READ_ONLY })
  state: TrackedState;

  @Column({ type: 'jsonb', nullable: true, ...READ_ONLY })
  failure: TrackedFailure | null;

  @Column({ type: 'jsonb', nullable: true, ...READ_ONLY })
  progress: JsonObject | null;

  @Column({ name: 'job_id', type: 'uuid', nullable: true, ...READ_ONLY })
  job_id: string | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true, ...READ_ONLY })
  started_at: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true, ...READ_ONLY })
  finished_at: Date | null;
}
