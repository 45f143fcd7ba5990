import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WordHashSet } from '#libs/common/hash-set.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { isTerminal, type JobContext, type JobOf } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { normaliseSpan } from '#libs/traces/conventions.js';
import { readRecordsAsync, readTraceFile, type ReadItem, type TraceFileFormat } from '#libs/traces/readers.js';
import type { Convention, Drop } from '#libs/traces/span.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import type { PlacedRow, VersionReservation } from '../datasets/dataset-writes.types.js';
import { ColumnStatsCollector } from '../datasets/ingest/column-stats.js';
import type { DatasetEntity } from '../datasets/entities/dataset.entity.js';
import { SecretsService } from '../secrets/secrets.service.js';
import { pullConnection } from './connection-sources.js';
import { TRACE_ENRICH_JOB, TRACE_LAND_JOB } from './traces.jobs.js';
import { jsonbStoredText, jsonbText } from '#libs/database/jsonb-text.js';
import { LandingListeners } from './landing-listeners.service.js';
import { TRACE_INGEST_RUNS, TracesRepository, type IngestRunRow } from './traces.repository.js';
import { SPAN_COLUMNS, spanRowId, TRACE_MAPPING, TraceDatasets } from './trace-datasets.service.js';

const DROP_BATCH = 500;

/** The 128 bits of a row id, as WordHashSet keys them (one array, reused: the set copies what it keeps). */
const rowIdWords = new Uint32Array(4);
function uuidWords(id: string): Uint32Array {
  rowIdWords[0] = parseInt(id.slice(0, 8), 16);
  rowIdWords[1] = parseInt(id.slice(9, 13) + id.slice(14, 18), 16);
  rowIdWords[2] = parseInt(id.slice(19, 23) + id.slice(24, 28), 16);
  rowIdWords[3] = parseInt(id.slice(28, 36), 16);
  return rowIdWords;
}

/** Span ids a first landing keeps to tell repeated spans apart itself (16 bytes each, the table at most half full: 32-64 MB). */
export const FRESH_IDS_MAX = 1_000_000;

/** Spans one landing transaction writes: bounded, so a landing holds no lock and no long transaction. */
export const LAND_BATCH = 5000;
/** How often a landing that waits for another landing of the same dataset looks again. */
const RESERVATION_POLL_MS = 500;

/** The version a landing writes: the dataset and the reservation the datasets family gave it. */
interface Reservation {
  dataset: DatasetEntity;
  reservation: VersionReservation;
}

/** The reservation a run keeps (an earlier attempt's), if it has one. */
function reservationOf(run: IngestRunRow, datasetId: string): VersionReservation | null {
  return run.version_number === null
    ? null
    : { datasetId, number: run.version_number, firstOrdinal: Number(run.ordinal_base) };
}

/**
 * Lands an ingest run in bounded transactions (docs/traces.md#how-a-file-lands):
 *
 * 1. **Reserve** (one short transaction, the dataset locked): the datasets family reserves the
 *    dataset's next version for this run (DatasetWritesService.reserveNextVersion), kept on the
 *    run. Nobody else may make that version meanwhile (DatasetsService.createVersion answers 409
 *    dataset_busy; another landing, and live landing, wait for the reservation).
 * 2. **Write** (a transaction per LAND_BATCH spans, no dataset lock): the source is read and
 *    normalised, and each batch is handed over with each span's place in the landing's order
 *    (the datasets family makes them ordinals); the spans the dataset does not hold yet are
 *    written under the reserved number. No version record carries that number yet, and no later
 *    version can be made, so those rows are readable by no one.
 * 3. **Finish**: the version's content hash and statistics are read from its rows, then one short
 *    transaction records the version (the datasets family moving its counters and releasing the
 *    reservation) and queues the enrichment: the version appears whole, or not at all.
 *
 * A retry after a crash keeps the reservation and reads the source again from its start: spans
 * written by the earlier attempt are found in the dataset and skipped, as any repeated span is
 * (their row id is derived from dataset, trace and span), and the run's counts and drops are
 * taken anew. A landing that fails for good removes what it wrote and releases the number.
 */
@Injectable()
export class TraceLanding {
  /** FRESH_IDS_MAX; a test lowers it to see the switch to the staged path. */
  protected freshIdsMax = FRESH_IDS_MAX;

