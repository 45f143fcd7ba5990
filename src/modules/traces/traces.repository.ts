import { Injectable } from '@nestjs/common';
import { BulkWriter, type BulkValue } from '../../../libs/database/bulk-writer.js';
import { jsonbText } from './jsonb.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';
import { trackedRecord, type TrackedColumns } from '../../../libs/queue/tracked-job.js';

/** The records landing and enrichment jobs settle: the queue keeps their tracked columns. */
export const TRACE_INGEST_RUNS = trackedRecord('trace_ingest_runs', 'ingest_run_id');
export const TRACE_ENRICHMENT_RUNS = trackedRecord('trace_enrichment_runs', 'enrichment_run_id');

export interface TraceConnectionRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: 'otlp_file_url' | 'langfuse' | 'phoenix';
  url: string;
  settings: { project?: string; page_size?: number };
  secret_id: string | null;
  public_key_secret_id: string | null;
  dataset_id: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  last_landed_at: Date | null;
}

export interface TraceUploadRow {
  id: string;
  workspace_id: string;
  filename: string;
  format: string;
  size_bytes: string | number;
  sha256: string;
  path: string;
  created_by: string | null;
  created_at: Date;
}

export interface IngestOptions {
  dataset_id?: string;
  dataset_name?: string;
  convention: string;
  keep_unmapped: boolean;
  message?: string;
  max_records?: number;
}

export interface IngestRunRow extends TrackedColumns {
  id: string;
  workspace_id: string;
  dataset_id: string | null;
  version_id: string | null;
  source_kind: 'upload' | 'inline' | 'connection' | 'otlp';
  upload_id: string | null;
  connection_id: string | null;
  inline_records?: unknown[] | null;
  options: IngestOptions;
  received: number;
  landed: number;
  deduplicated: number;
  dropped: number;
  drop_reasons: Record<string, number>;
  conventions: Record<string, number>;
  traces: number;
  /** Acknowledged spans of a live stream not landed yet (read by findRun). */
  pending?: number;
  /** The version number a file landing reserved and writes under (kept for its retries). */
  version_number: number | null;
  /** The ordinal of the landing's first span (its spans take the next ones, in file order). */
  ordinal_base: number | null;
  created_by: string | null;
}

export interface DropRow {
  id: string;
  run_id: string;
  version_id: string | null;
  ordinal: number;
  reason: string;
  detail: string;
  source_ref: string;
  payload: unknown;
  created_at: Date;
}

export interface GroundTruthRow {
  id: string;
  workspace_id: string;
  dataset_id: string;
  version_id: string;
  number: number;
  message: string;
  items: Array<Record<string, unknown>>;
  item_count: number;
  created_by: string | null;
  created_at: Date;
}

/** Its progress is `{done, total}`, counted in traces. */
export interface EnrichmentRunRow extends TrackedColumns {
  id: string;
  workspace_id: string;
  dataset_id: string;
  version_id: string;
  trigger: 'landing' | 'recompute';
  prices: Record<string, { input_per_1m: number; output_per_1m: number }> | null;
}

export interface TagRow {
  trace_id: string;
  tag: string;
  created_by: string | null;
  created_at: Date;
}

/** Trace sources, ingest runs and their drops, ground truth, enrichment and tags: queries only. */
@Injectable()
export class TracesRepository {
  constructor(
    private readonly db: Db,
    private readonly bulk: BulkWriter,
  ) {}

  /** Sets the given columns of one run row (objects stored as jsonb); column names come from the typed callers, never from requests. */
  private async update(table: 'trace_ingest_runs', id: string, fields: object, extra = ''): Promise<void> {
    const entries = Object.entries(fields);
    if (!entries.length) return;
    const values = entries.map(([, v]) =>
      v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v,
    );
    await this.db.query(
      `UPDATE ${table} SET ${entries.map(([k], i) => `${k} = $${i + 2}`).join(', ')}${extra} WHERE id = $1`,
      [id, ...values],
    );
  }

  // Connections

