import { Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext, JobOf } from '#libs/queue/job.types.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import type { DatasetEntity } from '../datasets/entities/dataset.entity.js';
import type { DatasetVersionEntity } from '../datasets/entities/dataset-version.entity.js';
import { AppConfig } from '#libs/config/app-config.js';
import { jsonbText } from '#libs/database/jsonb-text.js';
import { joinLogRecords, type SpanLogRecord } from '#libs/traces/genai-events.js';
import type { CanonicalSpan, Drop } from '#libs/traces/span.types.js';
import { LandingListeners } from './landing-listeners.service.js';
import { LiveLogsRepository, type WaitingLogRecord } from './logs/live-logs.repository.js';
import { TracesRepository } from './traces.repository.js';
import { TRACE_LIVE_LAND_JOB, TRACE_LIVE_SEAL_JOB, TRACE_LIVE_SEALED_JOB } from './traces.jobs.js';
import { LiveRepository, type LiveStreamRow } from './live.repository.js';
import { SPAN_COLUMNS, TRACE_MAPPING } from './trace-datasets.service.js';
import { TraceLanding } from './trace-landing.job.js';

/** Spans one landing transaction moves from the inbox: bounded, so other writers to the dataset wait at most one batch. */
export const LIVE_LAND_BATCH = 5000;
/** Waiting log records one landing transaction looks at (joins to their landed spans, or marks as waiting for them). */
export const LOG_JOIN_BATCH = 5000;
/** How often a landing that waits for a file landing of the same dataset (its reserved version) looks again. */
const RESERVATION_POLL_MS = 500;

/**
 * The landing half of live landing. Acknowledged spans wait in the dataset's inbox; this job
 * moves them, a bounded batch per transaction, into the dataset's **open head**: a candidate
 * version that grows with each batch. The head is sealed (its statistics computed, its
 * enrichment queued) and a new one opened when it is older than the stream's window, holds
 * `max_spans`, was promoted, or another version of the dataset was made after it; a delayed job
 * seals an idle head when its window ends. One landing job per dataset runs at a time
 * (`land_queued`); exports that arrive meanwhile are taken by the same job.
 */
@Injectable()
export class LiveLanding {
  private readonly logger = new Logger('LiveLanding');

  constructor(
    private readonly live: LiveRepository,
    private readonly datasets: DatasetWritesService,
    private readonly landing: TraceLanding,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly listeners: LandingListeners,
    private readonly logs: LiveLogsRepository,
    private readonly traces: TracesRepository,
    private readonly config: AppConfig,
  ) {}

  @JobHandler(TRACE_LIVE_LAND_JOB, { maxAttempts: 5 })
  async land({
    payload,
    signal,
    progress,
  }: JobContext<typeof TRACE_LIVE_LAND_JOB>): Promise<{ taken: number; landed: number; joined: number }> {
    let taken = 0;
    let landed = 0;
    let joined = 0;
    for (;;) {
      const batch = await this.transactions.run(() => this.landBatch(payload.dataset_id));
      if (batch.blocked) {
        // A file landing is writing the next version: the spans wait, acknowledged, in the inbox.
        await sleep(RESERVATION_POLL_MS, undefined, { signal });
        continue;
      }
      taken += batch.taken;
      landed += batch.landed;
      joined += batch.joined;
      if (batch.taken || batch.joined) await progress({ taken, landed, joined });
      signal.throwIfAborted();
      if (batch.taken === LIVE_LAND_BATCH || batch.logs === LOG_JOIN_BATCH) continue;
      // Spans acknowledged while this batch landed are taken by this job too; otherwise the next export queues a new one.
      if (!(await this.transactions.run(() => this.live.releaseOrRetake(payload.dataset_id))))
        return { taken, landed, joined };
    }
  }

