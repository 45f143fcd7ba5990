import type { ColumnStats } from '../entities/dataset-version.entity.js';

/** Distinct values tracked exactly per column; beyond this the column's distinct count is recounted in SQL. */
export const DISTINCT_CAP = 200_000;

interface Acc {
  types: Record<string, number>;
  /** 53-bit hashes of the canonical values: a number per value instead of its text (expected collisions at the cap: about 2e-6) */
  distinct: Set<number> | undefined;
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

/** cyrb53: a fast 53-bit string hash (public domain, bryc), enough to count distinct values without keeping them. */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const imul = Math.imul;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = imul(h1 ^ c, 2654435761);
    h2 = imul(h2 ^ c, 1597334677);
  }
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507) ^ imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507) ^ imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * The statistics of RowsRepository.versionStats, gathered while an upload streams, so the
 * upload does not scan its rows again. Same definitions: dominant type over non-null values,
 * integer vs number, lengths in characters (code points), distinct non-null values.
 */
export class ColumnStatsCollector {
  private readonly columns = new Map<string, Acc>();

  add(row: Record<string, unknown>): void {
    for (const [name, value] of Object.entries(row)) {
      let acc = this.columns.get(name);
      if (!acc) {
        acc = { types: {}, distinct: new Set(), min: null, max: null, minLength: null, maxLength: null, totalLength: 0 };
        this.columns.set(name, acc);
      }
      if (value === null || value === undefined) continue;
      const type = typeof value === 'string' ? 'string' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value === 'boolean' ? 'boolean' : Array.isArray(value) ? 'array' : 'object';
      acc.types[type] = (acc.types[type] ?? 0) + 1;
      if (acc.distinct) {
        acc.distinct.add(hash53(typeof value === 'string' ? `s${value}` : canonical(value)));
        if (acc.distinct.size > DISTINCT_CAP) acc.distinct = undefined;
      }
      if (typeof value === 'number') {
        acc.min = acc.min === null ? value : Math.min(acc.min, value);
        acc.max = acc.max === null ? value : Math.max(acc.max, value);
      } else if (typeof value === 'string') {
        let length = value.length;
        // Count code points, as PostgreSQL's length() does: a surrogate pair is one character.
        if (/[\uD800-\uDBFF]/.test(value)) length = [...value].length;
        acc.minLength = acc.minLength === null ? length : Math.min(acc.minLength, length);
        acc.maxLength = acc.maxLength === null ? length : Math.max(acc.maxLength, length);
        acc.totalLength += length;
      }
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
        return columnStats(name, { ...acc.types }, rowCount, {
          distinct: acc.distinct?.size ?? recounted[name] ?? 0,
          min: acc.min,
          max: acc.max,
          minLength: acc.minLength,
          maxLength: acc.maxLength,
          meanLength: acc.types.string ? acc.totalLength / acc.types.string : null,
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
  agg: { distinct: number; min: number | null; max: number | null; minLength: number | null; maxLength: number | null; meanLength: number | null },
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
