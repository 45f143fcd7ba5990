import { Injectable } from '@nestjs/common';
import type { Principal } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { normaliseSpan } from '#libs/traces/conventions.js';
import { normaliseLogRecord, type PendingLogRecord } from '#libs/traces/genai-events.js';
import { MAX_LOG_RECORDS_PER_EXPORT, type LogReadItem } from '#libs/traces/otlp-logs.js';
import type { ReadItem } from '#libs/traces/readers.js';
import type { CanonicalSpan, Drop } from '#libs/traces/span.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import { spanRowId, TraceDatasets } from './trace-datasets.service.js';
import { jsonbText } from '#libs/database/jsonb-text.js';
import { TRACE_LIVE_LAND_JOB } from './traces.jobs.js';
import { LiveStreamsService } from './live-streams.service.js';
import { LiveRepository } from './live.repository.js';
import { LiveLogsRepository } from './logs/live-logs.repository.js';
import { TraceErrors } from './traces.errors.js';
import { TracesRepository } from './traces.repository.js';

/** Spans without a `service.name` (and without the dataset header) land in the dataset of this name: what OpenTelemetry SDKs report for an unnamed service. */
export const UNKNOWN_SERVICE = 'unknown_service';
/** Seconds an exporter is told to wait (Retry-After) when a dataset's pending spans are over OTLP_MAX_PENDING_SPANS. */
export const BACKPRESSURE_RETRY_SECONDS = 5;

/** The header (HTTP) or metadata key (gRPC) that names the trace dataset an export lands in. */
export const DATASET_HEADER = 'x-ews-dataset';
export const MAX_DATASET_NAME = 200;

/** The dataset an export names, trimmed; a name that is empty, too long or has control characters is 400 otlp_dataset_header_invalid. */
export function otlpDatasetName(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const name = raw.trim();
  if (!name || name.length > MAX_DATASET_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new DomainError(
      TraceErrors.otlp_dataset_header_invalid,
      `${DATASET_HEADER} must be 1 to ${MAX_DATASET_NAME} characters without control characters`,
      { field: DATASET_HEADER },
    );
  }
  return name;
}

export interface ExportOutcome {
  accepted: number;
  rejected: number;
  message: string;
}

/**
 * The acknowledging half of live landing: an OTLP export's spans are normalised, grouped by
 * their trace dataset (the `x-ews-dataset` header, else the resource's `service.name`, created
 * as a trace dataset on first use), and written to the dataset's inbox with the export's drops
 * and counters in one transaction, committed before the exporter is answered, so an
 * acknowledged span survives a crash. A landing job moves them into the dataset's open head
 * version (LiveLanding).
 */
@Injectable()
export class LiveIngestService {
  constructor(
    private readonly config: AppConfig,
    private readonly live: LiveRepository,
    private readonly streams: LiveStreamsService,
    private readonly traces: TracesRepository,
    private readonly traceDatasets: TraceDatasets,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly logs: LiveLogsRepository,
  ) {}

  async export(
    caller: Principal,
    workspaceId: string,
    datasetName: string | undefined,
    items: ReadItem[],
  ): Promise<ExportOutcome> {
    const byDataset = groupByDataset(
      items,
      datasetName,
      (item) => {
        if ('drop' in item) return { ok: false, drop: item.drop };
        const result = normaliseSpan(item.span, 'auto', { keepUnmapped: true });
        return result.ok ? { ok: true, record: result.span } : result;
      },
      (span) => span.service_name,
    );
    return this.receiveAll(
      caller,
      workspaceId,
      byDataset,
      'span',
      (name, id, entry) => this.admit(name, id, entry),
      (id, entry) => this.receive(caller, workspaceId, id, entry),
    );
  }

  /**
   * An OTLP log export (POST /v1/logs, LogsService/Export): each record with trace context waits,
   * acknowledged, in its dataset's log inbox (the same dataset its spans go to: the header's, else
   * the resource's `service.name`) until the landing joins it to its span's row; a record without
   * one is dropped (counted, kept with the stream's drops). Durable before the answer, like spans.
   */
  async exportLogs(
    caller: Principal,
    workspaceId: string,
    datasetName: string | undefined,
    items: LogReadItem[],
  ): Promise<ExportOutcome> {
    if (items.length > MAX_LOG_RECORDS_PER_EXPORT)
      throw new DomainError(
        CommonErrors.payload_too_large,
        `The export holds ${items.length} log records, more than ${MAX_LOG_RECORDS_PER_EXPORT}; send smaller batches (the batch log record processor's maxExportBatchSize)`,
        { limit: MAX_LOG_RECORDS_PER_EXPORT },
      );
    const byDataset = groupByDataset(
      items,
      datasetName,
      (item) => {
        if ('drop' in item) return { ok: false, drop: item.drop };
        const result = normaliseLogRecord(item.record);
        return result.ok ? { ok: true, record: result.log } : result;
      },
      (log) => log.service_name,
    );
    return this.receiveAll(
      caller,
      workspaceId,
      byDataset,
      'log record',
      (name, id, entry) => this.admitLogs(name, id, entry),
      (id, entry) => this.receiveLogs(caller, workspaceId, id, entry),
    );
  }

