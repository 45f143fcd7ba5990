import { JSONParser } from '@streamparser/json-node';
import { type Options as CsvOptions, parse as parseCsv } from 'csv-parse';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, toJson } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

export const UPLOAD_FORMATS = ['csv', 'json', 'jsonl', 'parquet'] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];

/** A row as parsed from a file: `where` names it for error messages (`line 12`, `row 7`). */
export interface SourceRow {
  where: string;
  data: Record<string, unknown>;
}

/** A file that cannot be read as the format it claims; `where` points at the offending line or row. */
export class IngestError extends Error {
  constructor(
    readonly where: string,
    readonly reason: string,
  ) {
    super(`${where}: ${reason}`);
  }
}

export const MAX_COLUMNS = 1000;
export const MAX_COLUMN_NAME = 256;

/** The format named by a file name's extension, or undefined. */
export function formatFromFilename(filename: string): UploadFormat | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  if (ext === 'ndjson') return 'jsonl';
  return (UPLOAD_FORMATS as readonly string[]).includes(ext ?? '') ? (ext as UploadFormat) : undefined;
}

/**
 * Streams the rows of a file, a batch at a time (what the parser has ready: up to a few thousand
 * rows, or a Parquet batch): memory stays bounded whatever the file's size, and the rows cost no
 * promise each on their way.
 */
export function readRows(
  path: string,
  format: UploadFormat,
  options: { delimiter?: string } = {},
): AsyncGenerator<SourceRow[]> {
  switch (format) {
    case 'csv':
      return csvRows(path, options.delimiter ?? ',');
    case 'jsonl':
      return jsonlRows(path);
    case 'json':
      return jsonArrayRows(path);
    case 'parquet':
      return parquetRows(path);
  }
}

/**
 * CSV cells are text; a cell becomes a JSON number, boolean or null only when the text is the
 * canonical spelling of one: `42`, `-3.5`, `true`, `false`, and the empty cell (null).
 * `007`, `1e3`, `+1` and `TRUE` stay strings, so codes and identifiers are never mangled.
 */
export function csvCell(text: string): unknown {
  if (text === '') return null;
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (/^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  return text;
}

/** A parser's output as arrays of what it has buffered, instead of one promise per object. */
async function* drain<T>(stream: Readable): AsyncGenerator<T[]> {
  for (;;) {
    const batch: T[] = [];
    let item: T | null;
    while ((item = stream.read() as T | null) !== null) batch.push(item);
    if (batch.length) {
      yield batch;
      continue;
    }
    if (stream.readableEnded) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        stream.off('readable', done).off('end', done).off('error', failed);
        resolve();
      };
      const failed = (err: Error) => {
        stream.off('readable', done).off('end', done).off('error', failed);
        reject(err);
      };
      stream.on('readable', done).on('end', done).on('error', failed);
    });
  }
}

/** Records the parser may hold ready at once (csv-parse's default is 16): the size of a batch. */
const PARSED_AHEAD = 2000;

async function* csvRows(path: string, delimiter: string): AsyncGenerator<SourceRow[]> {
  // Without csv-parse's per-record `info` (a third of its cost): parse errors carry their own
  // line, and row rules name the record (quoted fields may span lines). Its options go to its
  // Transform stream too (its type omits them): a batch is what it holds ready.
  const file = createReadStream(path);
  const parser = file.pipe(
    parseCsv({
      delimiter,
      bom: true,
      relax_quotes: false,
      skip_empty_lines: true,
      relax_column_count: false,
      max_record_size: 16 * 1024 * 1024,
      readableHighWaterMark: PARSED_AHEAD,
    } as CsvOptions),
  );
  let header: string[] | undefined;
  let n = 0;
  try {
    for await (const records of drain<string[]>(parser)) {
      const rows: SourceRow[] = [];
      for (const record of records) {
        if (!header) {
          header = checkHeader(record);
          continue;
        }
        const data: Record<string, unknown> = {};
        for (let i = 0; i < header.length; i++) data[header[i]] = csvCell(record[i]);
        rows.push({ where: `record ${++n}`, data });
      }
      if (rows.length) yield rows;
    }
  } catch (err) {
    if (err instanceof IngestError) throw err;
    const e = err as { code?: string; lines?: number; message: string };
    if (e.code?.startsWith('CSV_')) throw new IngestError(`line ${e.lines ?? '?'}`, csvReason(e.message));
    throw err;
  } finally {
    // A consumer that stops early (a row breaking a rule) leaves the file half read: close it now.
    file.destroy();
    parser.destroy();
  }
  if (!header) throw new IngestError('line 1', 'the file is empty: a CSV upload needs a header line');
}

