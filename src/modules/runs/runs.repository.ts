import { Injectable } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { MetricScore, RunSummary } from '#libs/evaluation/runs/run.types.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import { trackedRecord } from '#libs/queue/tracked-job.js';
import type { RunSource } from '../datasets/run-source.service.js';
import type { ProjectLinks } from '../projects/projects.service.js';
import { RunEntity, type RunState } from './entities/run.entity.js';
import { gateVerdictCondition } from './gate/gate-verdicts.repository.js';
import { DatabaseNotifications } from '#libs/database/notifications.js';
import { Db } from '#libs/database/unit-of-work.js';
import { sql, type Expression, type ExpressionBuilder, type QueryCreator, type Selectable, type SqlBool } from 'kysely';
import { everyRow, grouped, orderedBy, type FilterContext, type RowQuery } from '#libs/database/query-language.js';
import type { DB } from '#libs/database/schema.js';
import type { NarrowedRow, QueryBuilder } from '#libs/database/typed-queries.js';
import { countN, entityPage, holds, isAnyOf, publishedRows, type PageWindow } from '#libs/database/typed-fragments.js';

/** What an item holds of its source row: its key, place, session and turn, data and dimension values. */
const ITEM_ROW_COLUMNS = ['row_id', 'repetition', 'ordinal', 'session_id', 'turn', 'data', 'dimensions'] as const;

/** The columns materialize writes of each item, in the order of its select list. */
const MATERIALIZED_COLUMNS = ['run_id', 'workspace_id', ...ITEM_ROW_COLUMNS] as const;

/** The last row (ordinal, row id) of a chunk of materialize: the next chunk starts after it. */
interface ChunkEnd {
  ordinal: string;
  rowId: string;
}

/**
 * The source rows one statement of materialize makes items of, with each row's session: a sample
 * (every row at once, ordered by a hash of row id and seed) or the chunk after `after`, in row order.
 */
function chosenRows(
  q: QueryCreator<DB>,
  source: RunSource,
  opts: { sample: { size: number; seed: number } | null; chunkRows: number },
  after: ChunkEnd | null,
) {
  const session = source.mapping.session_id
    ? sql<string | null>`(r.data ->> ${source.mapping.session_id})`
    : sql<string | null>`NULL::text`;
  const rows = q
    .selectFrom(publishedRows(source.datasetId, source.versionNumber))
    .select(['r.row_id', 'r.ordinal', 'r.data', 'r.dimensions', session.as('session_id')])
    .where(grouped(source.where));
  if (opts.sample) return rows.orderBy(sql`md5(r.row_id::text || ${String(opts.sample.seed)})`).limit(opts.sample.size);
  // `ordinal >=` bounds the scan of dataset_rows_order_idx; the row id orders rows of one ordinal.
  return rows
    .$if(after !== null, (w) =>
      w.where((eb) =>
        eb.and([
          eb('r.ordinal', '>=', after!.ordinal),
          eb.or([eb('r.ordinal', '>', after!.ordinal), eb('r.row_id', '>', after!.rowId)]),
        ]),
      ),
    )
    .orderBy('r.ordinal')
    .orderBy('r.row_id')
    .limit(opts.chunkRows);
}

/**
 * The query language's contexts over a run's items, alias `i`: POST /runs/{id}/query sees each
 * item as an object of its result fields (`row` for the dataset row); the table view as the
 * dataset row's own columns beside the result under `_`-prefixed names and each metric's score
 * as `_score.<metric>` (on the metric's one scale: normalised 0..1 where it has one, as
 * reportedScore). A dimension is the item's value of it.
 */
const ITEM_SHAPES = {
  results: sql`jsonb_build_object('row', i.data, 'row_id', i.row_id, 'repetition', i.repetition, 'session_id', i.session_id, 'turn', i.turn, 'status', i.status, 'output', i.output,
    'latency_ms', i.latency_ms, 'cost_usd', i.cost_usd, 'usage', i.usage, 'extras', i.extras, 'error', i.error, 'scores', i.scores, 'passed', i.passed, 'dimensions', i.dimensions)`,
  table: sql`(coalesce(i.data, '{}'::jsonb) || jsonb_build_object('_repetition', i.repetition, '_status', i.status, '_output', i.output, '_passed', i.passed, '_latency_ms', i.latency_ms, '_error', i.error -> 'code')
    || (SELECT coalesce(jsonb_object_agg('_score.' || s.key, CASE WHEN jsonb_typeof(s.value -> 'normalized') = 'number' THEN s.value -> 'normalized' ELSE s.value -> 'score' END), '{}'::jsonb) FROM jsonb_each(coalesce(i.scores, '{}'::jsonb)) s))`,
};

