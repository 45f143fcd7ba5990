import { WordHashSet } from '#libs/common/hash-set.js';
import type { ColumnStats } from '../entities/dataset-version.entity.js';

/** Distinct values tracked exactly per column; beyond this the column's distinct count is recounted in SQL. */
export const DISTINCT_CAP = 200_000;

const TYPE_NAMES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;
/** Indexes into Acc.types. */
const [STRING, INTEGER, NUMBER, BOOLEAN, OBJECT, ARRAY] = [0, 1, 2, 3, 4, 5];

interface Acc {
  /** Non-null values per type, indexed as TYPE_NAMES. */
  types: [number, number, number, number, number, number];
  /** 64-bit hashes of the canonical values: two numbers per value in typed arrays instead of its text (expected collisions at the cap: about 1e-9) */
  distinct: WordHashSet | undefined;
  min: number | null;
  max: number | null;
  minLength: number | null;
  maxLength: number | null;
  totalLength: number;
}

/** jsonb equality: objects compare regardless of key order, so their text is built with sorted keys. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/** The two 32-bit halves of a value's hash, handed to the set (which copies what it keeps). */
const pair = new Uint32Array(2);

/** cyrb53's mixing (public domain, bryc) kept to 64 bits: `seed` tells strings from other JSON text with the same characters. */
function hashInto(set: WordHashSet, text: string, seed: number): void {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  const imul = Math.imul;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = imul(h1 ^ c, 2654435761);
    h2 = imul(h2 ^ c, 1597334677);
  }
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507) ^ imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507) ^ imul(h1 ^ (h1 >>> 13), 3266489909);
  pair[0] = h1;
  pair[1] = h2;
  set.add(pair);
}

const SURROGATE = /[\uD800-\uDBFF]/;

/**
 * The statistics of RowsRepository.versionStats, gathered while an upload streams, so the
 * upload does not scan its rows again. Same definitions: dominant type over non-null values,
 * integer vs number, lengths in characters (code points), distinct non-null values.
 */
export class ColumnStatsCollector {
  private readonly columns = new Map<string, Acc>();

  add(row: Record<string, unknown>): void {
    for (const name in row) {
      const value = row[name];
      let acc = this.columns.get(name);
      if (!acc) {
        acc = {
          types: [0, 0, 0, 0, 0, 0],
          distinct: new WordHashSet(2),
          min: null,
          max: null,
          minLength: null,
          maxLength: null,
          totalLength: 0,
        };
        this.columns.set(name, acc);
      }
      if (value === null || value === undefined) continue;
      const distinct = acc.distinct;
      if (typeof value === 'string') {
        acc.types[STRING]++;
        if (distinct) hashInto(distinct, value, 0x73);
        let length = value.length;
        // Count code points, as PostgreSQL's length() does: a surrogate pair is one character.
        if (SURROGATE.test(value)) length = [...value].length;
        acc.minLength = acc.minLength === null || length < acc.minLength ? length : acc.minLength;
        acc.maxLength = acc.maxLength === null || length > acc.maxLength ? length : acc.maxLength;
        acc.totalLength += length;
      } else if (typeof value === 'number') {
        acc.types[Number.isInteger(value) ? INTEGER : NUMBER]++;
        if (distinct) hashInto(distinct, JSON.stringify(value), 0);
        acc.min = acc.min === null || value < acc.min ? value : acc.min;
        acc.max = acc.max === null || value > acc.max ? value : acc.max;
      } else {
        acc.types[typeof value === 'boolean' ? BOOLEAN : Array.isArray(value) ? ARRAY : OBJECT]++;
        if (distinct) hashInto(distinct, canonical(value), 0);
      }
      if (distinct && distinct.size > DISTINCT_CAP) acc.distinct = undefined;
    }
  }

  /** Columns whose distinct values passed the cap: their distinct_count must be counted in SQL. */
  uncounted(): string[] {
    return [...this.columns.entries()].filter(([, acc]) => !acc.distinct).map(([name]) => name);
  }

  finish(order: string[], rowCount: number, recounted: Record<string, number> = {}): ColumnStats[] {
    return order
      .filter((name) => this.columns.has(name))
      .map((name) => {
        const acc = this.columns.get(name)!;
        const counts = Object.fromEntries(TYPE_NAMES.map((t, i) => [t, acc.types[i]]));
        return columnStats(name, counts, rowCount, {
          distinct: acc.distinct?.size ?? recounted[name] ?? 0,
          min: acc.min,
          max: acc.max,
          minLength: acc.minLength,
          maxLength: acc.maxLength,
          meanLength: acc.types[STRING] ? acc.totalLength / acc.types[STRING] : null,
        });
      });
  }
}

const TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

/** One column's statistics from its per-type counts and aggregates (shared with the SQL path). */
export function columnStats(
  name: string,
  counts: Record<string, number>,
  rowCount: number,
  agg: {
    distinct: number;
    min: number | null;
    max: number | null;
    minLength: number | null;
    maxLength: number | null;
    meanLength: number | null;
  },
): ColumnStats {
  const types: Record<string, number> = {};
  let nonNull = 0;
  for (const t of TYPES) {
    const n = counts[t] ?? 0;
    if (n) types[t] = n;
    nonNull += n;
  }
  const nullCount = rowCount - nonNull;
  if (nullCount) types.null = nullCount;
  const numeric = (types.integer ?? 0) + (types.number ?? 0);
  let type: ColumnStats['type'] = 'null';
  if (nonNull) {
    // integer and number together make a numeric column: `number` unless every value is whole.
    if (numeric >= 0.9 * nonNull) type = types.number ? 'number' : 'integer';
    else {
      const top = Object.entries(types).find(([t, n]) => t !== 'null' && n >= 0.9 * nonNull);
      type = top ? (top[0] as ColumnStats['type']) : 'mixed';
    }
  }
  return {
    name,
    type,
    types,
    null_count: nullCount,
    distinct_count: agg.distinct,
    ...(numeric ? { min: agg.min, max: agg.max } : {}),
    ...(types.string ? { min_length: agg.minLength, max_length: agg.maxLength, mean_length: agg.meanLength } : {}),
  };
}
