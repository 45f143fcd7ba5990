import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { BulkWriter, type BulkValue } from '../../../libs/database/bulk-writer.js';
import { Db, TransactionRunner } from '../../../libs/database/unit-of-work.js';
import { JobHandler, OnJobSettled } from '../../../libs/queue/job-handler.decorator.js';
import { JobFailure } from '../../../libs/queue/job-outcome.js';
import { JobQueue } from '../../../libs/queue/job-queue.service.js';
import type { Job, JobContext } from '../../../libs/queue/job.types.js';
import { normaliseSpan } from '../../../libs/traces/conventions.js';
import { readRecordsAsync, readTraceFile, type ReadItem, type TraceFileFormat } from '../../../libs/traces/readers.js';
import type { CanonicalSpan, Convention } from '../../../libs/traces/span.types.js';
import { AppConfig } from '../../config/app-config.js';
import { DatasetsRepository } from '../datasets/datasets.repository.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { ColumnStatsCollector } from '../datasets/ingest/column-stats.js';
import { RowsRepository } from '../datasets/rows.repository.js';
import type { DatasetEntity } from '../datasets/entities/dataset.entity.js';
import { SecretsService } from '../workspaces/secrets.service.js';
import { pullConnection } from './connection-sources.js';
import { TRACE_ENRICH_JOB } from './trace-enrichment.js';
import { jsonbText } from './jsonb.js';
import { TracesRepository, type IngestRunRow } from './traces.repository.js';

export const TRACE_LAND_JOB = 'traces.land';
const STAGE_BATCH = 2000;
const DROP_BATCH = 500;

/** The columns of a trace dataset version, in this order (attributes last). */
export const SPAN_COLUMNS: Array<keyof CanonicalSpan> = [
  'trace_id', 'span_id', 'parent_span_id', 'session_id', 'user_id', 'name', 'kind', 'start_time', 'end_time', 'duration_ms', 'status', 'error',
  'input', 'output', 'model', 'tokens_input', 'tokens_output', 'tokens_total', 'cost', 'tool_calls', 'retrieved_documents', 'service_name', 'convention', 'attributes',
];

/** How a trace version maps onto the canonical fields runs and partitions use. */
export const TRACE_MAPPING = { input: 'input', session_id: 'session_id' };

interface LandPayload {
  ingest_run_id: string;
  [key: string]: string;
}

