import { loneSurrogatePath, MAX_VALUE_DEPTH, valueDepth } from '#libs/common/json-limits.js';
import { isUuid } from '#libs/common/uuid.js';
import { jsonbOutput } from '#libs/database/jsonb-text.js';
import { MAX_COLUMN_NAME, MAX_COLUMNS } from '../ingest/row-sources.js';

/** One row's JSON may take at most this many bytes. */
export const MAX_ROW_BYTES = 1024 * 1024;
/** Rows one insert, update or delete request may carry. */
export const MAX_ROWS_PER_EDIT = 1000;
/** The member of a row object that carries its id. */
export const ROW_ID = '_row_id';

export class RowRuleError extends Error {
  constructor(
    readonly where: string,
    readonly reason: string,
  ) {
    super(`${where}: ${reason}`);
  }
}

export interface NormalizedRow {
  /** The row's own `_row_id`, when it carried one. */
  rowId?: string;
  data: Record<string, unknown>;
  /** The row as jsonb prints it (libs/database/jsonb-text.ts): what is stored, hashed and measured against MAX_ROW_BYTES. */
  json: string;
}

/**
 * The rules every stored row follows, whether uploaded or inserted: a JSON object of at most
 * 1000 columns with names of 1..256 characters, nested at most 32 levels (MAX_VALUE_DEPTH), at
 * most 1 MiB, text without NUL or unpaired surrogates, and an optional `_row_id` UUID (kept as
 * the row's id, so a downloaded file uploads again with the same row ids).
 */
export function normalizeRow(row: Record<string, unknown>, where: string): NormalizedRow {
  let rowId: string | undefined;
  let data = row;
  if (ROW_ID in row) {
    const { [ROW_ID]: given, ...rest } = row;
    if (given !== null && given !== '' && given !== undefined) {
      if (typeof given !== 'string' || !isUuid(given))
        throw new RowRuleError(where, `${ROW_ID} must be a UUID, found ${JSON.stringify(given)?.slice(0, 60)}`);
      rowId = given.toLowerCase();
    }
    data = rest;
  }
  const keys = Object.keys(data);
  if (keys.length > MAX_COLUMNS)
    throw new RowRuleError(where, `${keys.length} columns; at most ${MAX_COLUMNS} are allowed`);
  for (const key of keys) {
    if (!key.length) throw new RowRuleError(where, 'a column has an empty name');
    if (key.length > MAX_COLUMN_NAME)
      throw new RowRuleError(where, `column name "${key.slice(0, 40)}…" is longer than ${MAX_COLUMN_NAME} characters`);
  }
  // Before anything recursive (the serialiser, PostgreSQL's jsonb parser) sees the row.
  if (valueDepth(data, MAX_VALUE_DEPTH) > MAX_VALUE_DEPTH)
    throw new RowRuleError(where, `the row nests arrays and objects deeper than ${MAX_VALUE_DEPTH} levels`);
  const json = jsonbOutput(data);
  // Strings are written by JSON.stringify, which writes an unpaired surrogate as a \udXXX escape; PostgreSQL refuses it in jsonb.
  if (json.includes('\\ud')) {
    const field = loneSurrogatePath(data);
    if (field !== undefined)
      throw new RowRuleError(
        where,
        `column ${field} holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair), which is not text`,
      );
  }
  // and NUL as the escape \u0000 (an odd run of backslashes before u0000).
  if (json.includes('u0000') && /(?:^|[^\\])(?:\\\\)*\\u0000/.test(json))
    throw new RowRuleError(where, 'a value contains the NUL character (\\u0000), which cannot be stored');
  // At most three bytes a UTF-16 unit: most rows need no count.
  if (json.length * 3 > MAX_ROW_BYTES && Buffer.byteLength(json) > MAX_ROW_BYTES)
    throw new RowRuleError(
      where,
      `the row takes ${Buffer.byteLength(json)} bytes; at most ${MAX_ROW_BYTES} are allowed`,
    );
  return { rowId, data, json };
}