export function resultsContext(shape: keyof typeof ITEM_SHAPES, columns: Iterable<string>): FilterContext {
  return {
    row: ITEM_SHAPES[shape],
    rowId: sql.ref<string>('i.row_id'),
    dimension: (name) => sql<string | null>`(i.dimensions ->> ${name})`,
    columns: new Set(columns),
  };
}

/** The record a run's job settles (docs/architecture.md#background-work): the queue keeps its state with the job's. */
export const RUNS = trackedRecord('runs', 'run_id');

const now = sql<Date>`now()`;

type RunCondition = (eb: ExpressionBuilder<DB, 'runs'>) => Expression<SqlBool>;

/** A documented state as a condition on the tracked columns of a run (`awaiting_upload`: queued without a job). */
const STATE_CONDITIONS: Record<RunState, RunCondition> = {
  awaiting_upload: (eb) => eb.and([eb('state', '=', 'queued'), eb('job_id', 'is', null)]),
  queued: (eb) => eb.and([eb('state', '=', 'queued'), eb('job_id', 'is not', null)]),
  running: (eb) => eb('state', '=', 'running'),
  succeeded: (eb) => eb('state', '=', 'succeeded'),
  failed: (eb) => eb('state', '=', 'failed'),
  cancelled: (eb) => eb('state', '=', 'cancelled'),
};

/** The channel every run event is signalled on (the run id as payload): live streams listen to it. */
export const RUN_EVENTS_CHANNEL = 'ews_run_events';

/** What the call of an item answered, what the agent did to answer it, and the item's verdict. */
const ANSWER_COLUMNS = ['status', 'output', 'latency_ms', 'usage', 'cost_usd', 'extras', 'error', 'attempts'] as const;
const AGENT_COLUMNS = ['trajectory', 'trace_id'] as const;
const VERDICT_COLUMNS = ['scores', 'passed', 'called_at', 'scored_at'] as const;
const ITEM_COLUMNS = [...ITEM_ROW_COLUMNS, ...ANSWER_COLUMNS, ...AGENT_COLUMNS, ...VERDICT_COLUMNS] as const;

/** A row of a run as the executor and the result views read it: its jsonb columns and status narrowed. */
export type RunItemRow = NarrowedRow<
  Pick<Selectable<DB['run_items']>, (typeof ITEM_COLUMNS)[number]>,
  {
    data: Record<string, unknown>;
    dimensions: Record<string, string>;
    status: 'pending' | 'done' | 'error';
    usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null } | null;
    extras: Record<string, unknown> | null;
    error: { code: string; message: string } | null;
    trajectory: Trajectory | null;
    scores: Record<string, MetricScore> | null;
  }
>;

/** Where a page of a run's items ends, in their order (ordinal, row_id, repetition): the next page starts after it. */
export interface ItemKey {
  ordinal: string;
  row_id: string;
  repetition: number;
}

/** What the run's summary reads of an item (never its row data or output). */
const SUMMARY_COLUMNS = [
  'ordinal',
  'row_id',
  'repetition',
  'status',
  'latency_ms',
  'cost_usd',
  'error',
  'scores',
  'passed',
  'dimensions',
] as const;
export type SummaryItemRow = Pick<RunItemRow, (typeof SUMMARY_COLUMNS)[number]>;

/** What a diff reads of an item: a summary's fields and its output's md5. */
export type DiffItemRow = SummaryItemRow & { output: string | null };

export type ItemOutcome = Pick<
  RunItemRow,
  'output' | 'latency_ms' | 'usage' | 'cost_usd' | 'extras' | 'error' | 'attempts'
> & { status: 'done' | 'error'; trace_id?: string | null; trajectory?: Trajectory | null };