  constructor(
    private readonly config: AppConfig,
    private readonly traces: TracesRepository,
    private readonly datasets: DatasetWritesService,
    private readonly secrets: SecretsService,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly traceDatasets: TraceDatasets,
    private readonly tracked: TrackedRecords,
    private readonly listeners: LandingListeners,
  ) {}

  /** The queue marks the run running and ends it failed or cancelled when the job ends so (`tracks`). */
  @JobHandler(TRACE_LAND_JOB, { maxAttempts: 3, tracks: TRACE_INGEST_RUNS })
  async land({
    payload,
    signal,
  }: JobContext<typeof TRACE_LAND_JOB>): Promise<{ landed: number; dropped: number; version_id: string | null }> {
    const run = await this.traces.findRunUnscoped(payload.ingest_run_id, true);
    if (!run || isTerminal(run.state))
      return { landed: run?.landed ?? 0, dropped: run?.dropped ?? 0, version_id: run?.version_id ?? null };
    const source = await this.open(run, signal);
    const reservation = await this.reserve(run, signal);
    const outcome = await this.write(run, reservation, source, signal);
    return this.finish(run, reservation, outcome);
  }

  /** A landing that ended without finishing gives its reserved version number back (the run itself the queue ended). */
  @OnJobSettled(TRACE_LAND_JOB)
  async onSettled(job: JobOf<typeof TRACE_LAND_JOB>): Promise<void> {
    if (job.status === 'succeeded') return;
    const run = await this.traces.findRunUnscoped(job.payload.ingest_run_id);
    if (!run || run.state === 'succeeded') return;
    const reservation = run.dataset_id ? reservationOf(run, run.dataset_id) : null;
    if (reservation) await this.abandon(reservation);
  }

  private async open(run: IngestRunRow, signal: AbortSignal): Promise<AsyncIterable<ReadItem>> {
    if (run.source_kind === 'inline') return readRecordsAsync(run.inline_records ?? []);
    if (run.source_kind === 'upload') {
      const upload = run.upload_id ? await this.traces.findUpload(run.workspace_id, run.upload_id) : null;
      if (!upload)
        throw new JobFailure('the upload was deleted before it landed', { code: 'upload_gone', retry: false });
      return readTraceFile(upload.path, upload.format as TraceFileFormat);
    }
    const connection = run.connection_id ? await this.traces.findConnection(run.workspace_id, run.connection_id) : null;
    if (!connection)
      throw new JobFailure('the connection was deleted before it landed', { code: 'connection_gone', retry: false });
    const secret = connection.secret_id
      ? await this.secrets.resolveValue(run.workspace_id, connection.secret_id)
      : null;
    const publicKey = connection.public_key_secret_id
      ? await this.secrets.resolveValue(run.workspace_id, connection.public_key_secret_id)
      : null;
    return pullConnection(
      connection,
      { secret, publicKey },
      {
        maxRecords: run.options.max_records ?? 100_000,
        maxFileBytes: this.config.env.UPLOAD_MAX_BYTES,
        dataDir: this.config.dataDir,
        signal,
      },
    );
  }

  /** The run's trace dataset, locked: named by id, or by name (created as a trace dataset when missing). */
  private async targetDataset(run: IngestRunRow): Promise<DatasetEntity> {
    const id = run.dataset_id ?? run.options.dataset_id;
    if (id) {
      const dataset = await this.traceDatasets.findLocked(run.workspace_id, id);
      if (!dataset || dataset.kind !== 'traces')
        throw new JobFailure(`dataset ${id} is no longer a trace dataset of the workspace`, {
          code: 'dataset_gone',
          retry: false,
        });
      return dataset;
    }
    const name = run.options.dataset_name ?? `traces ${new Date().toISOString().slice(0, 10)}`;
    const found = await this.traceDatasets.findOrCreate(
      run.workspace_id,
      name,
      run.created_by,
      'Landed production traces',
    );
    if (!found)
      throw new JobFailure(`"${name}" is a test-case dataset; land into a trace dataset`, {
        code: 'dataset_gone',
        retry: false,
      });
    return (await this.datasets.lock(found))!;
  }