function csvReason(message: string): string {
  // csv-parse says e.g. "Invalid Record Length: expect 3, got 2 on line 4"; the line is reported apart.
  return message
    .replace(/ on line \d+$/, '')
    .replace(/^Invalid Record Length: expect (\d+), got (\d+)$/, 'expected $1 fields as in the header, found $2');
}

function checkHeader(record: string[]): string[] {
  if (record.length > MAX_COLUMNS)
    throw new IngestError('line 1', `${record.length} columns; at most ${MAX_COLUMNS} are allowed`);
  const seen = new Set<string>();
  return record.map((raw, i) => {
    const name = raw.trim();
    if (!name) throw new IngestError('line 1', `column ${i + 1} has an empty name`);
    if (name.length > MAX_COLUMN_NAME)
      throw new IngestError('line 1', `column ${i + 1} has a name longer than ${MAX_COLUMN_NAME} characters`);
    if (seen.has(name)) throw new IngestError('line 1', `column name "${name}" appears twice`);
    seen.add(name);
    return name;
  });
}

async function* jsonlRows(path: string): AsyncGenerator<SourceRow[]> {
  let n = 0;
  let rest = '';
  const parse = (line: string, rows: SourceRow[]) => {
    n++;
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new IngestError(`line ${n}`, `not valid JSON (${(err as Error).message})`);
    }
    rows.push({ where: `line ${n}`, data: asRowObject(value, `line ${n}`) });
  };
  // Lines end at \n (a \r before it is JSON whitespace); a chunk's last, unfinished line waits for the next.
  for await (const chunk of createReadStream(path, {
    encoding: 'utf8',
    highWaterMark: 1 << 18,
  }) as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    const rows: SourceRow[] = [];
    for (const line of lines) parse(line, rows);
    if (rows.length) yield rows;
  }
  const rows: SourceRow[] = [];
  if (rest) parse(rest, rows);
  if (rows.length) yield rows;
}

async function* jsonArrayRows(path: string): AsyncGenerator<SourceRow[]> {
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false }, { readableHighWaterMark: PARSED_AHEAD });
  const file = createReadStream(path);
  const source = file.pipe(parser);
  let n = 0;
  let sawArray = false;
  try {
    for await (const items of drain<{ value: unknown; key: unknown }>(source)) {
      const rows: SourceRow[] = [];
      for (const item of items) {
        if (!sawArray) {
          if (typeof item.key !== 'number')
            throw new IngestError(
              'the document',
              'a JSON upload must be an array of objects (use JSON Lines for one object per line)',
            );
          sawArray = true;
        }
        n++;
        rows.push({ where: `row ${n}`, data: asRowObject(item.value, `row ${n}`) });
      }
      yield rows;
    }
  } catch (err) {
    if (err instanceof IngestError) throw err;
    throw new IngestError(n ? `after row ${n}` : 'the document', `not valid JSON (${(err as Error).message})`);
  } finally {
    file.destroy();
    source.destroy();
  }
  if (!sawArray) throw new IngestError('the document', 'a JSON upload must be a non-empty array of objects');
}

const PARQUET_BATCH = 5000;

async function* parquetRows(path: string): AsyncGenerator<SourceRow[]> {
  let file;
  let metadata;
  try {
    file = await asyncBufferFromFile(path);
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw new IngestError('the file', `not a readable Parquet file (${(err as Error).message})`);
  }
  const total = Number(metadata.num_rows);
  for (let start = 0; start < total; start += PARQUET_BATCH) {
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({
        file,
        metadata,
        compressors,
        rowStart: start,
        rowEnd: Math.min(total, start + PARQUET_BATCH),
      });
    } catch (err) {
      throw new IngestError(
        `row ${start + 1}`,
        `cannot decode this part of the Parquet file (${(err as Error).message})`,
      );
    }
    yield rows.map((row, i) => ({ where: `row ${start + i + 1}`, data: toJson(row) as Record<string, unknown> }));
  }
}

function asRowObject(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new IngestError(
      where,
      `expected a JSON object (one row), found ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
    );
  }
  return value as Record<string, unknown>;
}