export type RunEventRow = NarrowedRow<
  Pick<Selectable<DB['run_events']>, 'id' | 'type' | 'at' | 'data'>,
  { data: Record<string, unknown> }
>;

export interface RunFilter {
  workspaceIds: string[];
  sutId?: string;
  datasetId?: string;
  state?: RunState;
  states?: RunState[];
  tag?: string;
  /** Runs of the project's linked SUTs or datasets, in its workspace */
  project?: ProjectLinks;
  /** Runs by their recorded gate verdicts (gateVerdictCondition) */
  gate?: { verdict?: string; label?: string };
}

/** The items' one order: the dataset's (sessions by their first row), a row's repetitions together. Unique, so pages can follow it. */
const ITEM_ORDER = 'ordinal, row_id, repetition';
const ITEM_COLUMN_LIST = ITEM_COLUMNS.join(', ');
/** An item not yet answered, or answered and not yet scored. */
const unfinished = (alias = '') => `(${alias}status = 'pending' OR ${alias}scored_at IS NULL)`;

type ItemCondition = (eb: ExpressionBuilder<DB, 'run_items'>) => Expression<SqlBool>;

/** Items after a page's last key, in ITEM_ORDER; every item for the first page. */
function afterKey(key: ItemKey | null): ItemCondition {
  return (eb) =>
    key
      ? eb(
          eb.refTuple('ordinal', 'row_id', 'repetition'),
          '>',
          eb.tuple(
            sql<string>`${key.ordinal}::bigint`,
            sql<string>`${key.row_id}::uuid`,
            sql<number>`${key.repetition}::int`,
          ),
        )
      : eb.lit(true);
}

/** `AND (<prefix>ordinal, row_id, repetition) > (...)` after a page's last key, its values appended to `params`; nothing for the first page. */
function after(key: ItemKey | null, params: unknown[], prefix = ''): string {
  if (!key) return '';
  const at = params.push(key.ordinal, key.row_id, key.repetition);
  return `AND (${prefix}ordinal, ${prefix}row_id, ${prefix}repetition) > ($${at - 2}::bigint, $${at - 1}::uuid, $${at}::int)`;
}

/** A run's items after `from` (all of them with null), in ITEM_ORDER: what a page selects from. */
function itemsAfter(q: QueryBuilder, runId: string, from: ItemKey | null) {
  return q
    .selectFrom('run_items')
    .where('run_id', '=', runId)
    .where(afterKey(from))
    .orderBy('ordinal')
    .orderBy('row_id')
    .orderBy('repetition');
}

/** Runs, their items and events: queries only. */
/** A run's source in the generated SQL (src/queries): a version's every row, its sessions mapped. */
const SAMPLE_SOURCE: RunSource = {
  datasetId: DummyValue.UUID,
  datasetName: DummyValue.STRING,
  versionId: DummyValue.UUID2,
  versionNumber: 1,
  partitionId: null,
  mapping: { input: 'question', session_id: 'conversation' },
  where: everyRow(),
};

@Injectable()
export class RunsRepository {
  constructor(
    private readonly db: Db,
    private readonly notifications: DatabaseNotifications,
  ) {}

  private get runs() {
    return this.db.repository(RunEntity);
  }

  save(run: Partial<RunEntity>): Promise<RunEntity> {
    const repo = this.runs;
    return repo.save(repo.create(run));
  }

  /** The workspace's run, or null (also when the run belongs to another workspace). */
  find(workspaceId: string, id: string): Promise<RunEntity | null> {
    return this.runs.findOne({ where: { id, workspaceId } });
  }

  /** Workspace-free, for who holds no workspace: the executor resolving its job's run, a signed file URL. */
  findUnscoped(id: string): Promise<RunEntity | null> {
    return this.runs.findOne({ where: { id } });
  }

