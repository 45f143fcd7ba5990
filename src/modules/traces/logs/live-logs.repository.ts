import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { Db } from '#libs/database/unit-of-work.js';

/** One acknowledged log record waiting for its span: the span's row id, the record's content key, the record (JSON text). */
export interface InboxLogRecord {
  row_id: string;
  key: string;
  data: string;
}

/** A waiting log record as the landing reads it. */
export interface WaitingLogRecord {
  row_id: string;
  key: string;
  data: Record<string, unknown>;
}

/** `trace_log_inbox`: log records acknowledged and not yet joined to their span's row. Queries only. */
@Injectable()
export class LiveLogsRepository {
  constructor(private readonly db: Db) {}

  /** Acknowledged log records in; one the inbox holds already (an exporter's retry) is not added again. Answers how many were new. */
  async enqueue(datasetId: string, records: InboxLogRecord[]): Promise<number> {
    if (!records.length) return 0;
    const [{ added }]: Array<{ added: number }> = await this.db.query(
      `WITH added AS (
         INSERT INTO trace_log_inbox (dataset_id, row_id, key, data)
         SELECT $1, s.row_id, s.key, s.data FROM unnest($2::uuid[], $3::text[], $4::jsonb[]) WITH ORDINALITY AS s(row_id, key, data, n) ORDER BY s.n
         ON CONFLICT (dataset_id, row_id, key) DO NOTHING RETURNING 1
       ) SELECT count(*)::int AS added FROM added`,
      [datasetId, records.map((r) => r.row_id), records.map((r) => r.key), records.map((r) => r.data)],
    );
    return added;
  }

  /** How many log records of the dataset wait. */
  async count(datasetId: string): Promise<number> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('trace_log_inbox')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('dataset_id', '=', datasetId),
    );
    return row?.n ?? 0;
  }

  /**
   * The records a landing looks at, in arrival order, at most `limit`: those not looked at yet,
   * and those of the spans `rowIds` (spans the landing is taking, which they waited for).
   */
  async candidates(datasetId: string, rowIds: string[], limit: number): Promise<WaitingLogRecord[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_log_inbox')
        .select(['row_id', 'key', 'data'])
        .where('dataset_id', '=', datasetId)
        .where((eb) =>
          eb.or([
            eb.not(eb.ref('seen')),
            ...(rowIds.length ? [eb('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)] : []),
          ]),
        )
        .orderBy('seq')
        .limit(limit),
    );
    return rows.map((r) => ({ row_id: r.row_id, key: r.key, data: r.data as Record<string, unknown> }));
  }

  /** Removes joined records. */
  async remove(datasetId: string, records: Array<Pick<InboxLogRecord, 'row_id' | 'key'>>): Promise<void> {
    if (!records.length) return;
    await this.db.query(
      `DELETE FROM trace_log_inbox l USING unnest($2::uuid[], $3::text[]) AS s(row_id, key)
        WHERE l.dataset_id = $1 AND l.row_id = s.row_id AND l.key = s.key`,
      [datasetId, records.map((r) => r.row_id), records.map((r) => r.key)],
    );
  }

  /** Marks the records of spans not landed yet as looked at: they wait for their span, not for a landing. */
  async markSeen(datasetId: string, rowIds: string[]): Promise<void> {
    if (!rowIds.length) return;
    await this.db.typedWrite((q) =>
      q
        .updateTable('trace_log_inbox')
        .set({ seen: true })
        .where('dataset_id', '=', datasetId)
        .where('row_id', '=', sql<string>`ANY(${rowIds}::uuid[])`)
        .where('seen', '=', false),
    );
  }

  /** Takes (deletes and answers) up to `limit` records that waited longer than `seconds`. */
  async takeExpired(datasetId: string, seconds: number, limit: number): Promise<WaitingLogRecord[]> {
    const rows: Array<{ row_id: string; key: string; data: Record<string, unknown> }> = await this.db.query(
      `WITH gone AS (
         DELETE FROM trace_log_inbox l USING (
           SELECT row_id, key FROM trace_log_inbox WHERE dataset_id = $1 AND received_at < now() - make_interval(secs => $2)
            ORDER BY received_at LIMIT $3
         ) x WHERE l.dataset_id = $1 AND l.row_id = x.row_id AND l.key = x.key RETURNING l.row_id, l.key, l.data, l.seq
       ) SELECT row_id, key, data FROM gone ORDER BY seq`,
      [datasetId, seconds, limit],
    );
    return rows;
  }

  /** Datasets holding records that waited longer than `seconds` (the sweep drops them when no landing comes to). */
  async datasetsWithExpired(seconds: number, limit: number): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('trace_log_inbox')
        .select('dataset_id')
        .distinct()
        .where(sql<boolean>`received_at < now() - make_interval(secs => ${seconds})`)
        .limit(limit),
    );
    return rows.map((r) => r.dataset_id);
  }
}
