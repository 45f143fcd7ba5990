import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '../../../../libs/database/entity-columns.js';
import type { RunSummary } from '../../../../libs/evaluation/runs/run.types.js';
import type { RunSnapshot } from '../run-snapshot.js';

export const RUN_STATES = ['queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_RUN_STATES: ReadonlySet<RunState> = new Set(['succeeded', 'failed', 'cancelled']);

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

  @Column({ type: 'text' })
  state: RunState;

  @Column({ name: 'state_reason', type: 'text', nullable: true })
  stateReason: string | null;

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

  @Column({ name: 'job_id', type: 'uuid', nullable: true })
  jobId: string | null;

  @Column({ name: 'cancel_requested_at', type: 'timestamptz', nullable: true })
  cancelRequestedAt: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