  /** The newest succeeded run of the same SUT on the same dataset created before this one. */
  async previousSucceededId(run: {
    id: string;
    workspaceId: string;
    sutId: string;
    datasetId: string;
    createdAt: Date;
  }): Promise<string | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('runs')
        .select('id')
        .where('workspace_id', '=', run.workspaceId)
        .where('sut_id', '=', run.sutId)
        .where('dataset_id', '=', run.datasetId)
        .where('id', '<>', run.id)
        .where('created_at', '<', run.createdAt)
        .where('state', '=', 'succeeded')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1),
    );
    return rows[0]?.id ?? null;
  }

  findForUpdate(workspaceId: string, id: string): Promise<RunEntity | null> {
    return this.runs.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  /** Workspace-free, for the executor ending its job's run. */
  findForUpdateUnscoped(id: string): Promise<RunEntity | null> {
    return this.runs.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  page(filter: RunFilter, window: PageWindow): Promise<[RunEntity[], number]> {
    const { project, states } = filter;
    const gate = filter.gate && gateVerdictCondition(filter.gate);
    return entityPage(
      this.db,
      this.runs,
      (q) =>
        q
          .selectFrom('runs')
          .where('workspace_id', 'in', filter.workspaceIds)
          .$if(!!filter.sutId, (w) => w.where('sut_id', '=', filter.sutId!))
          .$if(!!filter.datasetId, (w) => w.where('dataset_id', '=', filter.datasetId!))
          .$if(!!filter.state, (w) => w.where(STATE_CONDITIONS[filter.state!]))
          .$if(!!states?.length, (w) => w.where((eb) => eb.or(states!.map((state) => STATE_CONDITIONS[state](eb)))))
          .$if(!!filter.tag, (w) => w.where((eb) => holds(eb, 'tags', filter.tag!)))
          .$if(!!project, (w) =>
            w.where((eb) =>
              eb.and([
                eb('workspace_id', '=', project!.workspaceId),
                eb.or([isAnyOf(eb, 'sut_id', project!.sutIds), isAnyOf(eb, 'dataset_id', project!.datasetIds)]),
              ]),
            ),
          )
          .$if(!!gate, (w) => w.where(gate!)),
      (matching) => matching.orderBy('created_at', 'desc').orderBy('id', 'desc'),
      window,
    );
  }

  /**
   * Creates the run's items from the source rows: a deterministic sample when asked (by a hash
   * of row id and seed), times the repetitions, with each row's session and turn by the mapped
   * session column and its dimension values. Returns how many items there are.
   *
   * Without a sample the rows go in chunks of `chunkRows`, in the rows' order, each chunk one
   * statement of the same unit of work: on the embedded database a statement runs on node's own
   * thread, and one statement over many rows held it for seconds, during which no request, timer
   * or health check answered and a keep-alive connection reused then was reset
   * (docs/performance.md#runs). Between chunks the embedded connection lets the event
   * loop turn once its calls have held it TURN_BUDGET_MS (BatchingPgliteConnection). Other
   * requests' statements still wait for the unit of work there (one connection); the rest of
   * their work does not. A conversation's turns count on from the session's last turn in the
   * chunks before. A sample is chosen over all the rows at once (one statement, as before).
   */
  @GenerateSql(
    {
      name: 'in chunks, by session',
      params: [DummyValue.UUID, DummyValue.UUID2, SAMPLE_SOURCE, { repetitions: 2, sample: null, chunkRows: 500 }],
    },
    {
      name: 'a seeded sample',
      params: [
        DummyValue.UUID,
        DummyValue.UUID2,
        SAMPLE_SOURCE,
        { repetitions: 1, sample: { size: 10, seed: 7 }, chunkRows: 500 },
      ],
    },
  )
  async materialize(
    runId: string,
    workspaceId: string,
    source: RunSource,
    opts: { repetitions: number; sample: { size: number; seed: number } | null; chunkRows: number },
  ): Promise<number> {
    let total = 0;
    let after: ChunkEnd | null = null;
    for (;;) {
      const [res] = await this.db.typed((q) =>
        q
          .with('chosen', (w) => chosenRows(w, source, opts, after))
          .with('inserted', (w) =>
            w
              .insertInto('run_items')
              .columns(MATERIALIZED_COLUMNS)
              .expression((eb) =>
                eb
                  .selectFrom('chosen as c')
                  .crossJoin(sql<{ rep: number }>`generate_series(1, ${opts.repetitions}::int)`.as('rep'))
                  .select([
                    sql<string>`${runId}::uuid`.as('run_id'),
                    sql<string>`${workspaceId}::uuid`.as('workspace_id'),
                    'c.row_id',
                    'rep.rep as repetition',
                    'c.ordinal',
                    'c.session_id',
                    // A conversation's turns count on from the session's last turn in the chunks before (none with a sample).
                    sql<number | null>`CASE WHEN c.session_id IS NULL THEN NULL
                      ELSE (row_number() OVER (PARTITION BY c.session_id, rep ORDER BY c.ordinal) + ${
                        opts.sample
                          ? 0
                          : sql`coalesce((SELECT max(i.turn) FROM run_items i
                              WHERE i.run_id = ${runId} AND i.session_id = c.session_id AND i.repetition = rep), 0)`
                      })::int END`.as('turn'),
                    'c.data',
                    'c.dimensions',
                  ]),
              )
              .returning(sql`1`.as('one')),
          )
          .selectNoFrom((eb) => {
            const last = eb.selectFrom('chosen as c').orderBy('c.ordinal', 'desc').orderBy('c.row_id', 'desc').limit(1);
            return [
              eb.selectFrom('inserted').select(countN()).as('n'),
              eb.selectFrom('chosen').select(countN()).as('rows'),
              last.select(sql<string>`c.ordinal::text`.as('ordinal')).as('ordinal'),
              last.select('c.row_id').as('row_id'),
            ];
          }),
      );
      total += res.n ?? 0;
      if (opts.sample || (res.rows ?? 0) < opts.chunkRows) return total;
      after = { ordinal: res.ordinal!, rowId: res.row_id! };
    }
  }

  /**
   * Copies another run's items (all, those whose call failed, or those that failed), fresh, for a
   * rerun; with `answers` (a run over recorded traces) their recorded answers too, scored again.
   */
  async materializeFrom(
    runId: string,
    workspaceId: string,
    fromRunId: string,
    mode: 'all' | 'errors' | 'failed',
    answers = false,
  ): Promise<number> {
    const which =
      mode === 'all' ? 'TRUE' : mode === 'errors' ? `i.status = 'error'` : `(i.status = 'error' OR i.passed = false)`;
    const kept = answers ? ', status, output, latency_ms, usage, cost_usd, error, trace_id, trajectory' : '';
    const rows: Array<{ n: number }> = await this.db.query(
      `WITH inserted AS (
         INSERT INTO run_items (run_id, workspace_id, row_id, repetition, ordinal, session_id, turn, data, dimensions${kept})
         SELECT $1, $2, i.row_id, i.repetition, i.ordinal, i.session_id, i.turn, i.data, i.dimensions${kept.replace(/, /g, ', i.')} FROM run_items i WHERE i.run_id = $3 AND ${which}
         RETURNING 1
       ) SELECT count(*)::int AS n FROM inserted`,
      [runId, workspaceId, fromRunId],
    );
    return rows[0].n;
  }

  /** The next page of items after `from`, in order (ITEM_ORDER), every column. */
  @GenerateSql(
    { name: 'the first page', params: [DummyValue.UUID, null, 100] },
    {
      name: 'after an item',
      params: [DummyValue.UUID, { ordinal: '1', row_id: DummyValue.UUID2, repetition: 1 }, 100],
    },
  )
  itemPage(runId: string, from: ItemKey | null, limit: number): Promise<RunItemRow[]> {
    return this.db.typed((q) => itemsAfter(q, runId, from).select(ITEM_COLUMNS).limit(limit).$castTo<RunItemRow>());
  }

  /**
   * The next page of items after `from` with what a diff reads: no row data, and the output as its
   * md5 (equal exactly when the outputs are, and null when there is none), the pending ones too.
   */
  diffItems(runId: string, from: ItemKey | null, limit: number): Promise<DiffItemRow[]> {
    return this.db.typed((q) =>
      itemsAfter(q, runId, from)
        .select(SUMMARY_COLUMNS)
        .select((eb) => eb.fn<string | null>('md5', ['output']).as('output'))
        .limit(limit)
        .$castTo<DiffItemRow>(),
    );
  }

  /** The dimension names of the run's rows, in no order. */
  async dimensionNames(runId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('run_items')
        .select((eb) => eb.fn<string>('jsonb_object_keys', ['dimensions']).as('name'))
        .distinct()
        .where('run_id', '=', runId),
    );
    return rows.map((r) => r.name);
  }

  itemsByIds(runId: string, rowIds: string[]): Promise<RunItemRow[]> {
    return this.db.typed((q) =>
      itemsAfter(q, runId, null)
        .select(ITEM_COLUMNS)
        .where('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)
        .$castTo<RunItemRow>(),
    );
  }

  /**
   * The next page of conversations with work left, after `from`: up to `limit` of them, each a
   * row alone or every turn of a session (and repetition), turns in order, the finished ones
   * too (the later turns see them as history). A conversation is found by its first item (a
   * row without a session, or a session's lowest turn) in item order, which is where the page
   * ends (`last`). One statement, so a page reads apart from any write. The session checks are
   * LIMIT 1 lookups in run_items_session_idx: as EXISTS, PostgreSQL may hash them over the whole
   * table once per page.
   */
  async conversations(
    runId: string,
    from: ItemKey | null,
    limit: number,
  ): Promise<{ conversations: RunItemRow[][]; last: ItemKey | null }> {
    const params: unknown[] = [runId, limit];
    const rows: Array<RunItemRow & { head: number; place: number }> = await this.db.query(
      `WITH heads AS (
         SELECT ${ITEM_COLUMN_LIST} FROM run_items h
          WHERE h.run_id = $1 ${after(from, params, 'h.')}
            AND CASE WHEN h.session_id IS NULL THEN ${unfinished('h.')}
                ELSE (SELECT 1 FROM run_items e WHERE e.run_id = $1 AND e.session_id = h.session_id AND e.repetition = h.repetition AND e.turn < h.turn LIMIT 1) IS NULL
                 AND (SELECT 1 FROM run_items u WHERE u.run_id = $1 AND u.session_id = h.session_id AND u.repetition = h.repetition AND ${unfinished('u.')} LIMIT 1) IS NOT NULL END
          ORDER BY ${ITEM_ORDER} LIMIT $2
       ), numbered AS (SELECT row_number() OVER (ORDER BY ${ITEM_ORDER}) AS head, heads.* FROM heads)
       SELECT n.head::int AS head, ${ITEM_COLUMNS.map((c) => `n.${c}`).join(', ')}, 0 AS place FROM numbered n
       UNION ALL
       SELECT n.head::int, ${ITEM_COLUMNS.map((c) => `i.${c}`).join(', ')}, 1 FROM numbered n
         JOIN run_items i ON i.run_id = $1 AND i.session_id = n.session_id AND i.repetition = n.repetition AND i.turn > n.turn
       ORDER BY head, place, turn, ordinal`,
      params,
    );
    const conversations: RunItemRow[][] = [];
    for (const { head, place: _place, ...item } of rows) (conversations[head - 1] ??= []).push(item);
    const first = conversations.at(-1)?.[0];
    return {
      conversations,
      last: first ? { ordinal: first.ordinal, row_id: first.row_id, repetition: first.repetition } : null,
    };
  }

  /** The next page of items with an answer (`scored`: and their scores), after `from`, with what a summary reads. */
  summaryItems(runId: string, from: ItemKey | null, limit: number, scored: boolean): Promise<SummaryItemRow[]> {
    return this.db.typed((q) =>
      itemsAfter(q, runId, from)
        .select(SUMMARY_COLUMNS)
        .where('status', '<>', 'pending')
        .$if(scored, (s) => s.where('scored_at', 'is not', null))
        .limit(limit)
        .$castTo<SummaryItemRow>(),
    );
  }

  session(runId: string, sessionId: string): Promise<RunItemRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('run_items')
        .select(ITEM_COLUMNS)
        .where('run_id', '=', runId)
        .where('session_id', '=', sessionId)
        .orderBy('repetition')
        .orderBy('turn')
        .orderBy('ordinal')
        .$castTo<RunItemRow>(),
    );
  }

  @GenerateSql({
    params: [
      DummyValue.UUID,
      DummyValue.UUID2,
      1,
      {
        status: 'done',
        output: 'x',
        latency_ms: 5,
        usage: null,
        cost_usd: null,
        extras: null,
        error: null,
        attempts: 1,
      },
    ],
  })
  async saveOutcome(runId: string, rowId: string, repetition: number, outcome: ItemOutcome): Promise<void> {
    const json = (value: object | null) => (value === null ? null : JSON.stringify(value));
    // Once per answer, thousands a minute: prepared, so it is planned once per connection.
    await this.db.preparedWrite('run_item_outcome', (q) =>
      q
        .updateTable('run_items')
        .set({
          status: outcome.status,
          output: outcome.output,
          latency_ms: outcome.latency_ms,
          usage: json(outcome.usage),
          cost_usd: outcome.cost_usd,
          extras: json(outcome.extras),
          error: json(outcome.error),
          attempts: outcome.attempts,
          trace_id: outcome.trace_id ?? null,
          trajectory: json(outcome.trajectory ?? null),
          called_at: now,
        })
        .where('run_id', '=', runId)
        .where('row_id', '=', rowId)
        .where('repetition', '=', repetition),
    );
  }

  /** What an item's own trace said (its trajectory, and tokens and cost where the answer gave none). */
  async saveTrace(
    runId: string,
    rowId: string,
    repetition: number,
    joined: Pick<RunItemRow, 'trajectory' | 'usage' | 'cost_usd'>,
  ): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('run_items')
        .set({
          trajectory: joined.trajectory === null ? null : JSON.stringify(joined.trajectory),
          usage: joined.usage === null ? null : JSON.stringify(joined.usage),
          cost_usd: joined.cost_usd,
        })
        .where('run_id', '=', runId)
        .where('row_id', '=', rowId)
        .where('repetition', '=', repetition),
    );
  }

  /** Writes the scores of many items in one statement. */
  async saveScores(
    runId: string,
    scored: Array<{ row_id: string; repetition: number; scores: Record<string, MetricScore>; passed: boolean | null }>,
  ): Promise<void> {
    if (!scored.length) return;
    await this.db.query(
      `UPDATE run_items i SET scores = s.scores, passed = s.passed, scored_at = now()
         FROM jsonb_to_recordset($2::jsonb) AS s(row_id uuid, repetition int, scores jsonb, passed boolean)
        WHERE i.run_id = $1 AND i.row_id = s.row_id AND i.repetition = s.repetition`,
      [runId, JSON.stringify(scored)],
    );
  }

  /** Outputs uploaded for an offline run, matched by row id (every repetition of the row). Returns the row ids the run does not have. */
  async uploadOutputs(runId: string, outcomes: Array<{ row_id: string } & ItemOutcome>): Promise<string[]> {
    const rows: Array<{ row_id: string; matched: boolean }> = await this.db.query(
      `WITH given AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS g(row_id uuid, status text, output text, latency_ms double precision, usage jsonb, cost_usd double precision, extras jsonb, error jsonb)),
            updated AS (
              UPDATE run_items i SET status = g.status, output = g.output, latency_ms = g.latency_ms, usage = g.usage, cost_usd = g.cost_usd, extras = g.extras, error = g.error, attempts = NULL, called_at = now(), scores = NULL, passed = NULL, scored_at = NULL
                FROM given g WHERE i.run_id = $1 AND i.row_id = g.row_id RETURNING i.row_id)
       SELECT g.row_id, EXISTS (SELECT 1 FROM updated u WHERE u.row_id = g.row_id) AS matched FROM given g`,
      [runId, JSON.stringify(outcomes)],
    );
    return rows.filter((r) => !r.matched).map((r) => r.row_id);
  }

  /**
   * The run's items by status: those pending or errored are counted in run_items_unanswered_idx
   * (which holds only them, so a finished run's count reads almost nothing), the rest are the
   * run's total (fixed when its items are created) less those.
   */
  async counts(
    run: Pick<RunEntity, 'id' | 'total'>,
  ): Promise<{ total: number; completed: number; errored: number; pending: number }> {
    const [{ errored, pending }] = await this.db.typed((q) =>
      q
        .selectFrom('run_items')
        .select([
          sql<number>`count(*) FILTER (WHERE status = 'error')::int`.as('errored'),
          sql<number>`count(*) FILTER (WHERE status = 'pending')::int`.as('pending'),
        ])
        .where('run_id', '=', run.id)
        .where('status', '<>', 'done'),
    );
    return { total: run.total, completed: run.total - errored - pending, errored, pending };
  }

  /** Items, and those finished (answered and scored) by status: where a resumed run's progress starts. */
  async finishedCounts(runId: string): Promise<{ total: number; done: number; completed: number; errored: number }> {
    const finished = sql<SqlBool>`NOT (status = 'pending' OR scored_at IS NULL)`;
    const [counts] = await this.db.typed((q) =>
      q
        .selectFrom('run_items')
        .select([
          sql<number>`count(*)::int`.as('total'),
          sql<number>`count(*) FILTER (WHERE ${finished})::int`.as('done'),
          sql<number>`count(*) FILTER (WHERE ${finished} AND status = 'done')::int`.as('completed'),
          sql<number>`count(*) FILTER (WHERE ${finished} AND status = 'error')::int`.as('errored'),
        ])
        .where('run_id', '=', runId),
    );
    return counts;
  }

  /**
   * Refreshes the planner's statistics of run_items. Without them (the embedded database has no
   * autovacuum; PostgreSQL's analyzes after a tenth of a large table has changed) a new run's id
   * is estimated at a few items, and a page after a key is planned as a bitmap scan of every item
   * after it, sorted: each page reads the rest of the run, quadratic in its items.
   */
  async analyzeItems(): Promise<void> {
    await this.db.query('ANALYZE run_items');
  }

  async setProgress(runId: string, counts: { completed: number; errored: number }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('runs')
        .set({ completed: counts.completed, errored: counts.errored, updated_at: now })
        .where('id', '=', runId),
    );
  }

  /** What a run's end leaves beside its tracked columns: its summary, verdict and final counts. */
  async saveEnd(
    runId: string,
    end: { summary: RunSummary; passed: boolean | null; completed: number; errored: number },
  ): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('runs')
        .set({
          summary: JSON.stringify(end.summary),
          passed: end.passed,
          completed: end.completed,
          errored: end.errored,
          updated_at: now,
        })
        .where('id', '=', runId),
    );
  }

  /** Appends an event and signals it to live streams in every process when its transaction commits. */
  async appendEvent(runId: string, workspaceId: string, type: string, data: Record<string, unknown>): Promise<void> {
    await this.db.typedWrite((q) =>
      q.insertInto('run_events').values({ run_id: runId, workspace_id: workspaceId, type, data: JSON.stringify(data) }),
    );
    await this.notifications.notify(RUN_EVENTS_CHANNEL, runId);
  }

  /** Whether the run has had a `state_changed` event to this state. */
  async hasStateEvent(runId: string, to: RunState): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('run_events')
        .select(sql<number>`1`.as('one'))
        .where('run_id', '=', runId)
        .where('type', '=', 'state_changed')
        .where(sql<string>`data->>'to'`, '=', to)
        .limit(1),
    );
    return rows.length > 0;
  }

  /**
   * Events after `after` (the bigint id, as text: pg answers int8 as a string; the service makes it a number), in the
   * order of the column: ordered by the text alias, event 10 would come before event 9.
   */
  events(runId: string, after: number, limit: number): Promise<RunEventRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('run_events')
        .select([sql<string>`id::text`.as('id'), 'type', 'at', 'data'])
        .where('run_id', '=', runId)
        .where('id', '>', String(after))
        .orderBy('run_events.id')
        .limit(limit)
        .$castTo<RunEventRow>(),
    );
  }

  /** A page of the run's items matching a query compiled over `i` (resultsContext), in its order then the items'; and their count. */
  async queryItems(
    runId: string,
    query: RowQuery,
    limit: number,
    offset: number,
  ): Promise<{ rows: RunItemRow[]; total: number }> {
    const matching = (q: QueryBuilder) =>
      q
        .selectFrom('run_items as i')
        .where('i.run_id', '=', runId)
        .$if(!!query.where, (w) => w.where(grouped(query.where!)));
    const [rows, [{ n }]] = await Promise.all([
      this.db.typed((q) =>
        orderedBy(matching(q).select(ITEM_COLUMNS), query.orderBy)
          .orderBy('i.ordinal')
          .orderBy('i.row_id')
          .orderBy('i.repetition')
          .limit(limit)
          .offset(offset)
          .$castTo<RunItemRow>(),
      ),
      this.db.typed((q) => matching(q).select(countN())),
    ]);
    return { rows, total: n };
  }
}
