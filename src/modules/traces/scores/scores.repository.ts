import { Injectable } from '@nestjs/common';
import { sql, type Expression, type ExpressionBuilder, type Insertable, type Selectable, type SqlBool } from 'kysely';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { DB, TraceScores } from '#libs/database/schema.js';
import { countN, type PageWindow } from '#libs/database/typed-fragments.js';
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

/** The filters of GET /traces/scores, as the service read them (each given: one condition). */
export interface ScoreFilter {
  datasetId?: string;
  traceId?: string;
  sessionId?: string;
  evaluatorId?: string;
  evaluatorName?: string;
  metric?: string;
  passed?: boolean;
  minScore?: number;
  maxScore?: number;
  hasError?: boolean;
  observedAfter?: Date;
  observedBefore?: Date;
}

/** What GET /traces/scores:aggregate counts: an evaluator's metric in [from, to), by bucket and group. */
export interface ScoreAggregation extends ScoreWindow {
  bucket: 'hour' | 'day' | 'none';
  groupBy?: 'service' | 'model' | 'tag';
  datasetId?: string;
  /** At most this many (bucket, group) rows are read. */
  limit: number;
}

/** One bucket (and group) of an aggregation, as the database counts it (bigint and numeric as text). */
export interface ScoreAggregateCounts extends ScoreWindowCounts {
  bucket_start: Date;
  grp: string | null;
}

/** Buckets are aligned to whole hours and days from this instant (UTC midnight). */
const BUCKET_ORIGIN = '2000-01-01T00:00:00Z';

