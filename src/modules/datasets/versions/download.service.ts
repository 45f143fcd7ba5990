import { Injectable } from '@nestjs/common';
import { parquetWriteRows } from 'hyparquet-writer';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { writeCsv } from '#libs/common/csv-stream.js';
import { NotFoundError } from '#libs/common/domain-error.js';
import { attachment, type FileAnswer } from '#libs/common/file-answer.js';
import { streamWriter } from '#libs/common/parquet-stream.js';
import { UrlSigner } from '#libs/common/signed-url.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { DownloadFormat } from '../datasets.mapper.js';
import { DatasetsRepository } from '../datasets.repository.js';
import type { PresignedUrlResponse } from '../dto/download.dto.js';
import type { ColumnStats, DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import { RowsRepository } from '../rows/rows.repository.js';
import { ROW_ID } from '../rows/rows.rules.js';

const CONTENT_TYPES: Record<DownloadFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

/**
 * Signed, expiring download URLs for dataset versions, served by the service itself: the file
 * is streamed from the version's rows in the requested format, never held whole in memory.
 */
@Injectable()
export class DownloadService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly rows: RowsRepository,
    private readonly signer: UrlSigner,
    private readonly config: AppConfig,
  ) {}

  presign(
    origin: string,
    datasetName: string,
    version: DatasetVersionEntity,
    format: DownloadFormat = 'csv',
    ttl?: number,
  ): PresignedUrlResponse {
    const filename = `${datasetName.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100) || 'dataset'}-v${version.number}.${format}`;
    const path = `/files/dataset-versions/${version.id}/${encodeURIComponent(filename)}`;
    const signed = this.signer.sign(origin, path, { format }, ttl ?? this.config.env.SIGNED_URL_TTL_SECONDS);
    return {
      url: signed.url,
      method: 'GET',
      expires_at: signed.expires_at,
      format,
      filename,
      version_id: version.id,
      content_sha256: version.contentSha256,
    };
  }

  /** Checks the signature (`query`, the request's own), then answers the file, streamed from the version's rows. */
  async file(
    query: Record<string, unknown>,
    versionId: string,
    filename: string,
    format: DownloadFormat,
  ): Promise<FileAnswer> {
    const path = `/files/dataset-versions/${versionId}/${encodeURIComponent(filename)}`;
    this.signer.assertValid(path, query);
    const version = await this.datasets.findVersionByIdUnscoped(versionId);
    if (!version) throw new NotFoundError('dataset version', versionId);
    const columns = version.columns;
    return {
      contentType: CONTENT_TYPES[format],
      headers: {
        'Content-Disposition': attachment(filename),
        ETag: `"${version.contentSha256}-${format}"`,
        'Cache-Control': 'private, max-age=0',
      },
      body: async (out) => {
        const batches = this.rows.stream(version.datasetId, version.number);
        if (format === 'jsonl') await this.writeJsonl(out, batches);
        else if (format === 'csv') await this.writeCsv(out, columns, batches);
        else await this.writeParquet(out, columns, batches);
      },
    };
  }

  private async writeJsonl(
    out: Writable,
    batches: AsyncIterable<Array<{ row_id: string; data: Record<string, unknown> }>>,
  ): Promise<void> {
    for await (const batch of batches) {
      await write(out, batch.map((r) => `${JSON.stringify({ [ROW_ID]: r.row_id, ...r.data })}\n`).join(''));
    }
  }

  private async writeCsv(
    out: Writable,
    columns: ColumnStats[],
    batches: AsyncIterable<Array<{ row_id: string; data: Record<string, unknown> }>>,
  ): Promise<void> {
    const names = columns.map((c) => c.name);
    async function* records() {
      for await (const batch of batches)
        for (const r of batch) yield [r.row_id, ...names.map((n) => csvValue(r.data[n]))];
    }
    await writeCsv(out, { header: true, columns: [ROW_ID, ...names], cast: { boolean: (v) => String(v) } }, records());
  }

  private async writeParquet(
    out: Writable,
    columns: ColumnStats[],
    batches: AsyncIterable<Array<{ row_id: string; data: Record<string, unknown> }>>,
  ): Promise<void> {
    const types = columns.map(parquetType);
    async function* rows() {
      for await (const batch of batches) {
        for (const r of batch) {
          const row: Record<string, unknown> = { [ROW_ID]: r.row_id };
          columns.forEach((c, i) => (row[c.name] = parquetValue(r.data[c.name], types[i])));
          yield row;
        }
      }
    }
    await parquetWriteRows({
      writer: streamWriter(out),
      rows: rows(),
      columns: [
        { name: ROW_ID, type: 'STRING', nullable: false },
        ...columns.map((c, i) => ({ name: c.name, type: types[i], nullable: true })),
      ],
      rowGroupSize: 10_000,
    });
  }
}

function write(out: Writable, chunk: string | Uint8Array): Promise<void> | void {
  if (!out.write(chunk)) return once(out, 'drain').then(() => undefined);
}

/** CSV cells: objects and arrays as JSON, null and absent as the empty cell (how uploads read them back). */
function csvValue(value: unknown): string | number | boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value as string | number | boolean;
}

type ParquetType = 'BOOLEAN' | 'INT64' | 'DOUBLE' | 'STRING';

/** One Parquet type per column from the version's statistics; anything not uniform is a string (JSON for objects). */
function parquetType(column: ColumnStats): ParquetType {
  const present = Object.entries(column.types).filter(([t]) => t !== 'null');
  const kinds = new Set(present.map(([t]) => t));
  if (kinds.size === 1 && kinds.has('boolean')) return 'BOOLEAN';
  if (
    kinds.size === 1 &&
    kinds.has('integer') &&
    Math.abs(column.min ?? 0) <= Number.MAX_SAFE_INTEGER &&
    Math.abs(column.max ?? 0) <= Number.MAX_SAFE_INTEGER
  )
    return 'INT64';
  if (kinds.size > 0 && [...kinds].every((k) => k === 'integer' || k === 'number')) return 'DOUBLE';
  return 'STRING';
}

function parquetValue(value: unknown, type: ParquetType): unknown {
  if (value === undefined || value === null) return null;
  if (type === 'INT64') return BigInt(value as number);
  if (type === 'STRING') return typeof value === 'string' ? value : JSON.stringify(value);
  return value;
}

/** A hyparquet-writer sink that flushes each filled megabyte to the response, honouring backpressure. */