  /** Reserves the dataset's next version for the run (or finds the one an earlier attempt reserved); waits while another landing holds one. */
  private async reserve(run: IngestRunRow, signal: AbortSignal): Promise<Reservation> {
    for (;;) {
      const reserved = await this.transactions.run(async (): Promise<Reservation | null> => {
        const dataset = await this.targetDataset(run);
        const earlier = await this.traces.findRunUnscoped(run.id);
        const held = earlier ? reservationOf(earlier, dataset.id) : null;
        if (held && (await this.datasets.stillReserved(held))) return { dataset, reservation: held };
        const reservation = await this.datasets.reserveNextVersion(dataset);
        if (!reservation) return null;
        await this.traces.updateRun(run.id, {
          dataset_id: dataset.id,
          version_number: reservation.number,
          ordinal_base: reservation.firstOrdinal,
        });
        return { dataset, reservation };
      });
      if (reserved) return reserved;
      await sleep(RESERVATION_POLL_MS, undefined, { signal });
    }
  }

  /** Reads, normalises and writes the source under the reserved number, a bounded transaction per batch. */
  private async write(
    run: IngestRunRow,
    reservation: Reservation,
    source: AsyncIterable<ReadItem>,
    signal: AbortSignal,
  ) {
    const { dataset } = reservation;
    const keepUnmapped = run.options.keep_unmapped !== false;
    const convention = (run.options.convention ?? 'auto') as Convention | 'auto';
    let received = 0;
    let staged = 0;
    let dropped = 0;
    const dropReasons: Record<string, number> = {};
    const conventions: Record<string, number> = {};
    // A first landing that writes every span it stages (none repeated) has the version's column
    // statistics gathered on the way, as uploads do, instead of scanning the rows again
    // (docs/performance.md#column-statistics-of-a-trace-landing); otherwise they are computed from the rows.
    const collector = dataset.latestVersion === 0 ? new ColumnStatsCollector() : null;
    // Then the version's content hash (RowsRepository.contentHash's definition) is taken on the
    // way too: each span is sent as the very text jsonb prints, in row order.
    const content = collector ? createHash('sha256') : null;
    // And when the dataset holds no row at all (an earlier attempt's included), the landing knows
    // every span it writes: it tells repeated spans apart itself, by row id, and COPYs its batches
    // straight into dataset_rows, without the staging table and the lookup per span. Past
    // FRESH_IDS_MAX spans the ids kept would grow too large; the rest of the file takes the staged
    // path, which looks up what is written already.
    let fresh =
      collector && !(await this.transactions.run(() => this.datasets.holdsRows(dataset.id)))
        ? new WordHashSet(4, 1 << 16)
        : null;
    let spans: PlacedRow[] = [];
    let drops: Drop[] = [];
    // A retry takes the drops anew, with the counts.
    await this.transactions.run(() => this.traces.clearDrops(run.id));
    // On PostgreSQL (a process of its own) a batch is written while the next one is read and
    // normalised, so both cores work; at most one batch is in flight, so memory and transactions
    // stay bounded. The embedded database runs in this thread: there a batch is written before
    // reading goes on, so its one connection is held no longer than the batch's own statements.
    const overlap = !this.config.embedded;
    let writing: Promise<void> | undefined;
    const flush = async () => {
      const batch = spans;
      const batchDrops = drops;
      const direct = fresh !== null;
      spans = [];
      drops = [];
      if (!batch.length && !batchDrops.length) return;
      await writing;
      // The batch's drops are the last of those counted so far: their ordinals end at `dropped`.
      const of = { workspace_id: run.workspace_id, run_id: run.id, dataset_id: dataset.id };
      const dropsFrom = dropped - batchDrops.length + 1;
      writing = this.transactions.run(async () => {
        await this.datasets.appendReserved(reservation.reservation, batch, { known: direct });
        await this.traces.appendDrops(of, dropsFrom, batchDrops);
      });
      // Its failure is taken by the next flush or at the end; until then it is not an unhandled rejection.
      writing.catch(() => undefined);
      if (!overlap) await writing;
    };
    try {
      for await (const item of source) {
        received++;
        if (received % 1000 === 0) signal.throwIfAborted();
        const result =
          'drop' in item
            ? { ok: false as const, drop: item.drop }
            : normaliseSpan(item.span, convention, { keepUnmapped });
        if (!result.ok) {
          dropped++;
          dropReasons[result.drop.reason] = (dropReasons[result.drop.reason] ?? 0) + 1;
          drops.push(result.drop);
          if (drops.length >= DROP_BATCH) await flush();
          continue;
        }
        const span = result.span;
        // Every normalised span counts, landed or deduplicated.
        conventions[span.convention] = (conventions[span.convention] ?? 0) + 1;
        const rowId = spanRowId(dataset.id, span.trace_id, span.span_id);
        // A repeated span is not written again (counted as deduplicated).
        if (fresh && !fresh.add(uuidWords(rowId))) continue;
        collector?.add(span as unknown as Record<string, unknown>);
        const data = content ? jsonbStoredText(span) : jsonbText(span);
        content?.update(`${staged ? '\n' : ''}${rowId} ${data}`);
        spans.push([rowId, staged, data]);
        staged++;
        if (spans.length >= LAND_BATCH) await flush();
        if (fresh && fresh.size >= this.freshIdsMax) {
          await flush();
          fresh = null;
        }
      }
      await flush();
    } finally {
      // Nothing of this landing may still be writing when it fails (its rows are then removed).
      await writing?.catch(() => undefined);
    }
    await writing;
    const streamed = content ? { rowCount: staged, sha256: content.digest('hex') } : null;
    return { received, staged, dropped, dropReasons, conventions, collector, streamed };
  }

