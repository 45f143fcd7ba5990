import { Injectable } from '@nestjs/common';
import { sql, type NotNull, type Selectable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { RowSource } from '../datasets/dataset-writes.types.js';

const STREAM_COLUMNS = [
  'dataset_id',
  'workspace_id',
  'ingest_run_id',
  'head_version_id',
  'head_opened_at',
  'head_spans',
  'window_seconds',
  'max_spans',
  'pending',
  'land_queued',
  'last_received_at',
  'last_landed_at',
  'created_by',
  'created_at',
] as const;

/** A dataset's live stream: where OTLP exports land, the open head version and its sealing window. */
export type LiveStreamRow = Pick<Selectable<DB['trace_live_streams']>, (typeof STREAM_COLUMNS)[number]>;

/** One acknowledged span waiting to land (its data as JSON text). */
export type InboxSpan = Pick<Selectable<DB['trace_inbox']>, 'row_id'> & { data: string };

const now = sql<Date>`now()`;

/** Counters one export or one landing batch adds to the stream's ingest run. */
export interface RunCounts {
  received?: number;
  landed?: number;
  deduplicated?: number;
  dropped?: number;
  dropReasons?: Record<string, number>;
  conventions?: Record<string, number>;
}

/** `trace_live_streams` and `trace_inbox`: queries only. */
@Injectable()
export class LiveRepository {
  constructor(private readonly db: Db) {}

  async find(datasetId: string, forUpdate = false): Promise<LiveStreamRow | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_live_streams')
        .select(STREAM_COLUMNS)
        .where('dataset_id', '=', datasetId)
        .$if(forUpdate, (s) => s.forUpdate()),
    );
    return rows[0] ?? null;
  }

  /** Serialises the creation of the dataset's stream (until the unit of work ends). */
  async lockCreation(datasetId: string): Promise<void> {
    await this.db.lock(`trace-live:${datasetId}`);
  }

  /** The dataset's stream, its counters kept on ingest run `runId`. */
  async insert(
    datasetId: string,
    workspaceId: string,
    runId: string,
    createdBy: string | null,
  ): Promise<LiveStreamRow> {
    const [row] = await this.db.typed((q) =>
      q
        .insertInto('trace_live_streams')
        .values({ dataset_id: datasetId, workspace_id: workspaceId, ingest_run_id: runId, created_by: createdBy })
        .returning(STREAM_COLUMNS),
    );
    return row;
  }

  async updateSettings(datasetId: string, settings: { window_seconds?: number; max_spans?: number }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_live_streams')
        .set((eb) => ({
          window_seconds: eb.fn.coalesce(eb.val(settings.window_seconds ?? null), eb.ref('window_seconds')),
          max_spans: eb.fn.coalesce(eb.val(settings.max_spans ?? null), eb.ref('max_spans')),
          updated_at: now,
        }))
        .where('dataset_id', '=', datasetId),
    );
  }

  /** Acknowledged spans into the inbox; a span the inbox already holds (an exporter's retry) is not added again. Returns how many were new. */
  async enqueueSpans(datasetId: string, spans: InboxSpan[]): Promise<number> {
    if (!spans.length) return 0;
    const [{ added }]: Array<{ added: number }> = await this.db.query(
      `WITH added AS (
         INSERT INTO trace_inbox (dataset_id, row_id, data)
         SELECT $1, s.row_id, s.data FROM unnest($2::uuid[], $3::jsonb[]) WITH ORDINALITY AS s(row_id, data, n) ORDER BY s.n
         ON CONFLICT (dataset_id, row_id) DO NOTHING RETURNING 1
       ) SELECT count(*)::int AS added FROM added`,
      [datasetId, spans.map((s) => s.row_id), spans.map((s) => s.data)],
    );
    return added;
  }

  // (Db.typed answers a bare UPDATE ... RETURNING's rows; the SQL text below reads one through a CTE,
  // as TypeORM answers a bare one as [rows, affected].)

  /**
   * After an export: adds its new spans to the pending count and marks a landing as queued when it
   * brought spans or log records. Answers whether one was queued already (then the caller queues
   * none: the running landing takes these too).
   */
  async noteReceived(datasetId: string, added: number, addedLogs = 0): Promise<{ wasQueued: boolean }> {
    const [row]: Array<{ was_queued: boolean }> = await this.db.query(
      `WITH old AS (SELECT land_queued FROM trace_live_streams WHERE dataset_id = $1 FOR UPDATE), changed AS (
         UPDATE trace_live_streams s SET pending = s.pending + $2, last_received_at = now(), land_queued = s.land_queued OR $2 + $3 > 0, updated_at = now()
           FROM old WHERE s.dataset_id = $1 RETURNING old.land_queued AS was_queued
       ) SELECT was_queued FROM changed`,
      [datasetId, added, addedLogs],
    );
    return { wasQueued: row?.was_queued ?? false };
  }

  /** Gives the stream's drops not yet on a version (received with spans still to land) to the version those spans joined. */
  async claimDrops(runId: string, versionId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_drops')
        .set({ version_id: versionId })
        .where('run_id', '=', runId)
        .where('version_id', 'is', null),
    );
  }

  async hasSpans(datasetId: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_inbox')
        .select(sql<number>`1`.as('one'))
        .where('dataset_id', '=', datasetId)
        .limit(1),
    );
    return rows.length > 0;
  }

  /** Ends a landing's claim on the stream; answers whether spans arrived meanwhile and the claim was taken again for them. */
  async releaseOrRetake(datasetId: string): Promise<boolean> {
    // Lock first, then look: an export holding the lock commits its spans before this statement's
    // snapshot is taken, so they are seen (a lock waited for inside the UPDATE would not refresh
    // the EXISTS below, and the export, seeing a landing queued, would queue none: spans stranded).
    await this.db.typed((q) =>
      q
        .selectFrom('trace_live_streams')
        .select(sql<number>`1`.as('one'))
        .where('dataset_id', '=', datasetId)
        .forUpdate(),
    );
    const [row] = await this.db.typed((q) =>
      q
        .updateTable('trace_live_streams')
        .set((eb) => ({
          // Log records the landing has not looked at keep it too; those waiting for their span do not.
          land_queued: eb
            .or([
              eb.exists(
                eb
                  .selectFrom('trace_inbox')
                  .select(sql<number>`1`.as('one'))
                  .where('trace_inbox.dataset_id', '=', datasetId),
              ),
              eb.exists(
                eb
                  .selectFrom('trace_log_inbox')
                  .select(sql<number>`1`.as('one'))
                  .where('trace_log_inbox.dataset_id', '=', datasetId)
                  .where('trace_log_inbox.seen', '=', false),
              ),
            ])
            .$castTo<boolean>(),
          updated_at: now,
        }))
        .where('dataset_id', '=', datasetId)
        .returning('land_queued'),
    );
    return row?.land_queued ?? false;
  }

  async setHead(datasetId: string, head: { versionId: string | null; spans: number; opened: boolean }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_live_streams')
        .set((eb) => ({
          head_version_id: head.versionId,
          head_spans: head.spans,
          head_opened_at: head.opened ? now : head.versionId === null ? null : eb.ref('head_opened_at'),
          updated_at: now,
        }))
        .where('dataset_id', '=', datasetId),
    );
  }

  async noteLanded(datasetId: string, taken: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_live_streams')
        .set((eb) => ({
          pending: eb.fn<number>('greatest', [eb('pending', '-', taken), eb.lit(0)]),
          last_landed_at: now,
          updated_at: now,
        }))
        .where('dataset_id', '=', datasetId),
    );
  }

  /**
   * Adds to the stream's ingest run's counters (the per-reason and per-convention counts are
   * summed key by key) and answers the drop count before this addition (drop ordinals follow it).
   */
  async addRunCounts(runId: string, counts: RunCounts, versionId?: string | null): Promise<{ droppedBefore: number }> {
    const [row]: Array<{ dropped: number }> = await this.db.query(
      `WITH changed AS (UPDATE trace_ingest_runs SET
         received = received + $2, landed = landed + $3, deduplicated = deduplicated + $4, dropped = dropped + $5,
         drop_reasons = (SELECT COALESCE(jsonb_object_agg(k, COALESCE((drop_reasons->>k)::int, 0) + COALESCE(($6::jsonb->>k)::int, 0)), '{}'::jsonb)
                           FROM (SELECT jsonb_object_keys(drop_reasons) UNION SELECT jsonb_object_keys($6::jsonb)) keys(k)),
         conventions = (SELECT COALESCE(jsonb_object_agg(k, COALESCE((conventions->>k)::int, 0) + COALESCE(($7::jsonb->>k)::int, 0)), '{}'::jsonb)
                           FROM (SELECT jsonb_object_keys(conventions) UNION SELECT jsonb_object_keys($7::jsonb)) keys(k)),
         version_id = CASE WHEN $8::boolean THEN $9::uuid ELSE version_id END,
         updated_at = now()
       WHERE id = $1 RETURNING dropped) SELECT dropped FROM changed`,
      [
        runId,
        counts.received ?? 0,
        counts.landed ?? 0,
        counts.deduplicated ?? 0,
        counts.dropped ?? 0,
        JSON.stringify(counts.dropReasons ?? {}),
        JSON.stringify(counts.conventions ?? {}),
        versionId !== undefined,
        versionId ?? null,
      ],
    );
    return { droppedBefore: (row?.dropped ?? 0) - (counts.dropped ?? 0) };
  }

  /** The row ids of the next `limit` inbox spans, in the order inboxSource takes them. */
  async nextRowIds(datasetId: string, limit: number): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('trace_inbox').select('row_id').where('dataset_id', '=', datasetId).orderBy('seq').limit(limit),
    );
    return rows.map((r) => r.row_id);
  }

  /**
   * Takes up to `limit` inbox spans, in acknowledgement order, as a row source for the datasets
   * family to append in the same statement (DatasetWritesService.appendFrom): one statement moves
   * them from the inbox into the dataset, and spans it already shows are taken and not written.
   */
  inboxSource(datasetId: string, limit: number): RowSource {
    return (q) =>
      q
        .with('inbox_taken', (w) =>
          w
            .deleteFrom('trace_inbox as i')
            .using(
              w
                .selectFrom('trace_inbox')
                .select('row_id')
                .where('dataset_id', '=', datasetId)
                .orderBy('seq')
                .limit(limit)
                .as('t'),
            )
            .where('i.dataset_id', '=', datasetId)
            .whereRef('i.row_id', '=', 't.row_id')
            .returning(['i.row_id', 'i.seq', 'i.data']),
        )
        .with('sourced_rows', (w) =>
          w
            .selectFrom('inbox_taken')
            .select(['row_id', 'data', sql<string>`row_number() OVER (ORDER BY seq)`.as('place')]),
        );
  }

  /** Streams whose open head has outlived its window (the sweep seals them when no export arrives to do it). */
  async expiredHeads(
    limit: number,
  ): Promise<Array<{ dataset_id: string; workspace_id: string; head_version_id: string }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('trace_live_streams')
        .select(['dataset_id', 'workspace_id', 'head_version_id'])
        .where('head_version_id', 'is not', null)
        .where(sql<boolean>`head_opened_at + make_interval(secs => window_seconds) <= now()`)
        .orderBy('head_opened_at')
        .limit(limit)
        .$narrowType<{ head_version_id: NotNull }>(),
    );
  }
}