/** A span's row id: the same trace and span in the same dataset always get the same id, so landing twice writes once. */
export function spanRowId(datasetId: string, traceId: string, spanId: string): string {
  const h = createHash('sha1').update(`${datasetId}\u0000${traceId}\u0000${spanId}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Trace datasets found by name, created on first use: where landings and OTLP exports name their target. */
@Injectable()
export class TraceDatasets {
  constructor(
    private readonly db: Db,
    private readonly datasets: DatasetsRepository,
  ) {}

  /**
   * The id of the workspace's dataset of this name (compared case-insensitively), created as a
   * trace dataset when there is none; null when a test-case dataset has the name. Inside a unit
   * of work: concurrent first uses of one name create one dataset.
   */
  async findOrCreate(workspaceId: string, name: string, createdBy: string | null, description: string): Promise<string | null> {
    const find = async () => {
      const existing: Array<{ id: string; kind: string }> = await this.db.query('SELECT id, kind FROM datasets WHERE workspace_id = $1 AND lower(name) = lower($2)', [workspaceId, name]);
      return existing[0] ? (existing[0].kind === 'traces' ? existing[0].id : null) : undefined;
    };
    // The lock is only for creating: every OTLP export names its dataset, and most find it.
    const found = await find();
    if (found !== undefined) return found;
    await this.db.lock(`trace-dataset:${workspaceId}:${name.toLowerCase()}`);
    const raced = await find();
    if (raced !== undefined) return raced;
    return (await this.datasets.insert({ workspaceId, name, description, kind: 'traces', tags: ['traces'], createdBy })).id;
  }
}

/**
 * Lands an ingest run: reads its source, normalises every record, and in one transaction
 * stages the spans (COPY), writes those the dataset does not hold yet as a new version, keeps
 * every drop with its payload, and queues the version's enrichment. A retry after a crash
 * starts over from nothing (the transaction rolled back), so a landing is all or nothing.
 */
@Injectable()
export class TraceLanding {
  constructor(
    private readonly config: AppConfig,
    private readonly traces: TracesRepository,
    private readonly datasets: DatasetsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly rows: RowsRepository,
    private readonly secrets: SecretsService,
    private readonly bulk: BulkWriter,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly db: Db,
    private readonly traceDatasets: TraceDatasets,
  ) {}

  @JobHandler(TRACE_LAND_JOB, { maxAttempts: 3 })
  async land({ payload, signal }: JobContext<LandPayload>): Promise<{ landed: number; dropped: number; version_id: string | null }> {
    const run = await this.traces.findRun(payload.ingest_run_id, true);
    if (!run || run.state === 'succeeded' || run.state === 'failed' || run.state === 'cancelled') return { landed: run?.landed ?? 0, dropped: run?.dropped ?? 0, version_id: run?.version_id ?? null };
    await this.traces.updateRun(run.id, { state: 'running', started_at: new Date() });
    const source = await this.open(run, signal);
    return this.transactions.run(async () => {
      const dataset = await this.targetDataset(run);
      const outcome = await this.stageAndWrite(run, dataset, source, signal);
      await this.traces.updateRun(
        run.id,
        {
          state: 'succeeded',
          dataset_id: dataset.id,
          version_id: outcome.versionId,
          received: outcome.received,
          landed: outcome.landed,
          deduplicated: outcome.received - outcome.landed - outcome.dropped,
          dropped: outcome.dropped,
          drop_reasons: outcome.dropReasons,
          conventions: outcome.conventions,
          traces: outcome.traces,
          finished_at: new Date(),
          inline_records: null,
        },
      );
      if (run.connection_id) await this.traces.touchConnection(run.connection_id);
      return { landed: outcome.landed, dropped: outcome.dropped, version_id: outcome.versionId };
    });
  }

  @OnJobSettled(TRACE_LAND_JOB)
  async onSettled(job: Job<LandPayload>): Promise<void> {
    if (job.status === 'succeeded') return;
    const run = await this.traces.findRun(job.payload.ingest_run_id);
    if (!run || run.state === 'succeeded' || run.state === 'failed') return;
    await this.traces.updateRun(run.id, { state: job.status === 'cancelled' ? 'cancelled' : 'failed', error: { code: job.error?.code ?? job.status, message: job.error?.message ?? job.status }, finished_at: new Date() });
  }

  private async open(run: IngestRunRow, signal: AbortSignal): Promise<AsyncIterable<ReadItem>> {
    if (run.source_kind === 'inline') return readRecordsAsync(run.inline_records ?? []);
    if (run.source_kind === 'upload') {
      const upload = run.upload_id ? await this.traces.findUpload(run.workspace_id, run.upload_id) : null;
      if (!upload) throw new JobFailure('the upload was deleted before it landed', { code: 'upload_gone', retry: false });
      return readTraceFile(upload.path, upload.format as TraceFileFormat);
    }
    const connection = run.connection_id ? await this.traces.findConnection(run.workspace_id, run.connection_id) : null;
    if (!connection) throw new JobFailure('the connection was deleted before it landed', { code: 'connection_gone', retry: false });
    const secret = connection.secret_id ? await this.secrets.resolveValue(run.workspace_id, connection.secret_id) : null;
    const publicKey = connection.public_key_secret_id ? await this.secrets.resolveValue(run.workspace_id, connection.public_key_secret_id) : null;
    return pullConnection(connection, { secret, publicKey }, { maxRecords: run.options.max_records ?? 100_000, maxFileBytes: this.config.env.UPLOAD_MAX_BYTES, dataDir: this.config.dataDir, signal });
  }

  /** The run's trace dataset, locked for this landing: named by id, or by name (created as a trace dataset when missing). */
  private async targetDataset(run: IngestRunRow): Promise<DatasetEntity> {
    const id = run.dataset_id ?? run.options.dataset_id;
    if (id) {
      const dataset = await this.datasets.findForUpdate(id);
      if (!dataset || dataset.workspaceId !== run.workspace_id || dataset.kind !== 'traces') throw new JobFailure(`dataset ${id} is no longer a trace dataset of the workspace`, { code: 'dataset_gone', retry: false });
      return dataset;
    }
    const name = run.options.dataset_name ?? `traces ${new Date().toISOString().slice(0, 10)}`;
    const found = await this.traceDatasets.findOrCreate(run.workspace_id, name, run.created_by, 'Landed production traces');
    if (!found) throw new JobFailure(`"${name}" is a test-case dataset; land into a trace dataset`, { code: 'dataset_gone', retry: false });
    return (await this.datasets.findForUpdate(found))!;
  }

  /** Queues the per-trace enrichment of a version that landing wrote or sealed. */
  async queueEnrichment(workspaceId: string, datasetId: string, versionId: string, createdBy: string | null): Promise<void> {
    const enrichment = await this.traces.insertEnrichmentRun({ workspace_id: workspaceId, dataset_id: datasetId, version_id: versionId, trigger: 'landing', prices: null, created_by: createdBy });
    const job = await this.queue.enqueue({ type: TRACE_ENRICH_JOB, payload: { enrichment_run_id: enrichment.id }, workspaceId, targetType: 'dataset', targetId: datasetId, createdBy });
    await this.traces.updateEnrichmentRun(enrichment.id, { job_id: job.job.id });
  }

  private async stageAndWrite(run: IngestRunRow, dataset: DatasetEntity, source: AsyncIterable<ReadItem>, signal: AbortSignal) {
    await this.db.query('CREATE TEMP TABLE IF NOT EXISTS trace_stage (row_id uuid NOT NULL, ordinal bigint NOT NULL, data jsonb NOT NULL) ON COMMIT DROP');
    await this.db.query('TRUNCATE trace_stage');
    const next = dataset.latestVersion + 1;
    const keepUnmapped = run.options.keep_unmapped !== false;
    const convention = (run.options.convention ?? 'auto') as Convention | 'auto';
    let received = 0;
    let staged = 0;
    let dropped = 0;
    const dropReasons: Record<string, number> = {};
    const conventions: Record<string, number> = {};
    // A first landing that writes every span it stages (none repeated) has the version's column
    // statistics gathered on the way, as uploads do, instead of scanning the rows again (4-6 s per
    // 100,000 spans); otherwise they are computed from the rows.
    const collector = dataset.latestVersion === 0 ? new ColumnStatsCollector() : null;
    let spans: BulkValue[][] = [];
    let drops: Parameters<TracesRepository['appendDrops']>[0] = [];
    const flushSpans = async () => {
      if (!spans.length) return;
      const batch = spans;
      spans = [];
      await this.bulk.append('trace_stage', STAGE_COLUMNS, (async function* () {
        yield batch;
      })());
    };
    const flushDrops = async () => {
      await this.traces.appendDrops(drops);
      drops = [];
    };
    for await (const item of source) {
      received++;
      if (received % 1000 === 0) signal.throwIfAborted();
      const result = 'drop' in item ? { ok: false as const, drop: item.drop } : normaliseSpan(item.span, convention, { keepUnmapped });
      if (!result.ok) {
        dropped++;
        dropReasons[result.drop.reason] = (dropReasons[result.drop.reason] ?? 0) + 1;
        drops.push({ workspace_id: run.workspace_id, run_id: run.id, dataset_id: dataset.id, ordinal: dropped, reason: result.drop.reason, detail: result.drop.detail, source_ref: result.drop.source_ref, payload: result.drop.payload });
        if (drops.length >= DROP_BATCH) await flushDrops();
        continue;
      }
      const span = result.span;
      conventions[span.convention] = (conventions[span.convention] ?? 0) + 1;
      collector?.add(span as unknown as Record<string, unknown>);
      spans.push([spanRowId(dataset.id, span.trace_id, span.span_id), dataset.nextOrdinal + staged, jsonbText(span)]);
      staged++;
      if (spans.length >= STAGE_BATCH) await flushSpans();
    }
    await flushSpans();
    await flushDrops();
    // Spans the dataset already holds (any version still showing them) or that came twice are not written again.
    const [{ landed }]: Array<{ landed: number }> = await this.db.query(
      `WITH fresh AS (
         SELECT DISTINCT ON (s.row_id) s.row_id, s.ordinal, s.data FROM trace_stage s ORDER BY s.row_id, s.ordinal
       ), written AS (
         INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
         SELECT $1, f.row_id, $2, f.ordinal, f.data FROM fresh f
          WHERE NOT EXISTS (SELECT 1 FROM dataset_rows r WHERE r.dataset_id = $1 AND r.row_id = f.row_id AND r.removed_in IS NULL)
         RETURNING 1
       ) SELECT count(*)::int AS landed FROM written`,
      [dataset.id, next],
    );
    let versionId: string | null = null;
    let traces = 0;
    if (landed > 0) {
      const head = dataset.latestVersion ? await this.datasets.findVersionByNumber(dataset.id, dataset.latestVersion) : null;
      const columns = [...SPAN_COLUMNS.map(String), ...(head?.columns.map((c) => c.name).filter((c) => !SPAN_COLUMNS.includes(c as keyof CanonicalSpan)) ?? [])];
      const version = await this.datasetsService.createVersion(
        dataset,
        next,
        columns,
        { source: 'landed', message: run.options.message ?? `Landed ${landed} spans (${run.source_kind})`, changes: { inserted: landed, updated: 0, deleted: 0 } },
        run.created_by,
        collector && landed === staged ? collector.finish(columns, landed, collector.uncounted().length ? await this.rows.distinctCounts(dataset.id, next, collector.uncounted()) : {}) : undefined,
      );
      if (!Object.keys(version.mapping).length) {
        version.mapping = { ...TRACE_MAPPING };
        await this.datasets.saveVersion(version);
      }
      await this.datasets.setCounters(dataset.id, { latestVersion: next, nextOrdinal: dataset.nextOrdinal + staged });
      await this.traces.setDropsVersion(run.id, version.id);
      versionId = version.id;
      traces = await this.traces.countTraces(dataset.id, next);
      await this.queueEnrichment(run.workspace_id, dataset.id, version.id, run.created_by);
    }
    return { received, landed, dropped, dropReasons, conventions, traces, versionId };
  }
}

const STAGE_COLUMNS = [
  { name: 'row_id', type: 'uuid' as const },
  { name: 'ordinal', type: 'bigint' as const },
  { name: 'data', type: 'jsonb' as const },
];
