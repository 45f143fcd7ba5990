import { createHash } from 'node:crypto';
import { timeOrderedUuid } from '#libs/common/time-ordered-uuid.js';
import type { BulkColumn } from '#libs/database/bulk-writer.js';
import { CopyBinaryEncoder, type CopyFraming, type EncodedChunk } from '#libs/database/copy-binary.js';
import type { ColumnStats } from '../entities/dataset-version.entity.js';
import { normalizeRow } from '../rows/rows.rules.js';
import { ColumnStatsCollector } from './column-stats.js';
import { readRows, type UploadFormat } from './row-sources.js';

/** The columns of `dataset_rows` an upload writes, in the order its encoded rows carry them. */
export const DATASET_ROW_COLUMNS: readonly BulkColumn[] = [
  { name: 'dataset_id', type: 'uuid' },
  { name: 'row_id', type: 'uuid' },
  { name: 'added_in', type: 'integer' },
  { name: 'ordinal', type: 'bigint' },
  { name: 'data', type: 'jsonb' },
];

export interface UploadEncodingOptions {
  path: string;
  format: UploadFormat;
  delimiter?: string;
  maxRows: number;
  datasetId: string;
  /** The version the rows are added in. */
  version: number;
  /** The ordinal of the first row. */
  firstOrdinal: number;
  framing: CopyFraming;
  /** A chunk is handed on once it holds about this many bytes. */
  chunkBytes: number;
}

/** What an upload's rows came to, gathered while they were encoded. */
export interface UploadSummary {
  rowCount: number;
  nextOrdinal: number;
  /** Columns in the order the file first shows them. */
  columnOrder: string[];
  /** SHA-256 over `row_id data` lines in row order: RowsRepository.contentHash's definition. */
  sha256: string;
  /** The columns' statistics; the distinct count of `uncounted` columns is left for SQL to count. */
  columns: ColumnStats[];
  uncounted: string[];
}

/** The file holds more rows than the limit allows. */
export class TooManyRowsError extends Error {
  constructor(readonly maxRows: number) {
    super(`The file has more than ${maxRows} rows (UPLOAD_MAX_ROWS)`);
  }
}

const BATCH = 2000;

/**
 * Reads an uploaded file and turns its rows into `dataset_rows` records in COPY's binary format:
 * every row held to the row rules, given its id and ordinal, measured for the column statistics
 * and hashed for the content hash as it passes, so nothing reads the rows back. Plain
 * computation over a file, so it runs the same on the request's thread or on a worker thread
 * (upload-thread.ts), where an upload's parsing overlaps the database's COPY.
 * Throws IngestError (a malformed file), RowRuleError (a row breaking a rule) or TooManyRowsError.
 */
export async function* encodeUpload(options: UploadEncodingOptions): AsyncGenerator<EncodedChunk, UploadSummary> {
  const { datasetId, version, maxRows, framing, chunkBytes } = options;
  const encoder = new CopyBinaryEncoder(DATASET_ROW_COLUMNS.map((c) => c.type));
  const stats = new ColumnStatsCollector();
  const content = createHash('sha256');
  const columnOrder: string[] = [];
  const seen = new Set<string>();
  let ordinal = options.firstOrdinal;
  let count = 0;
  let pending = 0;
  let lines: string[] = [];
  const take = (): EncodedChunk => {
    const chunk = { bytes: encoder.chunk(framing), rows: pending };
    pending = 0;
    return chunk;
  };
  for await (const rows of readRows(options.path, options.format, { delimiter: options.delimiter })) {
    for (const { where, data } of rows) {
      if (++count > maxRows) throw new TooManyRowsError(maxRows);
      const row = normalizeRow(data, where);
      stats.add(row.data);
      for (const key in row.data) {
        if (!seen.has(key)) {
          seen.add(key);
          columnOrder.push(key);
        }
      }
      const rowId = row.rowId ?? timeOrderedUuid();
      encoder.row([datasetId, rowId, version, ordinal++, row.json]);
      pending++;
      lines.push(`${rowId} ${row.json}`);
      if (lines.length >= BATCH) {
        content.update((count > lines.length ? '\n' : '') + lines.join('\n'));
        lines = [];
      }
    }
    if (encoder.bytes >= chunkBytes) yield take();
  }
  if (lines.length) content.update((count > lines.length ? '\n' : '') + lines.join('\n'));
  if (pending) yield take();
  const uncounted = stats.uncounted();
  return {
    rowCount: count,
    nextOrdinal: ordinal,
    columnOrder,
    sha256: content.digest('hex'),
    columns: stats.finish(columnOrder, count),
    uncounted,
  };
}
