import { Injectable } from '@nestjs/common';
import { Db } from '../database/unit-of-work.js';
import type { JsonObject } from './job.types.js';
import type { TrackedFailure, TrackedRecord, TrackedState } from './tracked-job.js';

/** Not yet ended: the only states a transition starts from. */
const OPEN = `state IN ('queued', 'running')`;

/**
 * The tracked columns of the families' tables (libs/queue/tracked-job.ts): the one place that
 * writes their state, failure, progress, job and timestamps. Each write joins the unit of work
 * open in the caller's context, and changes nothing on a record that has ended.
 */
@Injectable()
export class TrackedRecordRepository {
  constructor(private readonly db: Db) {}

  async attachJob(record: TrackedRecord, id: string, jobId: string): Promise<void> {
    await this.db.query(`UPDATE ${record.table} SET job_id = $2 WHERE id = $1`, [id, jobId]);
  }

  /** Running from now (the first start is kept across retries). */
  async start(record: TrackedRecord, id: string): Promise<boolean> {
    return this.changed(
      await this.db.query(
        `UPDATE ${record.table} SET state = 'running', started_at = coalesce(started_at, now()) WHERE id = $1 AND ${OPEN} RETURNING 1`,
        [id],
      ),
    );
  }

  async progress(record: TrackedRecord, id: string, progress: JsonObject): Promise<boolean> {
    return this.changed(
      await this.db.query(`UPDATE ${record.table} SET progress = $2 WHERE id = $1 AND ${OPEN} RETURNING 1`, [
        id,
        JSON.stringify(progress),
      ]),
    );
  }

  /** Ends the record; `progress` (when given) is its last. False when it had ended already. */
  async finish(
    record: TrackedRecord,
    id: string,
    state: Exclude<TrackedState, 'queued' | 'running'>,
    failure: TrackedFailure | null,
    progress?: JsonObject,
  ): Promise<boolean> {
    return this.changed(
      await this.db.query(
        `UPDATE ${record.table} SET state = $2, failure = $3, progress = coalesce($4, progress), finished_at = now()
          WHERE id = $1 AND ${OPEN} RETURNING 1`,
        [id, state, failure ? JSON.stringify(failure) : null, progress ? JSON.stringify(progress) : null],
      ),
    );
  }

  /** TypeORM answers an UPDATE … RETURNING with `[rows, count]`. */
  private changed(result: unknown): boolean {
    return (result as [unknown[], number])[1] > 0;
  }
}
