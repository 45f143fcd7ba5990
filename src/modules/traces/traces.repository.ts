import { Injectable } from '@nestjs/common';
import { sql, type Insertable, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import { BulkWriter, type BulkValue } from '#libs/database/bulk-writer.js';
import { jsonbText } from '#libs/database/jsonb-text.js';
import type { DB } from '#libs/database/schema.js';
import { countN, type PageWindow } from '#libs/database/typed-fragments.js';
import type { NarrowedRow, QueryBuilder } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { TRACKED_COLUMNS, trackedRecord, type TrackedColumns } from '#libs/queue/tracked-job.js';
import type { Drop } from '#libs/traces/span.types.js';
import { feedbackEquality } from './feedback/feedback.repository.js';

/** The records landing and enrichment jobs settle: the queue keeps their tracked columns. */
export const TRACE_INGEST_RUNS = trackedRecord('trace_ingest_runs', 'ingest_run_id');
export const TRACE_ENRICHMENT_RUNS = trackedRecord('trace_enrichment_runs', 'enrichment_run_id');

const now = sql<Date>`now()`;
const count = sql<number>`count(*)::int`.as('n');

/** A trace source connection as read (`SELECT *`): its kind and settings narrowed. */
export type TraceConnectionRow = NarrowedRow<
  Selectable<DB['trace_connections']>,
  { kind: 'otlp_file_url' | 'langfuse' | 'phoenix'; settings: { project?: string; page_size?: number } }
>;

export type TraceUploadRow = Selectable<DB['trace_uploads']>;

export interface IngestOptions {
  dataset_id?: string;
  dataset_name?: string;
  convention: string;
  keep_unmapped: boolean;
  message?: string;
  max_records?: number;
}

/** What an ingest run's reads answer (never its inline records unless asked): the ordinal base as a number. */
const RUN_COLUMNS = [
  'id',
  'workspace_id',
  'dataset_id',
  'version_id',
  'source_kind',
  'upload_id',
  'connection_id',
  'options',
  'received',
  'landed',
  'deduplicated',
  'dropped',
  'drop_reasons',
  'conventions',
  'traces',
  'created_by',
  'version_number',
  ...TRACKED_COLUMNS,
] as const;
const ordinalBase = sql<number | null>`ordinal_base::float8`.as('ordinal_base');

type IngestRuns = Selectable<DB['trace_ingest_runs']>;

/**
 * An ingest run as read: its tracked columns, source, options and counts narrowed; `ordinal_base`
 * (the ordinal of the landing's first span) read as a number; `pending` (acknowledged spans of a
 * live stream not landed yet) only by findRun; its inline records only when asked.
 */
export type IngestRunRow = NarrowedRow<
  Pick<IngestRuns, (typeof RUN_COLUMNS)[number] | 'ordinal_base'>,
  TrackedColumns & {
    source_kind: 'upload' | 'inline' | 'connection' | 'otlp';
    options: IngestOptions;
    drop_reasons: Record<string, number>;
    conventions: Record<string, number>;
    ordinal_base: number | null;
  }
> &
  Partial<NarrowedRow<Pick<IngestRuns, 'inline_records'>, { inline_records: unknown[] | null }>> & {
    pending?: number;
  };

/** What a landing records on its run (its tracked columns are the queue's). */
export type IngestRunUpdate = Partial<
  Pick<
    IngestRunRow,
    | 'dataset_id'
    | 'version_id'
    | 'version_number'
    | 'ordinal_base'
    | 'received'
    | 'landed'
    | 'deduplicated'
    | 'dropped'
    | 'drop_reasons'
    | 'conventions'
    | 'traces'
  > & { inline_records: null }
>;

const DROP_COLUMNS = [
  'id',
  'run_id',
  'version_id',
  'ordinal',
  'reason',
  'detail',
  'source_ref',
  'payload',
  'created_at',
] as const;

export type DropRow = Pick<Selectable<DB['trace_drops']>, (typeof DROP_COLUMNS)[number]>;

export type GroundTruthRow = NarrowedRow<
  Selectable<DB['trace_ground_truth_versions']>,
  { items: Array<Record<string, unknown>> }
>;

/** Its progress is `{done, total}`, counted in traces. */
export type EnrichmentRunRow = NarrowedRow<
  Selectable<DB['trace_enrichment_runs']>,
  TrackedColumns & {
    trigger: 'landing' | 'recompute';
    prices: Record<string, { input_per_1m: number; output_per_1m: number }> | null;
  }
>;

/** A page of enrichment results: each result's data, with the total matching. */
type EnrichmentPageRow = NarrowedRow<
  Pick<Selectable<DB['trace_enrichment_results']>, 'data'>,
  { data: Record<string, unknown> }
> & { total: number };

export type TagRow = Pick<Selectable<DB['trace_tags']>, 'trace_id' | 'tag' | 'created_by' | 'created_at'>;

/** What a page of enrichment results keeps (each member given: one condition on the result). */
export interface EnrichmentFilter {
  trace_id?: string;
  session_id?: string;
  has_error?: 'true' | 'false';
  loop_detected?: 'true' | 'false';
  /** A model any LLM span of the trace used. */
  model?: string;
  tag?: string;
  min_duration_ms?: number;
  max_duration_ms?: number;
  min_cost?: number;
  /** End-user feedback of the trace (trace_feedback): of this name, equal to this value. */
  feedback_name?: string;
  feedback_value?: string;
  /** A score of the trace (trace_scores, each evaluator's metric's newest): of this evaluator and metric, passed or failed, at most this score. */
  score_evaluator?: string;
  score_metric?: string;
  score_passed?: 'true' | 'false';
  score_max?: number;
}

/** What a page of enrichment results sorts by (numbers as numbers; then by trace id). */
const ENRICHMENT_SORTS = {
  duration_ms: sql`(e.data->>'duration_ms')::float8`,
  cost: sql`(e.data->>'cost')::float8`,
  tokens_total: sql`(e.data->>'tokens_total')::float8`,
  error_count: sql`(e.data->>'error_count')::float8`,
  span_count: sql`(e.data->>'span_count')::float8`,
  start_time: sql`e.data->>'start_time'`,
  trace_id: sql.ref('e.trace_id'),
};

export type EnrichmentSort = keyof typeof ENRICHMENT_SORTS;

/** The conditions of `f` on enrichment results, alias `e`. */
function enrichmentConditions(f: EnrichmentFilter): Array<RawBuilder<SqlBool>> {
  const at = (key: string) => sql`(e.data->>${sql.lit(key)})`;
  return [
    f.trace_id && sql<SqlBool>`e.trace_id = ${f.trace_id}`,
    f.session_id && sql<SqlBool>`e.data->>'session_id' = ${f.session_id}`,
    f.has_error && sql<SqlBool>`${at('has_error')}::boolean = ${f.has_error}::boolean`,
    f.loop_detected && sql<SqlBool>`${at('loop_detected')}::boolean = ${f.loop_detected}::boolean`,
    f.model && sql<SqlBool>`e.data->'models' ? ${f.model}`,
    f.min_duration_ms !== undefined && sql<SqlBool>`${at('duration_ms')}::float8 >= ${f.min_duration_ms}`,
    f.max_duration_ms !== undefined && sql<SqlBool>`${at('duration_ms')}::float8 <= ${f.max_duration_ms}`,
    f.min_cost !== undefined && sql<SqlBool>`coalesce(${at('cost')}::float8, 0) >= ${f.min_cost}`,
    f.tag &&
      sql<SqlBool>`EXISTS (SELECT 1 FROM trace_tags t WHERE t.version_id = e.version_id AND t.trace_id = e.trace_id AND t.tag = ${f.tag})`,
    (f.feedback_name !== undefined || f.feedback_value !== undefined) && feedbackCondition(f),
    (f.score_evaluator !== undefined ||
      f.score_metric !== undefined ||
      f.score_passed !== undefined ||
      f.score_max !== undefined) &&
      scoreCondition(f),
  ].filter((c): c is RawBuilder<SqlBool> => !!c);
}

/** The trace has end-user feedback of `feedback_name` (any, without), equal to `feedback_value` (any, without). */
function feedbackCondition(f: EnrichmentFilter): RawBuilder<SqlBool> {
  const name = f.feedback_name === undefined ? sql`TRUE` : sql`f.name = ${f.feedback_name}`;
  let value = sql`TRUE`;
  if (f.feedback_value !== undefined) {
    const equals = feedbackEquality(f.feedback_value);
    value = sql`(f.value_string = ${equals.text}${
      equals.boolean === undefined ? sql`` : sql` OR f.value_boolean = ${equals.boolean}`
    }${equals.number === undefined ? sql`` : sql` OR f.value_number = ${equals.number}`})`;
  }
  return sql<SqlBool>`EXISTS (SELECT 1 FROM trace_feedback f WHERE f.workspace_id = e.workspace_id AND f.trace_id = e.trace_id AND ${name} AND ${value})`;
}

/**
 * The trace has a score that `f` keeps: among each evaluator's metric's newest score record (the
 * highest evaluator version, then the latest scored, as `trace_score_of` answers), one of
 * `score_evaluator` and `score_metric` (any, without), passed or failed, with a score at most `score_max`.
 */
function scoreCondition(f: EnrichmentFilter): RawBuilder<SqlBool> {
  const evaluator = f.score_evaluator === undefined ? sql`TRUE` : sql`sc.evaluator_name = ${f.score_evaluator}`;
  const metric = f.score_metric === undefined ? sql`TRUE` : sql`sc.metric = ${f.score_metric}`;
  const passed = f.score_passed === undefined ? sql`TRUE` : sql`n.passed = ${f.score_passed}::boolean`;
  const max = f.score_max === undefined ? sql`TRUE` : sql`n.score <= ${f.score_max}`;
  return sql<SqlBool>`EXISTS (SELECT 1 FROM (SELECT DISTINCT ON (sc.evaluator_name, sc.metric) sc.score, sc.passed
      FROM trace_scores sc
     WHERE sc.workspace_id = e.workspace_id AND sc.dataset_id = e.dataset_id AND sc.trace_id = e.trace_id AND ${evaluator} AND ${metric}
     ORDER BY sc.evaluator_name, sc.metric, sc.evaluator_version DESC, sc.scored_at DESC, sc.id) n
   WHERE ${passed} AND ${max})`;
}

/** A list of values as one `text[]` parameter. */
const textArray = (values: string[]) => sql<string[]>`${values}::text[]`;

/** Trace sources, ingest runs and their drops, ground truth, enrichment and tags: queries only. */
@Injectable()
export class TracesRepository {
  constructor(
    private readonly db: Db,
    private readonly bulk: BulkWriter,
  ) {}

  // Connections

  async insertConnection(
    row: Pick<
      TraceConnectionRow,
      | 'workspace_id'
      | 'name'
      | 'kind'
      | 'url'
      | 'settings'
      | 'secret_id'
      | 'public_key_secret_id'
      | 'dataset_id'
      | 'created_by'
    >,
  ): Promise<TraceConnectionRow> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('trace_connections')
        .values({ ...row, settings: JSON.stringify(row.settings) })
        .returningAll()
        .$castTo<TraceConnectionRow>(),
    );
    return created;
  }

  async connectionNameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'trace_connections', { column: 'workspace_id', value: workspaceId }, name);
  }

  listConnections(workspaceId: string): Promise<TraceConnectionRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_connections')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .orderBy((eb) => eb.fn('lower', ['name']))
        .orderBy('id')
        .$castTo<TraceConnectionRow>(),
    );
  }

  async findConnection(workspaceId: string, id: string): Promise<TraceConnectionRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_connections')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .$castTo<TraceConnectionRow>(),
    );
    return rows[0] ?? null;
  }

  async touchConnection(id: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q.updateTable('trace_connections').set({ last_landed_at: now }).where('id', '=', id),
    );
  }

  // Uploads

  async insertUpload(row: Omit<Insertable<DB['trace_uploads']>, 'created_at'>): Promise<TraceUploadRow> {
    const [created] = await this.db.typed((q) => q.insertInto('trace_uploads').values(row).returningAll());
    return created;
  }

  async findUpload(workspaceId: string, id: string): Promise<TraceUploadRow | null> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('trace_uploads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
    );
    return rows[0] ?? null;
  }

  // Ingest runs

  async insertRun(
    row: Pick<
      IngestRunRow,
      'workspace_id' | 'dataset_id' | 'source_kind' | 'upload_id' | 'connection_id' | 'options' | 'created_by'
    > & { inline_records: unknown[] | null },
  ): Promise<IngestRunRow> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('trace_ingest_runs')
        .values({
          workspace_id: row.workspace_id,
          dataset_id: row.dataset_id,
          source_kind: row.source_kind,
          upload_id: row.upload_id,
          connection_id: row.connection_id,
          inline_records: row.inline_records ? JSON.stringify(row.inline_records) : null,
          options: JSON.stringify(row.options),
          created_by: row.created_by,
        })
        .returning([...RUN_COLUMNS, ordinalBase])
        .$castTo<IngestRunRow>(),
    );
    return created;
  }

  /** The workspace's ingest run, or null (also when it belongs to another workspace). */
  findRun(workspaceId: string, id: string): Promise<IngestRunRow | null> {
    return this.selectRun(id, workspaceId, false);
  }

  /** Workspace-free, for the landing resolving its job's run (with its inline records when asked). */
  findRunUnscoped(id: string, withRecords = false): Promise<IngestRunRow | null> {
    return this.selectRun(id, null, withRecords);
  }

  private async selectRun(id: string, workspaceId: string | null, withRecords: boolean): Promise<IngestRunRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_ingest_runs')
        .select([...RUN_COLUMNS, ordinalBase])
        .$if(withRecords, (s) => s.select('inline_records'))
        .select((eb) =>
          eb.fn
            .coalesce(
              eb
                .selectFrom('trace_live_streams as s')
                .select('s.pending')
                .whereRef('s.ingest_run_id', '=', 'trace_ingest_runs.id'),
              eb.lit(0),
            )
            .as('pending'),
        )
        .where('id', '=', id)
        .$if(workspaceId !== null, (s) => s.where('workspace_id', '=', workspaceId!))
        .$castTo<IngestRunRow>(),
    );
    return rows[0] ?? null;
  }

  /** What a landing found and made (objects stored as jsonb); its tracked columns are the queue's (`TrackedRecords`). */
  async updateRun(id: string, fields: IngestRunUpdate): Promise<void> {
    if (!Object.keys(fields).length) return;
    const { drop_reasons: dropReasons, conventions, ...plain } = fields;
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_ingest_runs')
        .set({
          ...plain,
          drop_reasons: dropReasons && JSON.stringify(dropReasons),
          conventions: conventions && JSON.stringify(conventions),
          updated_at: now,
        })
        .where('id', '=', id),
    );
  }

  // Drops

  /** An ingest run's drops, numbered on from `firstOrdinal` in the order given. */
  async appendDrops(
    of: {
      workspace_id: string;
      run_id: string;
      dataset_id: string | null;
      /** The version the spans would have joined, when already known (file landings set it when they finish). */
      version_id?: string | null;
    },
    firstOrdinal: number,
    drops: readonly Drop[],
  ): Promise<void> {
    if (!drops.length) return;
    const rows: BulkValue[][] = drops.map((d, i) => [
      of.workspace_id,
      of.run_id,
      of.dataset_id,
      of.version_id ?? null,
      firstOrdinal + i,
      d.reason,
      d.detail,
      d.source_ref,
      jsonbText(d.payload ?? null),
    ]);
    await this.bulk.append(
      'trace_drops',
      [
        { name: 'workspace_id', type: 'uuid' },
        { name: 'run_id', type: 'uuid' },
        { name: 'dataset_id', type: 'uuid' },
        { name: 'version_id', type: 'uuid' },
        { name: 'ordinal', type: 'integer' },
        { name: 'reason', type: 'text' },
        { name: 'detail', type: 'text' },
        { name: 'source_ref', type: 'text' },
        { name: 'payload', type: 'jsonb' },
      ],
      [rows],
    );
  }

  async setDropsVersion(runId: string, versionId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q.updateTable('trace_drops').set({ version_id: versionId }).where('run_id', '=', runId),
    );
  }

  async clearDrops(runId: string): Promise<void> {
    await this.db.typedWrite((q) => q.deleteFrom('trace_drops').where('run_id', '=', runId));
  }

  runDrops(runId: string, reason: string | undefined, limit: number, offset: number): Promise<DropRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_drops')
        .select(DROP_COLUMNS)
        .where('run_id', '=', runId)
        .$if(reason !== undefined, (s) => s.where('reason', '=', reason!))
        .orderBy('ordinal')
        .limit(limit)
        .offset(offset),
    );
  }

  versionDrops(versionId: string, reason: string | undefined, limit: number, offset: number): Promise<DropRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_drops')
        .select(DROP_COLUMNS)
        .where('version_id', '=', versionId)
        .$if(reason !== undefined, (s) => s.where('reason', '=', reason!))
        .orderBy('created_at')
        .orderBy('run_id')
        .orderBy('ordinal')
        .limit(limit)
        .offset(offset),
    );
  }

  // Ground truth

  async insertGroundTruth(
    row: Pick<
      GroundTruthRow,
      'workspace_id' | 'dataset_id' | 'version_id' | 'message' | 'items' | 'item_count' | 'created_by'
    >,
  ): Promise<GroundTruthRow> {
    await this.db.lock(`ground-truth:${row.version_id}`);
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('trace_ground_truth_versions')
        .values((eb) => ({
          ...row,
          number: eb
            .selectFrom('trace_ground_truth_versions')
            .select((s) => s(s.fn.coalesce(s.fn.max('number'), s.lit(0)), '+', s.lit(1)).as('next'))
            .where('version_id', '=', row.version_id),
          items: JSON.stringify(row.items),
        }))
        .returningAll()
        .$castTo<GroundTruthRow>(),
    );
    return created;
  }

  async groundTruth(versionId: string, number?: number): Promise<GroundTruthRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_ground_truth_versions')
        .selectAll()
        .where('version_id', '=', versionId)
        .$if(!!number, (s) => s.where('number', '=', number!))
        .orderBy('number', 'desc')
        .limit(1)
        .$castTo<GroundTruthRow>(),
    );
    return rows[0] ?? null;
  }

  async groundTruthNumbers(versionId: string): Promise<number[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_ground_truth_versions')
        .select('number')
        .where('version_id', '=', versionId)
        .orderBy('number', 'desc'),
    );
    return rows.map((r) => r.number);
  }

  // Enrichment

  async insertEnrichmentRun(
    row: Pick<EnrichmentRunRow, 'workspace_id' | 'dataset_id' | 'version_id' | 'trigger' | 'prices' | 'created_by'>,
  ): Promise<EnrichmentRunRow> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('trace_enrichment_runs')
        .values({ ...row, prices: row.prices ? JSON.stringify(row.prices) : null })
        .returningAll()
        .$castTo<EnrichmentRunRow>(),
    );
    return created;
  }

  /** Workspace-free, for the enricher resolving its job's run. */
  async findEnrichmentRunUnscoped(id: string): Promise<EnrichmentRunRow | null> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('trace_enrichment_runs').selectAll().where('id', '=', id).$castTo<EnrichmentRunRow>(),
    );
    return rows[0] ?? null;
  }

  async latestEnrichmentRun(versionId: string): Promise<EnrichmentRunRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_enrichment_runs')
        .selectAll()
        .where('version_id', '=', versionId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .$castTo<EnrichmentRunRow>(),
    );
    return rows[0] ?? null;
  }

  async clearEnrichment(versionId: string): Promise<void> {
    await this.db.typedWrite((q) => q.deleteFrom('trace_enrichment_results').where('version_id', '=', versionId));
  }

  async appendEnrichment(
    workspaceId: string,
    datasetId: string,
    versionId: string,
    results: Array<{ trace_id: string; data: unknown }>,
  ): Promise<void> {
    if (!results.length) return;
    await this.bulk.append(
      'trace_enrichment_results',
      [
        { name: 'workspace_id', type: 'uuid' },
        { name: 'dataset_id', type: 'uuid' },
        { name: 'version_id', type: 'uuid' },
        { name: 'trace_id', type: 'text' },
        { name: 'data', type: 'jsonb' },
      ],
      [results.map((r) => [workspaceId, datasetId, versionId, r.trace_id, JSON.stringify(r.data)])],
    );
  }

  /** A page of the version's enrichment results that `filter` keeps, sorted, with the total matching. */
  async enrichmentPage(
    versionId: string,
    filter: EnrichmentFilter,
    sort: { by: EnrichmentSort; direction: 'asc' | 'desc' },
    window: PageWindow,
  ): Promise<{ items: Array<Record<string, unknown>>; total: number }> {
    const matching = (q: QueryBuilder) =>
      enrichmentConditions(filter).reduce(
        (query, condition) => query.where(condition),
        q.selectFrom('trace_enrichment_results as e').where('e.version_id', '=', versionId),
      );
    const key = ENRICHMENT_SORTS[sort.by];
    const rows = await this.db.typed((q) =>
      matching(q)
        .select(['e.data', sql<number>`count(*) OVER ()::int`.as('total')])
        .orderBy(sort.direction === 'desc' ? sql`${key} DESC NULLS LAST` : sql`${key} ASC NULLS LAST`)
        .orderBy('e.trace_id')
        .limit(window.take)
        .offset(window.skip)
        .$castTo<EnrichmentPageRow>(),
    );
    // Past the last result the window counts none: the total is counted apart.
    const total =
      rows[0]?.total ?? (window.skip > 0 ? (await this.db.typed((q) => matching(q).select(countN())))[0].n : 0);
    return { items: rows.map((r) => r.data), total };
  }

  // Tags

  listTags(versionId: string, traceId?: string, tag?: string): Promise<TagRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_tags')
        .select(['trace_id', 'tag', 'created_by', 'created_at'])
        .where('version_id', '=', versionId)
        .$if(traceId !== undefined, (s) => s.where('trace_id', '=', traceId!))
        .$if(tag !== undefined, (s) => s.where('tag', '=', tag!))
        .orderBy('trace_id')
        .orderBy('tag'),
    );
  }

  async putTags(
    row: { workspace_id: string; dataset_id: string; version_id: string; created_by: string | null },
    traceIds: string[],
    tags: string[],
    replace: boolean,
  ): Promise<void> {
    if (replace)
      await this.db.typedWrite((q) =>
        q
          .deleteFrom('trace_tags')
          .where('version_id', '=', row.version_id)
          .where((eb) =>
            eb.and([
              eb('trace_id', '=', eb.fn.any(textArray(traceIds))),
              eb.not(eb('tag', '=', eb.fn.any(textArray(tags)))),
            ]),
          ),
      );
    if (!tags.length) return;
    // Every tag on every trace: the two lists unnested and crossed; a tag a trace has already stays.
    await this.db.typedWrite((q) =>
      q
        .insertInto('trace_tags')
        .columns(['workspace_id', 'dataset_id', 'version_id', 'trace_id', 'tag', 'created_by'])
        .expression((eb) =>
          eb
            .selectFrom([
              sql<{ trace_id: string }>`unnest(${textArray(traceIds)})`.as<'t'>(sql`t(trace_id)`),
              sql<{ tag: string }>`unnest(${textArray(tags)})`.as<'g'>(sql`g(tag)`),
            ])
            .select((s) => [
              s.val(row.workspace_id).as('workspace_id'),
              s.val(row.dataset_id).as('dataset_id'),
              s.val(row.version_id).as('version_id'),
              't.trace_id',
              'g.tag',
              s.val(row.created_by).as('created_by'),
            ]),
        )
        .onConflict((oc) => oc.columns(['version_id', 'trace_id', 'tag']).doNothing()),
    );
  }

  async deleteTags(versionId: string, traceId: string | undefined, tag: string | undefined): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .with('gone', (w) =>
          w
            .deleteFrom('trace_tags')
            .where('version_id', '=', versionId)
            .$if(traceId !== undefined, (s) => s.where('trace_id', '=', traceId!))
            .$if(tag !== undefined, (s) => s.where('tag', '=', tag!))
            .returning('tag'),
        )
        .selectFrom('gone')
        .select(count),
    );
    return row.n;
  }
}