  /** An export's share of each dataset admitted, then received in one unit of work; answers OTLP's partial success. */
  private async receiveAll<T>(
    caller: Principal,
    workspaceId: string,
    byDataset: Map<string, ExportEntry<T>>,
    noun: string,
    admit: (name: string, datasetId: string, entry: ExportEntry<T>) => Promise<void>,
    receive: (datasetId: string, entry: ExportEntry<T>) => Promise<string>,
  ): Promise<ExportOutcome> {
    if (!byDataset.size) return { accepted: 0, rejected: 0, message: '' };
    const datasets = new Map<string, string>();
    for (const name of [...byDataset.keys()].sort())
      datasets.set(name, await this.datasetNamed(workspaceId, name, caller));
    for (const [name, entry] of byDataset) await admit(name, datasets.get(name)!, entry);
    let dropsRunId = '';
    await this.transactions.run(async () => {
      // Streams are locked in dataset-id order, so two exports to the same datasets never wait on each other in a cycle.
      for (const [name, entry] of [...byDataset].sort(([a], [b]) => datasets.get(a)!.localeCompare(datasets.get(b)!))) {
        const runId = await receive(datasets.get(name)!, entry);
        if (entry.drops.length) dropsRunId = runId;
      }
    });
    return exportOutcome([...byDataset.values()], dropsRunId, noun);
  }

  /** The trace dataset of this name, created on first use; a test-case dataset of the name is refused. */
  private async datasetNamed(workspaceId: string, name: string, caller: Principal): Promise<string> {
    const id = await this.transactions.run(() =>
      this.traceDatasets.findOrCreate(workspaceId, name, caller.userId, 'Live spans received over OTLP'),
    );
    if (!id)
      throw new DomainError(
        TraceErrors.trace_dataset_invalid,
        `"${name}" is a test-case dataset of the workspace; name a trace dataset in the x-ews-dataset header (or a new name: it is created as a trace dataset)`,
        { dataset_name: name },
      );
    return id;
  }

  /** Refuses (429, Retry-After) an export that would put more than OTLP_MAX_PENDING_SPANS in the dataset's inbox. */
  private async admit(name: string, datasetId: string, entry: ExportEntry<CanonicalSpan>): Promise<void> {
    const stream = await this.live.find(datasetId);
    if (!stream || !entry.records.length) return;
    if (stream.pending + entry.records.length > this.config.env.OTLP_MAX_PENDING_SPANS)
      throw backpressure(name, datasetId, 'spans', stream.pending, this.config.env.OTLP_MAX_PENDING_SPANS);
  }

  /** Refuses (429, Retry-After) an export that would leave more than OTLP_MAX_PENDING_SPANS log records waiting in the dataset's log inbox. */
  private async admitLogs(name: string, datasetId: string, entry: ExportEntry<PendingLogRecord>): Promise<void> {
    if (!entry.records.length) return;
    const waiting = await this.logs.count(datasetId);
    if (waiting + entry.records.length > this.config.env.OTLP_MAX_PENDING_SPANS)
      throw backpressure(name, datasetId, 'log records', waiting, this.config.env.OTLP_MAX_PENDING_SPANS);
  }

  /**
   * One dataset's share of an export, inside the export's unit of work: its spans into the inbox,
   * the stream's counts, its drops, and a landing queued unless one is; answers the stream's ingest run.
   */
  private async receive(
    caller: Principal,
    workspaceId: string,
    datasetId: string,
    entry: ExportEntry<CanonicalSpan>,
  ): Promise<string> {
    const stream = await this.streams.open(datasetId, workspaceId, caller.userId);
    const added = await this.live.enqueueSpans(
      datasetId,
      entry.records.map((span) => ({
        row_id: spanRowId(datasetId, span.trace_id, span.span_id),
        data: jsonbText(span),
      })),
    );
    const { wasQueued } = await this.live.noteReceived(datasetId, added);
    const { droppedBefore } = await this.live.addRunCounts(stream.ingest_run_id, {
      received: entry.records.length + entry.drops.length,
      // Spans already waiting in the inbox (an exporter retrying a batch it was not answered for) are duplicates now; spans already landed are counted when the landing meets them.
      deduplicated: entry.records.length - added,
      dropped: entry.drops.length,
      dropReasons: countBy(entry.drops, (d) => d.reason),
      conventions: countBy(entry.records, (s) => s.convention),
    });
    await this.traces.appendDrops(
      {
        workspace_id: workspaceId,
        run_id: stream.ingest_run_id,
        dataset_id: datasetId,
        // The version the export's spans join: the landing claims it when it lands them; with none to land, the open head.
        version_id: added > 0 ? null : stream.head_version_id,
      },
      droppedBefore + 1,
      entry.drops,
    );
    if (added > 0 && !wasQueued) await this.queueLanding(caller, workspaceId, datasetId);
    return stream.ingest_run_id;
  }