  /** Records the version (when the landing wrote any span) or releases its number, and closes the run. */
  private async finish(
    run: IngestRunRow,
    { dataset, reservation }: Reservation,
    outcome: Awaited<ReturnType<TraceLanding['write']>>,
  ): Promise<{ landed: number; dropped: number; version_id: string | null }> {
    const { received, staged, dropped, dropReasons, conventions, collector, streamed } = outcome;
    const columns = await this.datasets.columnOrder(dataset, SPAN_COLUMNS);
    // Read from the rows before the dataset is locked: nothing else writes under this number.
    const measured = await this.transactions.run(async () => {
      const rows = await this.datasets.measureReserved(reservation, columns, {
        placed: staged,
        content: streamed,
        collector,
      });
      return {
        ...rows,
        traces: rows.landed ? await this.traceDatasets.countTraces(dataset.id, reservation.number) : 0,
      };
    });
    const landed = measured.landed;
    return this.transactions.run(async () => {
      let versionId: string | null = null;
      if (landed) {
        const version = await this.datasets.recordReserved(
          reservation,
          {
            columns,
            measured,
            fields: { source: 'landed', message: run.options.message ?? `Landed ${landed} spans (${run.source_kind})` },
            createdBy: run.created_by,
            mapping: TRACE_MAPPING,
          },
          staged,
        );
        await this.traces.setDropsVersion(run.id, version.id);
        versionId = version.id;
        await this.queueEnrichment(run.workspace_id, dataset.id, version.id, run.created_by);
        await this.listeners.landed(run.workspace_id, dataset.id);
      } else await this.datasets.release(reservation);
      await this.traces.updateRun(run.id, {
        dataset_id: dataset.id,
        version_id: versionId,
        received,
        landed,
        deduplicated: received - landed - dropped,
        dropped,
        drop_reasons: dropReasons,
        conventions,
        traces: measured.traces,
        inline_records: null,
      });
      await this.tracked.succeed(TRACE_INGEST_RUNS, run.id);
      if (run.connection_id) await this.traces.touchConnection(run.connection_id);
      return { landed, dropped, version_id: versionId };
    });
  }

  /** After a landing failed for good: removes the rows it wrote under its reservation (a batch per transaction) and releases it. */
  private async abandon(reservation: VersionReservation): Promise<void> {
    if (!(await this.transactions.run(() => this.datasets.stillReserved(reservation)))) return;
    while ((await this.transactions.run(() => this.datasets.discardReserved(reservation, LAND_BATCH))) > 0);
    await this.transactions.run(() => this.datasets.release(reservation));
  }

  /** Queues the per-trace enrichment of a version that landing wrote or sealed. */
  async queueEnrichment(
    workspaceId: string,
    datasetId: string,
    versionId: string,
    createdBy: string | null,
  ): Promise<void> {
    const enrichment = await this.traces.insertEnrichmentRun({
      workspace_id: workspaceId,
      dataset_id: datasetId,
      version_id: versionId,
      trigger: 'landing',
      prices: null,
      created_by: createdBy,
    });
    await this.queue.enqueue({
      type: TRACE_ENRICH_JOB,
      payload: { enrichment_run_id: enrichment.id },
      workspaceId,
      targetType: 'dataset',
      targetId: datasetId,
      createdBy,
    });
  }
}
