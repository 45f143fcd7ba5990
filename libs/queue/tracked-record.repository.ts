import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { Db } from '#libs/database/unit-of-work.js';
import type { JsonObject } from './job.types.js';
import type { TrackedFailure, TrackedRecord, TrackedState } from './tracked-job.js';

/** Not yet ended: the only states a transition starts from. */
const OPEN: TrackedState[] = ['queued', 'running'];

/**
 * The tracked columns of the families' tables (libs/queue/tracked-job.ts): the one place that
 * writes their state, failure, progress, job and timestamps. Each write joins the unit of work
 * open in the caller's context, and changes nothing on a record that has ended. The table is
 * named at run time, one of the schema's tracked tables (`TrackedTable`), so the statements are
 * typed by the columns they all share.
 */
@Injectable()
export class TrackedRecordRepository {
  constructor(private readonly db: Db) {}

  async attachJob(record: TrackedRecord, id: string, jobId: string): Promise<void> {
    await this.db.typedWrite((q) => q.updateTable(record.table).set({ job_id: jobId }).where('id', '=', id));
  }

  /** Running from now (the first start is kept across retries). */
  async start(record: TrackedRecord, id: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable(record.table)
        .set((eb) => ({ state: 'running', started_at: eb.fn.coalesce('started_at', sql<Date>`now()`) }))
        .where('id', '=', id)
        .where('state', 'in', OPEN)
        .returning('id'),
    );
    return rows.length > 0;
  }

  async progress(record: TrackedRecord, id: string, progress: JsonObject): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable(record.table)
        .set({ progress: JSON.stringify(progress) })
        .where('id', '=', id)
        .where('state', 'in', OPEN)
        .returning('id'),
    );
    return rows.length > 0;
  }

  /** Ends the record; `progress` (when given) is its last. False when it had ended already. */
  async finish(
    record: TrackedRecord,
    id: string,
    state: Exclude<TrackedState, 'queued' | 'running'>,
    failure: TrackedFailure | null,
    progress?: JsonObject,
  ): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable(record.table)
        .set({
          state,
          failure: failure ? JSON.stringify(failure) : null,
          ...(progress ? { progress: JSON.stringify(progress) } : {}),
          finished_at: sql<Date>`now()`,
        })
        .where('id', '=', id)
        .where('state', 'in', OPEN)
        .returning('id'),
    );
    return rows.length > 0;
  }
}