  /**
   * One dataset's share of a log export, inside the export's unit of work: its records into the
   * log inbox (a record it holds already, an exporter's retry, is not added again), its drops
   * counted on the stream (received and dropped at once), and a landing queued unless one is.
   */
  private async receiveLogs(
    caller: Principal,
    workspaceId: string,
    datasetId: string,
    entry: ExportEntry<PendingLogRecord>,
  ): Promise<string> {
    const stream = await this.streams.open(datasetId, workspaceId, caller.userId);
    const added = await this.logs.enqueue(
      datasetId,
      entry.records.map(({ service_name: _service, ...log }) => ({
        row_id: spanRowId(datasetId, log.trace_id, log.span_id),
        key: log.record.key,
        data: jsonbText(log),
      })),
    );
    const { wasQueued } = await this.live.noteReceived(datasetId, 0, added);
    if (entry.drops.length) {
      const { droppedBefore } = await this.live.addRunCounts(stream.ingest_run_id, {
        received: entry.drops.length,
        dropped: entry.drops.length,
        dropReasons: countBy(entry.drops, (d) => d.reason),
      });
      await this.traces.appendDrops(
        {
          workspace_id: workspaceId,
          run_id: stream.ingest_run_id,
          dataset_id: datasetId,
          version_id: stream.head_version_id,
        },
        droppedBefore + 1,
        entry.drops,
      );
    }
    if (added > 0 && !wasQueued) await this.queueLanding(caller, workspaceId, datasetId);
    return stream.ingest_run_id;
  }

  private async queueLanding(caller: Principal, workspaceId: string, datasetId: string): Promise<void> {
    await this.queue.enqueue({
      type: TRACE_LIVE_LAND_JOB,
      payload: { dataset_id: datasetId },
      workspaceId,
      targetType: 'dataset',
      targetId: datasetId,
      createdBy: caller.userId,
    });
  }
}

function backpressure(name: string, datasetId: string, what: string, pending: number, limit: number): DomainError {
  return new DomainError(
    TraceErrors.otlp_backpressure,
    `Dataset "${name}" has ${pending} acknowledged ${what} still landing (at most ${limit}); retry in ${BACKPRESSURE_RETRY_SECONDS} s`,
    { dataset_id: datasetId, pending_spans: pending, retry_after_seconds: BACKPRESSURE_RETRY_SECONDS },
    { 'Retry-After': String(BACKPRESSURE_RETRY_SECONDS) },
  );
}

interface ExportEntry<T> {
  records: T[];
  drops: Drop[];
}

type Normalised<T> = { ok: true; record: T } | { ok: false; drop: Drop };

/**
 * An export's records by the dataset they go to (the header's, else each record's service name);
 * its drops are kept with the header's dataset, else with the first dataset the export writes to.
 */
function groupByDataset<I, T>(
  items: I[],
  datasetName: string | undefined,
  normalise: (item: I) => Normalised<T>,
  serviceOf: (record: T) => string | null,
): Map<string, ExportEntry<T>> {
  const byDataset = new Map<string, ExportEntry<T>>();
  const group = (name: string) => {
    let entry = byDataset.get(name);
    if (!entry) byDataset.set(name, (entry = { records: [], drops: [] }));
    return entry;
  };
  const drops: Drop[] = [];
  for (const item of items) {
    const result = normalise(item);
    if (result.ok) group(datasetName ?? (serviceOf(result.record) || UNKNOWN_SERVICE)).records.push(result.record);
    else drops.push(result.drop);
  }
  if (drops.length) group(datasetName ?? byDataset.keys().next().value ?? UNKNOWN_SERVICE).drops.push(...drops);
  return byDataset;
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** What OTLP's partial_success says: how many records were rejected, why, the first of them, and where they are kept. */
function exportOutcome<T>(entries: ExportEntry<T>[], dropsRunId: string, noun: string): ExportOutcome {
  const accepted = entries.reduce((n, e) => n + e.records.length, 0);
  const drops = entries.flatMap((e) => e.drops);
  if (!drops.length) return { accepted, rejected: 0, message: '' };
  const reasons = Object.entries(countBy(drops, (d) => d.reason))
    .map(([reason, n]) => `${reason} (${n})`)
    .join(', ');
  const first = drops[0];
  return {
    accepted,
    rejected: drops.length,
    message: `${drops.length} ${noun}${drops.length === 1 ? '' : 's'} rejected: ${reasons}; the first, ${first.source_ref}: ${first.detail}. GET /traces/runs/${dropsRunId}/drops lists them with their payloads`,
  };
}
