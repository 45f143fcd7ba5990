import type { Job } from '../job.types.js';

export const QUEUE_DRIVER = Symbol('QUEUE_DRIVER');

/**
 * How committed job records reach workers. The `jobs` table is the source of truth in both
 * drivers; a driver only delivers (Twenty's driver split, with the state kept in the database).
 */
export interface QueueDriver {
  readonly kind: 'in-process' | 'bullmq';
  /** Makes these committed, queued jobs runnable (after their `run_after`). Never throws. */
  dispatch(jobs: Array<Pick<Job, 'id' | 'type' | 'runAfter' | 'priority'>>): void;
  /** Starts taking jobs in this process (RUN_WORKERS). */
  startWorkers(): Promise<void>;
  /** Stops taking jobs, lets running ones finish within the grace period, closes connections. Idempotent: later calls return the first call's promise. */
  stop(): Promise<void>;
  /** Readiness: rejects when the queue's backing service does not answer. */
  probe(): Promise<void>;
}