  async insertConnection(
    row: Omit<TraceConnectionRow, 'id' | 'created_at' | 'updated_at' | 'last_landed_at'>,
  ): Promise<TraceConnectionRow> {
    const [created] = await this.db.query(
      `INSERT INTO trace_connections (workspace_id, name, kind, url, settings, secret_id, public_key_secret_id, dataset_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        row.workspace_id,
        row.name,
        row.kind,
        row.url,
        JSON.stringify(row.settings),
        row.secret_id,
        row.public_key_secret_id,
        row.dataset_id,
        row.created_by,
      ],
    );
    return created;
  }

  async connectionNameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'trace_connections', { column: 'workspace_id', value: workspaceId }, name);
  }

  listConnections(workspaceId: string): Promise<TraceConnectionRow[]> {
    return this.db.query('SELECT * FROM trace_connections WHERE workspace_id = $1 ORDER BY lower(name), id', [
      workspaceId,
    ]);
  }

  async findConnection(workspaceId: string, id: string): Promise<TraceConnectionRow | null> {
    return (
      (
        await this.db.query('SELECT * FROM trace_connections WHERE workspace_id = $1 AND id = $2', [workspaceId, id])
      )[0] ?? null
    );
  }

  async touchConnection(id: string): Promise<void> {
    await this.db.query('UPDATE trace_connections SET last_landed_at = now() WHERE id = $1', [id]);
  }

  // Uploads

  async insertUpload(row: Omit<TraceUploadRow, 'created_at'>): Promise<TraceUploadRow> {
    const [created] = await this.db.query(
      'INSERT INTO trace_uploads (id, workspace_id, filename, format, size_bytes, sha256, path, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *',
      [row.id, row.workspace_id, row.filename, row.format, row.size_bytes, row.sha256, row.path, row.created_by],
    );
    return created;
  }

  async findUpload(workspaceId: string, id: string): Promise<TraceUploadRow | null> {
    return (
      (await this.db.query('SELECT * FROM trace_uploads WHERE workspace_id = $1 AND id = $2', [workspaceId, id]))[0] ??
      null
    );
  }

  // Ingest runs

  async insertRun(
    row: Pick<
      IngestRunRow,
      'workspace_id' | 'dataset_id' | 'source_kind' | 'upload_id' | 'connection_id' | 'options' | 'created_by'
    > & { inline_records: unknown[] | null },
  ): Promise<IngestRunRow> {
    const [created] = await this.db.query(
      `INSERT INTO trace_ingest_runs (workspace_id, dataset_id, source_kind, upload_id, connection_id, inline_records, options, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${RUN_COLUMNS}`,
      [
        row.workspace_id,
        row.dataset_id,
        row.source_kind,
        row.upload_id,
        row.connection_id,
        row.inline_records ? JSON.stringify(row.inline_records) : null,
        JSON.stringify(row.options),
        row.created_by,
      ],
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
    return (
      (
        await this.db.query(
          `SELECT ${RUN_COLUMNS}${withRecords ? ', inline_records' : ''}, COALESCE((SELECT s.pending FROM trace_live_streams s WHERE s.ingest_run_id = trace_ingest_runs.id), 0) AS pending FROM trace_ingest_runs WHERE id = $1 AND ($2::uuid IS NULL OR workspace_id = $2)`,
          [id, workspaceId],
        )
      )[0] ?? null
    );
  }

  /** What a landing found and made; its tracked columns are the queue's (`TrackedRecords`). */
  async updateRun(id: string, fields: Partial<Omit<IngestRunRow, 'id' | keyof TrackedColumns>>): Promise<void> {
    await this.update('trace_ingest_runs', id, fields, ', updated_at = now()');
  }

  // Drops

  async appendDrops(
    drops: Array<{
      workspace_id: string;
      run_id: string;
      dataset_id: string | null;
      ordinal: number;
      reason: string;
      detail: string;
      source_ref: string;
      payload: unknown;
    }>,
  ): Promise<void> {
    if (!drops.length) return;
    const rows: BulkValue[][] = drops.map((d) => [
      d.workspace_id,
      d.run_id,
      d.dataset_id,
      d.ordinal,
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
        { name: 'ordinal', type: 'integer' },
        { name: 'reason', type: 'text' },
        { name: 'detail', type: 'text' },
        { name: 'source_ref', type: 'text' },
        { name: 'payload', type: 'jsonb' },
      ],
      (async function* () {
        yield rows;
      })(),
    );
  }

  async setDropsVersion(runId: string, versionId: string): Promise<void> {
    await this.db.query('UPDATE trace_drops SET version_id = $2 WHERE run_id = $1', [runId, versionId]);
  }

  async clearDrops(runId: string): Promise<void> {
    await this.db.query('DELETE FROM trace_drops WHERE run_id = $1', [runId]);
  }

  runDrops(runId: string, reason: string | undefined, limit: number, offset: number): Promise<DropRow[]> {
    return this.db.query(
      `SELECT id, run_id, version_id, ordinal, reason, detail, source_ref, payload, created_at FROM trace_drops WHERE run_id = $1 AND ($2::text IS NULL OR reason = $2) ORDER BY ordinal LIMIT $3 OFFSET $4`,
      [runId, reason ?? null, limit, offset],
    );
  }

  versionDrops(versionId: string, reason: string | undefined, limit: number, offset: number): Promise<DropRow[]> {
    return this.db.query(
      `SELECT id, run_id, version_id, ordinal, reason, detail, source_ref, payload, created_at FROM trace_drops WHERE version_id = $1 AND ($2::text IS NULL OR reason = $2) ORDER BY created_at, run_id, ordinal LIMIT $3 OFFSET $4`,
      [versionId, reason ?? null, limit, offset],
    );
  }

  // Ground truth

  async insertGroundTruth(row: Omit<GroundTruthRow, 'id' | 'created_at' | 'number'>): Promise<GroundTruthRow> {
    await this.db.lock(`ground-truth:${row.version_id}`);
    const [created] = await this.db.query(
      `INSERT INTO trace_ground_truth_versions (workspace_id, dataset_id, version_id, number, message, items, item_count, created_by)
       VALUES ($1, $2, $3, (SELECT coalesce(max(number), 0) + 1 FROM trace_ground_truth_versions WHERE version_id = $3), $4, $5, $6, $7) RETURNING *`,
      [
        row.workspace_id,
        row.dataset_id,
        row.version_id,
        row.message,
        JSON.stringify(row.items),
        row.item_count,
        row.created_by,
      ],
    );
    return created;
  }

  async groundTruth(versionId: string, number?: number): Promise<GroundTruthRow | null> {
    const rows = await this.db.query(
      `SELECT * FROM trace_ground_truth_versions WHERE version_id = $1 ${number ? 'AND number = $2' : ''} ORDER BY number DESC LIMIT 1`,
      number ? [versionId, number] : [versionId],
    );
    return rows[0] ?? null;
  }

  async groundTruthNumbers(versionId: string): Promise<number[]> {
    return (
      await this.db.query('SELECT number FROM trace_ground_truth_versions WHERE version_id = $1 ORDER BY number DESC', [
        versionId,
      ])
    ).map((r: { number: number }) => r.number);
  }

  // Enrichment

  async insertEnrichmentRun(
    row: Pick<EnrichmentRunRow, 'workspace_id' | 'dataset_id' | 'version_id' | 'trigger' | 'prices'> & {
      created_by: string | null;
    },
  ): Promise<EnrichmentRunRow> {
    const [created] = await this.db.query(
      'INSERT INTO trace_enrichment_runs (workspace_id, dataset_id, version_id, trigger, prices, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [
        row.workspace_id,
        row.dataset_id,
        row.version_id,
        row.trigger,
        row.prices ? JSON.stringify(row.prices) : null,
        row.created_by,
      ],
    );
    return created;
  }

  /** Workspace-free, for the enricher resolving its job's run. */
  async findEnrichmentRunUnscoped(id: string): Promise<EnrichmentRunRow | null> {
    return (await this.db.query('SELECT * FROM trace_enrichment_runs WHERE id = $1', [id]))[0] ?? null;
  }

  async latestEnrichmentRun(versionId: string): Promise<EnrichmentRunRow | null> {
    return (
      (
        await this.db.query(
          'SELECT * FROM trace_enrichment_runs WHERE version_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
          [versionId],
        )
      )[0] ?? null
    );
  }

  async clearEnrichment(versionId: string): Promise<void> {
    await this.db.query('DELETE FROM trace_enrichment_results WHERE version_id = $1', [versionId]);
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
      (async function* () {
        yield results.map((r) => [workspaceId, datasetId, versionId, r.trace_id, JSON.stringify(r.data)]);
      })(),
    );
  }

  /** Enrichment results under parameterised conditions over `e.data` (built by the service), with the total matching. */
  async enrichmentPage(
    versionId: string,
    where: string[],
    params: unknown[],
    orderBy: string,
    limit: number,
    offset: number,
  ): Promise<{ items: Array<Record<string, unknown>>; total: number }> {
    const conditions = ['e.version_id = $1', ...where].join(' AND ');
    const rows: Array<{ data: Record<string, unknown>; total: number }> = await this.db.query(
      `SELECT e.data, count(*) OVER ()::int AS total FROM trace_enrichment_results e WHERE ${conditions} ORDER BY ${orderBy}, e.trace_id LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
      [versionId, ...params],
    );
    const total =
      rows[0]?.total ??
      (offset > 0
        ? (
            await this.db.query(`SELECT count(*)::int AS n FROM trace_enrichment_results e WHERE ${conditions}`, [
              versionId,
              ...params,
            ])
          )[0].n
        : 0);
    return { items: rows.map((r) => r.data), total };
  }

  // Tags

  listTags(versionId: string, traceId?: string, tag?: string): Promise<TagRow[]> {
    return this.db.query(
      'SELECT trace_id, tag, created_by, created_at FROM trace_tags WHERE version_id = $1 AND ($2::text IS NULL OR trace_id = $2) AND ($3::text IS NULL OR tag = $3) ORDER BY trace_id, tag',
      [versionId, traceId ?? null, tag ?? null],
    );
  }

  async putTags(
    row: { workspace_id: string; dataset_id: string; version_id: string; created_by: string | null },
    traceIds: string[],
    tags: string[],
    replace: boolean,
  ): Promise<void> {
    if (replace)
      await this.db.query(
        'DELETE FROM trace_tags WHERE version_id = $1 AND trace_id = ANY($2::text[]) AND NOT (tag = ANY($3::text[]))',
        [row.version_id, traceIds, tags],
      );
    if (!tags.length) return;
    await this.db.query(
      `INSERT INTO trace_tags (workspace_id, dataset_id, version_id, trace_id, tag, created_by)
       SELECT $1, $2, $3, t.trace_id, g.tag, $6 FROM unnest($4::text[]) AS t(trace_id) CROSS JOIN unnest($5::text[]) AS g(tag)
       ON CONFLICT (version_id, trace_id, tag) DO NOTHING`,
      [row.workspace_id, row.dataset_id, row.version_id, traceIds, tags, row.created_by],
    );
  }

  async deleteTags(versionId: string, traceId: string | undefined, tag: string | undefined): Promise<number> {
    const [row] = await this.db.query(
      'WITH gone AS (DELETE FROM trace_tags WHERE version_id = $1 AND ($2::text IS NULL OR trace_id = $2) AND ($3::text IS NULL OR tag = $3) RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [versionId, traceId ?? null, tag ?? null],
    );
    return row.n;
  }

  // Access
}

const RUN_COLUMNS =
  'id, workspace_id, dataset_id, version_id, source_kind, upload_id, connection_id, options, state, received, landed, deduplicated, dropped, drop_reasons, conventions, traces, failure, progress, job_id, created_by, created_at, started_at, finished_at, version_number, ordinal_base::float8 AS ordinal_base';
