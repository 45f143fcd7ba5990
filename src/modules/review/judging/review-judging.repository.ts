import { Injectable } from '@nestjs/common';
import type { Insertable, Selectable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { countOf, withTotal, type PageWindow } from '#libs/database/typed-fragments.js';
import { trackedRecord, type TrackedFailure, type TrackedState } from '#libs/queue/tracked-job.js';
import type { JsonObject } from '#libs/queue/job.types.js';

/** The record a judge job settles (its `judge_run_id`): the queue keeps its tracked columns. */
export const REVIEW_JUDGE_RUNS = trackedRecord('review_judge_runs', 'judge_run_id');

/** An item the judge could not grade. */
export interface JudgeRunItemError {
  item_id: string;
  code: string;
  message: string;
}

export type JudgeRunRow = Omit<
  Selectable<DB['review_judge_runs']>,
  'state' | 'failure' | 'progress' | 'positive' | 'errors'
> & {
  state: TrackedState;
  failure: TrackedFailure | null;
  progress: JsonObject | null;
  positive: string[] | null;
  errors: JudgeRunItemError[];
};

/** What a judge run found, written when its job ends. */
export interface JudgeRunCounts {
  items: number;
  graded: number;
  ungraded: number;
  unlabelled: number;
  errors: JudgeRunItemError[];
  validation_id: string | null;
}

/** Judge runs of review queues: queries only. */
@Injectable()
export class ReviewJudgingRepository {
  constructor(private readonly db: Db) {}

  async insert(
    values: Omit<
      Insertable<DB['review_judge_runs']>,
      'id' | 'state' | 'failure' | 'progress' | 'job_id' | 'created_at' | 'started_at' | 'finished_at'
    >,
  ): Promise<JudgeRunRow> {
    const [row] = await this.db.typed((q) => q.insertInto('review_judge_runs').values(values).returningAll());
    return row as unknown as JudgeRunRow;
  }

  async find(workspaceId: string, queueId: string, id: string, lock = false): Promise<JudgeRunRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_judge_runs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('queue_id', '=', queueId)
        .where('id', '=', id)
        .$if(lock, (w) => w.forUpdate()),
    );
    return (row as unknown as JudgeRunRow) ?? null;
  }

  /** The record a job works for, by the id in its payload (the job carries no caller). */
  async findRunUnscoped(id: string): Promise<JudgeRunRow | null> {
    const [row] = await this.db.typed((q) => q.selectFrom('review_judge_runs').selectAll().where('id', '=', id));
    return (row as unknown as JudgeRunRow) ?? null;
  }

  async page(workspaceId: string, queueId: string, window: PageWindow): Promise<[JudgeRunRow[], number]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_judge_runs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('queue_id', '=', queueId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .offset(window.skip)
        .limit(window.take),
    );
    return withTotal(rows as unknown as JudgeRunRow[], window, () =>
      countOf(this.db, (q) =>
        q.selectFrom('review_judge_runs').where('workspace_id', '=', workspaceId).where('queue_id', '=', queueId),
      ),
    );
  }

  async saveCounts(id: string, counts: JudgeRunCounts): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('review_judge_runs')
        .set({ ...counts, errors: JSON.stringify(counts.errors) })
        .where('id', '=', id),
    );
  }
}
