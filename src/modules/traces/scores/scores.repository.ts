import { Injectable } from '@nestjs/common';
import { sql, type Insertable, type Selectable } from 'kysely';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { TraceScores } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';

export type TraceScoreRow = Selectable<TraceScores>;
export type NewTraceScore = Insertable<TraceScores>;

/** One evaluator metric's scores in a time window, as the database counts them (bigint and numeric as text). */
export interface ScoreWindowCounts {
  n: number | string;
  scored: number | string;
  passed: number | string;
  failed: number | string;
  errored: number | string;
  mean: number | string | null;
  sd: number | string | null;
}

/** Which scores a window reads: an evaluator's metric, scored traces observed in [from, to). */
export interface ScoreWindow {
  workspaceId: string;
  evaluatorId: string;
  metric: string;
  from: Date;
  to: Date;
  /** Only this evaluator version (default: every version). */
  version?: number;
}

/** Scores of production traces (trace_scores): always read and written with their workspace. */
@Injectable()
export class TraceScoresRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the scores none holds yet: a score already kept for the same evaluator version,
   * target and metric (a retry, a restart, a parallel worker) is left as it is. Answers how many
   * were inserted.
   */
  async insert(rows: NewTraceScore[]): Promise<number> {
    if (!rows.length) return 0;
    const inserted = await this.db.typed((q) =>
      q
        .insertInto('trace_scores')
        .values(rows)
        .onConflict((oc) => oc.columns(['evaluator_id', 'evaluator_version', 'target_key', 'metric']).doNothing())
        .returning('id'),
    );
    return inserted.length;
  }

  /** Counts of one evaluator metric in a window: scored rows, passes, failures, errors, the mean score and its SD. */
  @GenerateSql({
    params: [
      {
        workspaceId: DummyValue.UUID,
        evaluatorId: DummyValue.UUID,
        metric: 'helpfulness',
        from: DummyValue.DATE,
        to: DummyValue.DATE,
      },
    ],
  })
  async windowCounts(w: ScoreWindow): Promise<ScoreWindowCounts> {
    const [row] = await this.db.typed((q) => {
      let query = q
        .selectFrom('trace_scores')
        .where('workspace_id', '=', w.workspaceId)
        .where('evaluator_id', '=', w.evaluatorId)
        .where('metric', '=', w.metric)
        .where('observed_at', '>=', w.from)
        .where('observed_at', '<', w.to);
      if (w.version !== undefined) query = query.where('evaluator_version', '=', w.version);
      return query.select((eb) => [
        eb.fn.countAll<string>().as('n'),
        eb.fn.countAll<string>().filterWhere('score', 'is not', null).as('scored'),
        eb.fn.countAll<string>().filterWhere('passed', '=', true).as('passed'),
        eb.fn.countAll<string>().filterWhere('passed', '=', false).as('failed'),
        eb.fn.countAll<string>().filterWhere('error', 'is not', null).as('errored'),
        eb.fn.avg<string | null>('score').as('mean'),
        eb.fn<string | null>('stddev_samp', ['score']).as('sd'),
      ]);
    });
    return row;
  }

  /** The lowest-scoring (failed first) scores of a window, for an alert's examples. */
  async lowest(w: ScoreWindow, limit: number): Promise<TraceScoreRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_scores')
        .selectAll()
        .where('workspace_id', '=', w.workspaceId)
        .where('evaluator_id', '=', w.evaluatorId)
        .where('metric', '=', w.metric)
        .where('observed_at', '>=', w.from)
        .where('observed_at', '<', w.to)
        .where('error', 'is', null)
        .orderBy((eb) => eb.fn.coalesce('passed', eb.val(true)))
        .orderBy('score', (ob) => ob.asc().nullsLast())
        .orderBy('observed_at', 'desc')
        .limit(limit),
    );
  }

  /** The judge cost the evaluator's scores recorded since `since` (USD). */
  async costSince(evaluatorId: string, since: Date): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('trace_scores')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<string | number>('cost_usd'), sql<number>`0`).as('cost'))
        .where('evaluator_id', '=', evaluatorId)
        .where('scored_at', '>=', since),
    );
    return Number(row.cost);
  }

  /** Every score of the traces named, in one dataset, by trace, evaluator, metric. */
  async forTraces(workspaceId: string, datasetId: string, traceIds: string[]): Promise<TraceScoreRow[]> {
    if (!traceIds.length) return [];
    return this.db.typed((q) =>
      q
        .selectFrom('trace_scores')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('dataset_id', '=', datasetId)
        .where('trace_id', 'in', traceIds)
        .orderBy('trace_id')
        .orderBy('evaluator_name')
        .orderBy('metric')
        .orderBy('target_key'),
    );
  }
}
