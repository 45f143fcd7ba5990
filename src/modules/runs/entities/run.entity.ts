import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { RunSummary } from '#libs/evaluation/runs/run.types.js';
import { defineStateVocabulary, type TrackedColumns } from '#libs/queue/tracked-job.js';
import { TrackedJobColumns } from '#libs/queue/tracked-job.entity.js';
import type { RunSnapshot } from '../execution/run-snapshot.js';

export const RUN_STATES = ['queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_RUN_STATES: ReadonlySet<RunState> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * A run's documented states over the tracked ones (docs/architecture.md#background-work): the
 * job states as they are, and `awaiting_upload`, which no job state shows as: an offline run is
 * a queued record without a job until its outputs are uploaded (`runStateOf`).
 */
export const RUN_STATE_VOCABULARY = defineStateVocabulary(RUN_STATES, {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
});

/** The documented state of a run's tracked columns. */
export function runStateOf(tracked: Pick<TrackedColumns, 'state' | 'job_id'>): RunState {
  return tracked.state === 'queued' && !tracked.job_id ? 'awaiting_upload' : RUN_STATE_VOCABULARY.show(tracked.state);
}

/** One execution of a dataset version through a SUT connection, scored by the metrics of its snapshot. */
@Entity('runs')
export class RunEntity extends WorkspaceRecord {
  @Column({ type: 'text', default: '' })
  name: string;

  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId: string;

  @Column({ name: 'version_id', type: 'uuid' })
  versionId: string;

  @Column({ name: 'partition_id', type: 'uuid', nullable: true })
  partitionId: string | null;

  @Column({ name: 'sut_id', type: 'uuid' })
  sutId: string;

  @Column({ name: 'connection_id', type: 'uuid' })
  connectionId: string;

  @Column({ name: 'eval_config_id', type: 'uuid', nullable: true })
  evalConfigId: string | null;

  /** State, failure, progress, job and times: written by the queue and `TrackedRecords` only. */
  @Column(() => TrackedJobColumns, { prefix: false })
  tracked: TrackedJobColumns;

  /** Everything the run needs, fixed when it was created: connection, adapter, metrics, judges, pass rule, mapping. */
  @Column({ type: 'jsonb' })
  snapshot: RunSnapshot;

  @Column({ type: 'integer' })
  concurrency: number;

  @Column({ type: 'jsonb', nullable: true })
  sample: { size: number; seed: number } | null;

  @Column({ type: 'integer', default: 1 })
  repetitions: number;

  @Column({ type: 'text', array: true, default: '{}' })
  tags: string[];

  @Column({ name: 'rerun_of', type: 'uuid', nullable: true })
  rerunOf: string | null;

  @Column({ name: 'rerun_mode', type: 'text', nullable: true })
  rerunMode: string | null;

  @Column({ type: 'integer', default: 0 })
  total: number;

  @Column({ type: 'integer', default: 0 })
  completed: number;

  @Column({ type: 'integer', default: 0 })
  errored: number;

  @Column({ type: 'jsonb', nullable: true })
  summary: RunSummary | null;

  @Column({ type: 'boolean', nullable: true })
  passed: boolean | null;

  @Column({ name: 'cancel_requested_at', type: 'timestamptz', nullable: true })
  cancelRequestedAt: Date | null;

  /** The documented state (`RUN_STATE_VOCABULARY`). */
  get state(): RunState {
    return runStateOf(this.tracked);
  }

  /** Why it failed or was cancelled (the failure's message); null otherwise. */
  get stateReason(): string | null {
    return this.tracked.failure?.message ?? null;
  }

  get jobId(): string | null {
    return this.tracked.job_id;
  }

  get startedAt(): Date | null {
    return this.tracked.started_at;
  }

  get finishedAt(): Date | null {
    return this.tracked.finished_at;
  }
}
