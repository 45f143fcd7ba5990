import { Injectable } from '@nestjs/common';
import type { Principal } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { normaliseSpan } from '#libs/traces/conventions.js';
import type { ReadItem } from '#libs/traces/readers.js';
import type { CanonicalSpan, Drop } from '#libs/traces/span.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import { spanRowId, TraceDatasets } from './trace-datasets.service.js';
import { jsonbText } from '#libs/database/jsonb-text.js';
import { TRACE_LIVE_LAND_JOB } from './traces.jobs.js';
import { LiveStreamsService } from './live-streams.service.js';
import { LiveRepository } from './live.repository.js';
import { TraceErrors } from './traces.errors.js';
import { TracesRepository } from './traces.repository.js';

/** Spans without a `service.name` (and without the dataset header) land in the dataset of this name: what OpenTelemetry SDKs report for an unnamed service. */
export const UNKNOWN_SERVICE = 'unknown_service';
/** Seconds an exporter is told to wait (Retry-After) when a dataset's pending spans are over OTLP_MAX_PENDING_SPANS. */
export const BACKPRESSURE_RETRY_SECONDS = 5;

/** The header (HTTP) or metadata key (gRPC) that names the trace dataset an export lands in. */
export const DATASET_HEADER = 'x-ews-dataset';
const MAX_DATASET_NAME = 200;

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
  ) {}

  async export(
    caller: Principal,
    workspaceId: string,
    datasetName: string | undefined,
    items: ReadItem[],
  ): Promise<ExportOutcome> {
    const byDataset = groupByDataset(items, datasetName);
    if (!byDataset.size) return { accepted: 0, rejected: 0, message: '' };
    const datasets = new Map<string, string>();
    for (const name of [...byDataset.keys()].sort())
      datasets.set(name, await this.datasetNamed(workspaceId, name, caller));
    for (const [name, entry] of byDataset) await this.admit(name, datasets.get(name)!, entry);
    let dropsRunId = '';
    await this.transactions.run(async () => {
      // Streams are locked in dataset-id order, so two exports to the same datasets never wait on each other in a cycle.
      for (const [name, entry] of [...byDataset].sort(([a], [b]) => datasets.get(a)!.localeCompare(datasets.get(b)!))) {
        const runId = await this.receive(caller, workspaceId, datasets.get(name)!, entry);
        if (entry.drops.length) dropsRunId = runId;
      }
    });
    return exportOutcome([...byDataset.values()], dropsRunId);
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
  private async admit(name: string, datasetId: string, entry: ExportEntry): Promise<void> {
    const stream = await this.live.find(datasetId);
    if (!stream || !entry.spans.length || stream.pending + entry.spans.length <= this.config.env.OTLP_MAX_PENDING_SPANS)
      return;
    throw new DomainError(
      TraceErrors.otlp_backpressure,
      `Dataset "${name}" has ${stream.pending} acknowledged spans still landing (at most ${this.config.env.OTLP_MAX_PENDING_SPANS}); retry in ${BACKPRESSURE_RETRY_SECONDS} s`,
      { dataset_id: stream.dataset_id, pending_spans: stream.pending, retry_after_seconds: BACKPRESSURE_RETRY_SECONDS },
      { 'Retry-After': String(BACKPRESSURE_RETRY_SECONDS) },
    );
  }

  /**
   * One dataset's share of an export, inside the export's unit of work: its spans into the inbox,
   * the stream's counts, its drops, and a landing queued unless one is; answers the stream's ingest run.
   */
  private async receive(
    caller: Principal,
    workspaceId: string,
    datasetId: string,
    entry: ExportEntry,
  ): Promise<string> {
    const stream = await this.streams.open(datasetId, workspaceId, caller.userId);
    const added = await this.live.enqueueSpans(
      datasetId,
      entry.spans.map((span) => ({ row_id: spanRowId(datasetId, span.trace_id, span.span_id), data: jsonbText(span) })),
    );
    const { wasQueued } = await this.live.noteReceived(datasetId, added);
    const { droppedBefore } = await this.live.addRunCounts(stream.ingest_run_id, {
      received: entry.spans.length + entry.drops.length,
      // Spans already waiting in the inbox (an exporter retrying a batch it was not answered for) are duplicates now; spans already landed are counted when the landing meets them.
      deduplicated: entry.spans.length - added,
      dropped: entry.drops.length,
      dropReasons: countBy(entry.drops, (d) => d.reason),
      conventions: countBy(entry.spans, (s) => s.convention),
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
    if (added > 0 && !wasQueued) {
      await this.queue.enqueue({
        type: TRACE_LIVE_LAND_JOB,
        payload: { dataset_id: datasetId },
        workspaceId,
        targetType: 'dataset',
        targetId: datasetId,
        createdBy: caller.userId,
      });
    }
    return stream.ingest_run_id;
  }
}

interface ExportEntry {
  spans: CanonicalSpan[];
  drops: Drop[];
}

/**
 * An export's spans by the dataset they go to (the header's, else each span's service name); its
 * drops are kept with the header's dataset, else with the first dataset the export writes to.
 */
function groupByDataset(items: ReadItem[], datasetName: string | undefined): Map<string, ExportEntry> {
  const byDataset = new Map<string, ExportEntry>();
  const group = (name: string) => {
    let entry = byDataset.get(name);
    if (!entry) byDataset.set(name, (entry = { spans: [], drops: [] }));
    return entry;
  };
  const drops: Drop[] = [];
  for (const item of items) {
    const result =
      'drop' in item
        ? { ok: false as const, drop: item.drop }
        : normaliseSpan(item.span, 'auto', { keepUnmapped: true });
    if (result.ok) group(datasetName ?? (result.span.service_name || UNKNOWN_SERVICE)).spans.push(result.span);
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

/** What OTLP's partial_success says: how many spans were rejected, why, the first of them, and where they are kept. */
function exportOutcome(entries: ExportEntry[], dropsRunId: string): ExportOutcome {
  const accepted = entries.reduce((n, e) => n + e.spans.length, 0);
  const drops = entries.flatMap((e) => e.drops);
  if (!drops.length) return { accepted, rejected: 0, message: '' };
  const reasons = Object.entries(countBy(drops, (d) => d.reason))
    .map(([reason, n]) => `${reason} (${n})`)
    .join(', ');
  const first = drops[0];
  return {
    accepted,
    rejected: drops.length,
    message: `${drops.length} span${drops.length === 1 ? '' : 's'} rejected: ${reasons}; the first, ${first.source_ref}: ${first.detail}. GET /traces/runs/${dropsRunId}/drops lists them with their payloads`,
  };
}