  @OnJobSettled(TRACE_LIVE_LAND_JOB)
  async onLandSettled(job: JobOf<typeof TRACE_LIVE_LAND_JOB>): Promise<void> {
    if (job.status === 'succeeded') return;
    // A landing that failed for good gives up its claim: the spans stay in the inbox and the next export queues a new landing.
    this.logger.warn(`live landing of dataset ${job.payload.dataset_id} ${job.status}: ${job.error?.message ?? ''}`);
    await this.transactions.run(() =>
      this.live.releaseOrRetake(job.payload.dataset_id).then(async (again) => {
        if (again)
          await this.queue.enqueue({
            type: TRACE_LIVE_LAND_JOB,
            payload: { dataset_id: job.payload.dataset_id },
            workspaceId: job.workspaceId,
            targetType: 'dataset',
            targetId: job.payload.dataset_id,
            createdBy: job.createdBy,
            runAfter: new Date(Date.now() + 30_000),
          });
      }),
    );
  }

  /** Seals the head a window ago opened, if it is still the open one (an export or a manual seal may have sealed it since). */
  @JobHandler(TRACE_LIVE_SEAL_JOB, { maxAttempts: 5 })
  async sealExpired({ payload }: JobContext<typeof TRACE_LIVE_SEAL_JOB>): Promise<{ sealed: boolean }> {
    return this.transactions.run(async () => {
      const dataset = await this.datasets.lock(payload.dataset_id);
      const stream = dataset ? await this.live.find(dataset.id, true) : null;
      if (!dataset || !stream || stream.head_version_id !== payload.version_id) return { sealed: false };
      const due = stream.head_opened_at ? stream.head_opened_at.getTime() + stream.window_seconds * 1000 : 0;
      if (due > Date.now()) {
        // The window was lengthened since: come back when it ends.
        await this.scheduleSeal(dataset, stream.head_version_id, new Date(due));
        return { sealed: false };
      }
      await this.seal(dataset, stream);
      return { sealed: true };
    });
  }

  /** Seals the dataset's open head now (POST /traces/datasets/{id}/live:seal); inside the caller's unit of work. */
  async sealNow(datasetId: string): Promise<string | null> {
    const dataset = await this.datasets.lock(datasetId);
    const stream = dataset ? await this.live.find(datasetId, true) : null;
    if (!dataset || !stream?.head_version_id) return null;
    const sealed = stream.head_version_id;
    await this.seal(dataset, stream, true);
    return sealed;
  }

  /**
   * One bounded batch from the inbox into the open head (opened here when there is none that may
   * grow), then the waiting log records joined to the spans that have landed.
   */
  private async landBatch(
    datasetId: string,
  ): Promise<{ taken: number; landed: number; logs: number; joined: number; blocked?: boolean }> {
    const none = { taken: 0, landed: 0, logs: 0, joined: 0 };
    const dataset = await this.datasets.lock(datasetId);
    const stream = dataset ? await this.live.find(datasetId, true) : null;
    if (!dataset || !stream) return none;
    if (await this.datasets.isReserved(dataset.id)) return { ...none, blocked: true };
    let head = stream.head_version_id ? await this.datasets.version(stream.head_version_id) : null;
    if (head && !this.mayGrow(dataset, stream, head)) {
      await this.seal(dataset, stream);
      head = null;
    }
    const room = head ? stream.max_spans - stream.head_spans : stream.max_spans;
    const limit = Math.min(LIVE_LAND_BATCH, room);
    // The spans this batch takes: log records that waited for them are joined once they land.
    const taking = await this.live.nextRowIds(dataset.id, limit);
    const { taken, landed, version } = taking.length
      ? await this.datasets.appendFrom(
          dataset,
          head ?? this.nextVersion(stream),
          this.live.inboxSource(dataset.id, limit),
        )
      : { taken: 0, landed: 0, version: null };
    if (taken) {
      if (landed && head) {
        await this.live.setHead(dataset.id, { versionId: head.id, spans: stream.head_spans + landed, opened: false });
      } else if (landed && version) await this.opened(dataset, stream, version, landed);
      // Spans of this stream dropped on receipt belong with the version their export's spans joined.
      if (version) await this.live.claimDrops(stream.ingest_run_id, version.id);
      await this.live.noteLanded(dataset.id, taken);
      await this.live.addRunCounts(stream.ingest_run_id, { landed, deduplicated: taken - landed }, version?.id);
    }
    const logs = await this.joinLogs(dataset, stream, landed ? (head ?? version) : head, taking);
    if (landed || logs.joined) await this.listeners.landed(dataset.workspaceId, dataset.id);
    return { taken, landed, ...logs };
  }

