import { Injectable } from '@nestjs/common';
import type { Job, JsonObject } from './job.types.js';
import { failureOfJob, trackedIdOf, type TrackedFailure, type TrackedRecord } from './tracked-job.js';
import { TrackedRecordRepository } from './tracked-record.repository.js';

/**
 * Moves tracked records (docs/architecture.md#background-work). The queue calls it for every
 * job of a tracked type: the record gets its job's id at enqueue, `running` when an attempt
 * starts, the handler's progress, and its job's end (succeeded, failed or cancelled, with the
 * failure) in the transaction that ends the job. A handler calls `succeed` (or `fail`) itself
 * only when the end must commit with its own writes.
 */
@Injectable()
export class TrackedRecords {
  constructor(private readonly repo: TrackedRecordRepository) {}

  attachJob(record: TrackedRecord, job: Pick<Job, 'id' | 'type' | 'payload'>): Promise<void> {
    return this.repo.attachJob(record, trackedIdOf(record, job), job.id);
  }

  start(record: TrackedRecord, id: string): Promise<boolean> {
    return this.repo.start(record, id);
  }

  progress(record: TrackedRecord, id: string, progress: JsonObject): Promise<boolean> {
    return this.repo.progress(record, id, progress);
  }

  /** Ends the record succeeded (with its last progress); false when it had ended already. */
  succeed(record: TrackedRecord, id: string, progress?: JsonObject): Promise<boolean> {
    return this.repo.finish(record, id, 'succeeded', null, progress);
  }

  fail(
    record: TrackedRecord,
    id: string,
    failure: TrackedFailure,
    state: 'failed' | 'cancelled' = 'failed',
  ): Promise<boolean> {
    return this.repo.finish(record, id, state, failure);
  }

  /** The job's end on its record, unless the handler ended it first. */
  async settle(record: TrackedRecord, job: Job): Promise<void> {
    if (job.status !== 'succeeded' && job.status !== 'failed' && job.status !== 'cancelled') return;
    await this.repo.finish(record, trackedIdOf(record, job), job.status, failureOfJob(job));
  }
}