type Where = (eb: ExpressionBuilder<DB, 'trace_scores'>) => Expression<SqlBool>;

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
  /**
   * Each evaluator metric's newest score record of the traces named, in one dataset (the highest
   * evaluator version, then the latest scored, then the smallest id: the order `trace_score_of`
   * reads in), by trace, evaluator and metric.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID, ['4bf92f3577b34da6a3ce929d0e0e4736']] })
  async newestForTraces(workspaceId: string, datasetId: string, traceIds: string[]): Promise<TraceScoreRow[]> {
    if (!traceIds.length) return [];
    return this.db.typed((q) =>
      q
        .selectFrom('trace_scores')
        .distinctOn(['trace_id', 'evaluator_name', 'metric'])
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('dataset_id', '=', datasetId)
        .where('trace_id', 'in', traceIds)
        .orderBy('trace_id')
        .orderBy('evaluator_name')
        .orderBy('metric')
        .orderBy('evaluator_version', 'desc')
        .orderBy('scored_at', 'desc')
        .orderBy('id'),
    );
  }

  /** A page of the workspace's scores that `filter` keeps, newest observed first (then id), with the total. */
  @GenerateSql({
    params: [DummyValue.UUID, { metric: 'helpfulness', passed: false, maxScore: 0.5 }, { skip: 0, take: 50 }],
  })
  async page(
    workspaceId: string,
    filter: ScoreFilter,
    window: PageWindow,
  ): Promise<{ rows: TraceScoreRow[]; total: number }> {
    const conditions = scoreConditions(filter);
    const rows = await this.db.typed((q) =>
      conditions
        .reduce(
          (query, condition) => query.where(condition),
          q.selectFrom('trace_scores').selectAll().where('workspace_id', '=', workspaceId),
        )
        .orderBy('observed_at', 'desc')
        .orderBy('id', 'desc')
        .limit(window.take)
        .offset(window.skip),
    );
    const [{ n }] = await this.db.typed((q) =>
      conditions
        .reduce(
          (query, condition) => query.where(condition),
          q.selectFrom('trace_scores').where('workspace_id', '=', workspaceId),
        )
        .select(countN()),
    );
    return { rows, total: n };
  }

  /**
   * Counts of an evaluator's metric per bucket (hours or days aligned to UTC midnight, or the
   * whole window) and group (the score's service or model, or each tag its trace has in any
   * version of its dataset: a trace of two tags counts in both, one of none in the null group),
   * by bucket then group; only buckets with scores, at most `limit` rows.
   */
  @GenerateSql(
    {
      name: 'by day and tag',
      params: [
        {
          workspaceId: DummyValue.UUID,
          evaluatorId: DummyValue.UUID,
          metric: 'helpfulness',
          from: DummyValue.DATE,
          to: DummyValue.DATE,
          bucket: 'day',
          groupBy: 'tag',
          limit: 10_001,
        },
      ],
    },
    {
      name: 'the whole window by service',
      params: [
        {
          workspaceId: DummyValue.UUID,
          evaluatorId: DummyValue.UUID,
          metric: 'helpfulness',
          from: DummyValue.DATE,
          to: DummyValue.DATE,
          bucket: 'none',
          groupBy: 'service',
          limit: 10_001,
        },
      ],
    },
  )
  aggregate(a: ScoreAggregation): Promise<ScoreAggregateCounts[]> {
    const bucket =
      a.bucket === 'none'
        ? sql<Date>`${a.from}::timestamptz`
        : sql<Date>`date_bin(${a.bucket === 'hour' ? '1 hour' : '1 day'}::interval, s.observed_at, ${BUCKET_ORIGIN}::timestamptz)`;
    const group =
      a.groupBy === 'tag'
        ? sql<string | null>`t.tag`
        : a.groupBy === 'service'
          ? sql<string | null>`s.service_name`
          : a.groupBy === 'model'
            ? sql<string | null>`s.model`
            : sql<string | null>`NULL::text`;
    return this.db.typed((q) =>
      q
        .selectFrom(
          q
            .selectFrom('trace_scores as s')
            .$if(a.groupBy === 'tag', (query) =>
              query.leftJoinLateral(
                (eb) =>
                  eb
                    .selectFrom('trace_tags as tt')
                    .select('tt.tag')
                    .distinct()
                    .whereRef('tt.dataset_id', '=', 's.dataset_id')
                    .whereRef('tt.trace_id', '=', 's.trace_id')
                    .as('t'),
                (join) => join.onTrue(),
              ),
            )
            .where('s.workspace_id', '=', a.workspaceId)
            .where('s.evaluator_id', '=', a.evaluatorId)
            .where('s.metric', '=', a.metric)
            .where('s.observed_at', '>=', a.from)
            .where('s.observed_at', '<', a.to)
            .$if(a.datasetId !== undefined, (query) => query.where('s.dataset_id', '=', a.datasetId!))
            .$if(a.version !== undefined, (query) => query.where('s.evaluator_version', '=', a.version!))
            .select([bucket.as('bucket_start'), group.as('grp'), 's.score', 's.passed', 's.error'])
            .as('x'),
        )
        .groupBy(['x.bucket_start', 'x.grp'])
        .select((eb) => [
          'x.bucket_start',
          'x.grp',
          eb.fn.countAll<string>().as('n'),
          eb.fn.count<string>('x.score').as('scored'),
          eb.fn.countAll<string>().filterWhere('x.passed', '=', true).as('passed'),
          eb.fn.countAll<string>().filterWhere('x.passed', '=', false).as('failed'),
          eb.fn.countAll<string>().filterWhere('x.error', 'is not', null).as('errored'),
          eb.fn.avg<string | null>('x.score').as('mean'),
          eb.fn<string | null>('stddev_samp', ['x.score']).as('sd'),
        ])
        .orderBy('x.bucket_start')
        .orderBy('x.grp', (ob) => ob.asc().nullsLast())
        .limit(a.limit),
    );
  }
}

function scoreConditions(f: ScoreFilter): Where[] {
  const out: Where[] = [];
  if (f.datasetId !== undefined) out.push((eb) => eb('dataset_id', '=', f.datasetId!));
  if (f.traceId !== undefined) out.push((eb) => eb('trace_id', '=', f.traceId!));
  if (f.sessionId !== undefined) out.push((eb) => eb('session_id', '=', f.sessionId!));
  if (f.evaluatorId !== undefined) out.push((eb) => eb('evaluator_id', '=', f.evaluatorId!));
  if (f.evaluatorName !== undefined) out.push((eb) => eb('evaluator_name', '=', f.evaluatorName!));
  if (f.metric !== undefined) out.push((eb) => eb('metric', '=', f.metric!));
  if (f.passed !== undefined) out.push((eb) => eb('passed', '=', f.passed!));
  if (f.minScore !== undefined) out.push((eb) => eb('score', '>=', f.minScore!));
  if (f.maxScore !== undefined) out.push((eb) => eb('score', '<=', f.maxScore!));
  if (f.hasError !== undefined) out.push((eb) => eb('error', f.hasError ? 'is not' : 'is', null));
  if (f.observedAfter) out.push((eb) => eb('observed_at', '>=', f.observedAfter!));
  if (f.observedBefore) out.push((eb) => eb('observed_at', '<', f.observedBefore!));
  return out;
}