  private nextVersion(stream: LiveStreamRow) {
    return {
      leadingColumns: SPAN_COLUMNS,
      fields: { source: 'landed' as const, message: `Live spans (OTLP) from ${new Date().toISOString()}` },
      createdBy: stream.created_by,
      mapping: TRACE_MAPPING,
    };
  }

  /** A version this landing opened becomes the open head, sealed when its window ends. */
  private async opened(
    dataset: DatasetEntity,
    stream: LiveStreamRow,
    version: DatasetVersionEntity,
    spans: number,
  ): Promise<void> {
    await this.live.setHead(dataset.id, { versionId: version.id, spans, opened: true });
    await this.scheduleSeal(dataset, version.id, new Date(Date.now() + stream.window_seconds * 1000));
  }

  /**
   * Joins waiting log records to their spans' rows: those not looked at yet and those of the spans
   * just taken. A span's row gets its new data in the open head (changed in place when it landed
   * there, else a new record of the row; a head is opened when none is). Records whose span has not
   * landed wait for it (marked seen); records older than OTLP_LOG_PENDING_SECONDS are dropped
   * (`span_not_received`), as are those over a span's limit.
   */
  private async joinLogs(
    dataset: DatasetEntity,
    stream: LiveStreamRow,
    head: DatasetVersionEntity | null,
    taking: string[],
  ): Promise<{ logs: number; joined: number }> {
    const retention = this.config.env.OTLP_LOG_PENDING_SECONDS;
    const expired = await this.logs.takeExpired(dataset.id, retention, LOG_JOIN_BATCH);
    const drops: Drop[] = expired.map((r) =>
      logDrop(r, 'span_not_received', `its span did not arrive within OTLP_LOG_PENDING_SECONDS (${retention} s)`),
    );
    const candidates = await this.logs.candidates(dataset.id, taking, LOG_JOIN_BATCH);
    const byRow = new Map<string, WaitingLogRecord[]>();
    for (const c of candidates) byRow.set(c.row_id, [...(byRow.get(c.row_id) ?? []), c]);
    const rows = await this.datasets.currentRows(dataset.id, [...byRow.keys()]);
    const revisions: Array<{ row_id: string; data: string }> = [];
    let joined = 0;
    for (const row of rows) {
      const waiting = byRow.get(row.row_id)!;
      const outcome = joinLogRecords(
        row.data as unknown as CanonicalSpan,
        waiting.map((w) => (w.data as { record: SpanLogRecord }).record),
      );
      joined += outcome.added;
      if (outcome.added) revisions.push({ row_id: row.row_id, data: jsonbText(outcome.span) });
      const over = new Set(outcome.overflow.map((r) => r.key));
      for (const w of waiting.filter((x) => over.has(x.key)))
        drops.push(logDrop(w, 'log_records_over_limit', 'its span keeps the most log records it may already'));
    }
    const landedRows = new Set(rows.map((r) => r.row_id));
    await this.logs.remove(
      dataset.id,
      candidates.filter((c) => landedRows.has(c.row_id)),
    );
    const waiting = [...byRow.keys()].filter((id) => !landedRows.has(id));
    await this.logs.markSeen(dataset.id, waiting);
    let open = head;
    if (revisions.length) {
      const { version } = await this.datasets.reviseRows(dataset, head ?? this.nextVersion(stream), revisions);
      if (!head && version) await this.opened(dataset, stream, version, 0);
      open = version;
    }
    if (drops.length) {
      const reasons: Record<string, number> = {};
      for (const d of drops) reasons[d.reason] = (reasons[d.reason] ?? 0) + 1;
      // A dropped log record is received and dropped at once in the stream's counters (joined ones count nowhere there).
      const { droppedBefore } = await this.live.addRunCounts(stream.ingest_run_id, {
        received: drops.length,
        dropped: drops.length,
        dropReasons: reasons,
      });
      await this.traces.appendDrops(
        {
          workspace_id: dataset.workspaceId,
          run_id: stream.ingest_run_id,
          dataset_id: dataset.id,
          version_id: open?.id ?? null,
        },
        droppedBefore + 1,
        drops,
      );
    }
    // Records now waiting for their span are looked at again when it lands, or dropped once too old.
    if (waiting.length)
      await this.queue.enqueue({
        type: TRACE_LIVE_LAND_JOB,
        payload: { dataset_id: dataset.id },
        workspaceId: dataset.workspaceId,
        targetType: 'dataset',
        targetId: dataset.id,
        createdBy: stream.created_by,
        runAfter: new Date(Date.now() + (retention + 1) * 1000),
      });
    return { logs: candidates.length + expired.length, joined };
  }

  /** Whether the open head may take more spans: still a candidate, still the newest version, inside its window and under its size. */
  private mayGrow(dataset: DatasetEntity, stream: LiveStreamRow, head: DatasetVersionEntity): boolean {
    const age = stream.head_opened_at ? Date.now() - stream.head_opened_at.getTime() : 0;
    return (
      head.state === 'candidate' &&
      head.number === dataset.latestVersion &&
      age < stream.window_seconds * 1000 &&
      stream.head_spans < stream.max_spans
    );
  }

  /**
   * Ends the open head: the next batch opens a new one. Its statistics, content hash and enrichment
   * are read from its rows (the whole dataset: a version holds its parent's rows). A seal asked for
   * (`live:seal`, `inline`) does it at once; one made while landing queues it as a job of its own
   * (in this transaction, so a crash loses none), run without the dataset's and the stream's
   * locks: done in place it took seconds, and every export waited that long for its answer.
   */
  private async seal(dataset: DatasetEntity, stream: LiveStreamRow, inline = false): Promise<void> {
    const headId = stream.head_version_id;
    await this.live.setHead(dataset.id, { versionId: null, spans: 0, opened: false });
    if (!headId) return;
    if (inline) await this.finishSeal(dataset.id, headId);
    else
      await this.queue.enqueue({
        type: TRACE_LIVE_SEALED_JOB,
        payload: { dataset_id: dataset.id, version_id: headId },
        workspaceId: dataset.workspaceId,
        targetType: 'dataset',
        targetId: dataset.id,
        createdBy: stream.created_by,
      });
  }

  @JobHandler(TRACE_LIVE_SEALED_JOB, { maxAttempts: 5 })
  async finishSealed({ payload }: JobContext<typeof TRACE_LIVE_SEALED_JOB>): Promise<{ rows: number }> {
    return this.transactions.run(() => this.finishSeal(payload.dataset_id, payload.version_id));
  }

  /** A sealed head's statistics and content hash from its rows, then its enrichment queued. */
  private async finishSeal(datasetId: string, versionId: string): Promise<{ rows: number }> {
    const sealed = await this.datasets.sealVersion(datasetId, versionId);
    if (!sealed) return { rows: 0 };
    await this.landing.queueEnrichment(sealed.workspaceId, datasetId, sealed.id, sealed.createdBy);
    return { rows: sealed.rowCount };
  }

  private async scheduleSeal(dataset: DatasetEntity, versionId: string, at: Date): Promise<void> {
    await this.queue.enqueue({
      type: TRACE_LIVE_SEAL_JOB,
      payload: { dataset_id: dataset.id, version_id: versionId },
      workspaceId: dataset.workspaceId,
      targetType: 'dataset',
      targetId: dataset.id,
      runAfter: at,
    });
  }
}

/** A log record dropped by the landing, with the record and its span's ids as its payload. */
function logDrop(record: WaitingLogRecord, reason: Drop['reason'], detail: string): Drop {
  const data = record.data as { trace_id?: string; span_id?: string; record?: SpanLogRecord };
  return {
    reason,
    detail: `log record${data.record?.event_name ? ` ${data.record.event_name}` : ''} of span ${data.span_id ?? '?'} (trace ${data.trace_id ?? '?'}): ${detail}`,
    source_ref: `span ${data.span_id ?? '?'}`,
    payload: data,
  };
}
