import { lazyRequire } from '#libs/common/lazy-require.js';
import { findPii, type PiiKind } from './pii.js';
import { asText, jaccard, mask, mix32, normalizeText, shingles, words } from './text.js';

// tinyld's language profiles load with the first check that detects a language, not at every start.
const tinyld = lazyRequire<typeof import('tinyld')>('tinyld');
// Bound once: a global lookup per call is slow where globals are intercepted (jest's sandbox) and this runs in hot loops.
const { imul } = Math;

export interface QualityRow {
  row_id: string;
  data: Record<string, unknown>;
}

export interface ColumnInfo {
  name: string;
  /** JSON type -> count, `null` counting absent values too. */
  types: Record<string, number>;
  mean_length?: number | null;
}

export interface QualityContext {
  columns: ColumnInfo[];
  mapping: { input?: string; expected_output?: string; context?: string; session_id?: string; metadata?: string[] };
  row_count: number;
}

type ParamType = 'number' | 'string' | 'boolean' | 'string[]';
export interface ParamSpec {
  type: ParamType;
  default: unknown;
  description: string;
}

export interface Finding {
  row_ids: string[];
  column?: string;
  message: string;
  detail?: Record<string, unknown>;
}

export interface CheckResult {
  check: string;
  status: 'pass' | 'warn' | 'fail' | 'skipped';
  summary: string;
  affected_rows: number;
  affected_ratio: number;
  findings: Finding[];
}

export interface QualityVerdict {
  verdict: 'pass' | 'warn' | 'fail';
  checks: CheckResult[];
  rows_checked: number;
}

export interface Selection {
  check: string;
  params: Record<string, unknown>;
}

/** A selection the engine cannot run: an unknown check or parameter, or a parameter of the wrong type. */
export class QualityCheckSelectionError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** One pass over the rows: `add` sees each row once, `finish` answers the findings. */
interface Accumulator {
  add(row: QualityRow): void;
  finish(rows: number): { affected: number; findings: Finding[]; summary: string };
}

interface Applicability {
  applicable: boolean;
  reason: string;
  columns: string[];
}

export interface CheckDefinition {
  id: string;
  name: string;
  description: string;
  params: Record<string, ParamSpec>;
  applicability(ctx: QualityContext): Applicability;
  start(ctx: QualityContext, params: Record<string, unknown>, columns: string[]): Accumulator;
}

const COMMON: Record<string, ParamSpec> = {
  warn_ratio: {
    type: 'number',
    default: 0,
    description: 'The check warns when more than this share of rows is affected',
  },
  fail_ratio: {
    type: 'number',
    default: 0.05,
    description: 'The check fails when more than this share of rows is affected',
  },
  max_findings: { type: 'number', default: 100, description: 'Findings listed at most (counts stay exact)' },
  columns: {
    type: 'string[]',
    default: [],
    description: 'Columns to check (default: chosen from the mapping and column types)',
  },
};

/** Columns whose non-null values are mostly strings. */
function textColumns(ctx: QualityContext): ColumnInfo[] {
  return ctx.columns.filter((c) => {
    const nonNull = Object.entries(c.types)
      .filter(([t]) => t !== 'null')
      .reduce((s, [, n]) => s + n, 0);
    return nonNull > 0 && (c.types.string ?? 0) >= 0.5 * nonNull;
  });
}

/** The column holding the main text: the mapped input, else the text column with the longest values. */
function primaryText(ctx: QualityContext): string | undefined {
  if (ctx.mapping.input) return ctx.mapping.input;
  return [...textColumns(ctx)].sort((a, b) => (b.mean_length ?? 0) - (a.mean_length ?? 0))[0]?.name;
}

function mappedPair(ctx: QualityContext): string[] {
  return [ctx.mapping.input, ctx.mapping.expected_output].filter((c): c is string => Boolean(c));
}

function applies(columns: string[], why: string, whyNot: string): Applicability {
  return columns.length
    ? { applicable: true, reason: why, columns }
    : { applicable: false, reason: whyNot, columns: [] };
}

/** Collects findings up to a cap; counts stay exact. */
class Findings {
  readonly list: Finding[] = [];
  constructor(private readonly max: number) {}
  push(f: Finding): void {
    if (this.list.length < this.max) this.list.push(f);
  }
}

const exactDuplicates: CheckDefinition = {
  id: 'exact_duplicates',
  name: 'Exact duplicates',
  description: 'Rows whose compared columns are identical after trimming, collapsing whitespace and case-folding',
  params: COMMON,
  applicability: (ctx) => {
    const cols = mappedPair(ctx).length ? mappedPair(ctx) : ctx.columns.map((c) => c.name);
    return applies(
      cols,
      mappedPair(ctx).length ? 'compares the mapped input and expected output' : 'compares every column',
      'the version has no columns',
    );
  },
  start: (_ctx, params, columns) => {
    const groups = new Map<string, string[]>();
    return {
      add(row) {
        const key = JSON.stringify(
          columns.map((c) => {
            const text = asText(row.data[c]);
            return text === undefined ? null : normalizeText(text);
          }),
        );
        const group = groups.get(key);
        if (group) group.push(row.row_id);
        else groups.set(key, [row.row_id]);
      },
      finish() {
        const findings = new Findings(params.max_findings as number);
        let affected = 0;
        let count = 0;
        for (const ids of groups.values()) {
          if (ids.length < 2) continue;
          count++;
          affected += ids.length - 1;
          findings.push({ row_ids: ids, message: `${ids.length} rows are the same`, detail: { columns } });
        }
        return {
          affected,
          findings: findings.list,
          summary: `${count} groups of duplicates; ${affected} rows repeat an earlier row`,
        };
      },
    };
  },
};

const NUM_HASHES = 64;
const BANDS = 16;
const ROWS_PER_BAND = NUM_HASHES / BANDS;
/** Candidates compared per row within one LSH bucket. */
const MAX_BUCKET_PAIRS = 50;
const SEEDS = Uint32Array.from({ length: NUM_HASHES }, (_, i) => mix32(0x9e3779b9 ^ imul(i + 1, 0x85ebca6b)));

/** MinHash signature: for each seeded permutation (murmur3's finaliser over hash ^ seed), the least value. */
function signature(set: Uint32Array): Uint32Array {
  const sig = new Uint32Array(NUM_HASHES).fill(0xffffffff);
  for (let j = 0; j < set.length; j++) {
    const h = set[j];
    // The mixing is written out here rather than calling mix32: this loop runs 64 times per shingle.
    for (let i = 0; i < NUM_HASHES; i++) {
      let x = h ^ SEEDS[i];
      x = imul(x ^ (x >>> 16), 0x85ebca6b);
      x = imul(x ^ (x >>> 13), 0xc2b2ae35);
      x = (x ^ (x >>> 16)) >>> 0;
      if (x < sig[i]) sig[i] = x;
    }
  }
  return sig;
}

const nearDuplicates: CheckDefinition = {
  id: 'near_duplicates',
  name: 'Near duplicates',
  description:
    'Rows whose text is nearly the same (Jaccard similarity of 3-word shingles at or above the threshold), found with MinHash and LSH; exact duplicates are left to exact_duplicates',
  params: {
    ...COMMON,
    threshold: {
      type: 'number',
      default: 0.85,
      description: 'Jaccard similarity at or above which two texts are near duplicates',
    },
  },
  applicability: (ctx) => {
    const col = primaryText(ctx);
    return applies(col ? [col] : [], `compares the text of "${col}"`, 'the version has no text column');
  },
  start: (_ctx, params, columns) => {
    const column = columns[0];
    const ids: string[] = [];
    const sets: Uint32Array[] = [];
    const seenText = new Set<string>();
    // One map per band, keyed by a 32-bit hash of the band's values (a collision only costs a Jaccard check).
    const bands = Array.from({ length: BANDS }, () => new Map<number, number[]>());
    return {
      add(row) {
        const text = asText(row.data[column]);
        if (!text || !text.trim()) return;
        const norm = normalizeText(text);
        if (seenText.has(norm)) return; // an exact duplicate: one representative is enough
        seenText.add(norm);
        const set = shingles(text, 3);
        if (!set.length) return;
        const index = ids.length;
        ids.push(row.row_id);
        sets.push(set);
        const sig = signature(set);
        for (let b = 0; b < BANDS; b++) {
          let key = b;
          for (let r = b * ROWS_PER_BAND; r < (b + 1) * ROWS_PER_BAND; r++) key = mix32(key ^ sig[r]) ^ imul(key, 31);
          const bucket = bands[b].get(key);
          if (bucket) bucket.push(index);
          else bands[b].set(key, [index]);
        }
      },
      finish() {
        const threshold = params.threshold as number;
        const parent = ids.map((_, i) => i);
        const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
        const best = new Map<number, number>();
        const checked = new Set<string>();
        for (const bucket of bands.flatMap((band) => [...band.values()].filter((b) => b.length > 1))) {
          for (let x = 0; x < bucket.length; x++) {
            // Within a crowded bucket, near neighbours suffice: union-find joins the rest transitively.
            for (let y = x + 1; y < Math.min(bucket.length, x + 1 + MAX_BUCKET_PAIRS); y++) {
              const [a, b] = [bucket[x], bucket[y]];
              const pair = `${a},${b}`;
              if (checked.has(pair)) continue;
              checked.add(pair);
              const similarity = jaccard(sets[a], sets[b]);
              if (similarity < threshold) continue;
              parent[find(a)] = find(b);
              best.set(a, Math.max(best.get(a) ?? 0, similarity));
              best.set(b, Math.max(best.get(b) ?? 0, similarity));
            }
          }
        }
        const groups = new Map<number, number[]>();
        ids.forEach((_, i) => {
          if (!best.has(i)) return;
          const root = find(i);
          groups.set(root, [...(groups.get(root) ?? []), i]);
        });
        const findings = new Findings(params.max_findings as number);
        let affected = 0;
        for (const members of groups.values()) {
          affected += members.length - 1;
          findings.push({
            row_ids: members.map((i) => ids[i]),
            column,
            message: `${members.length} rows have nearly the same ${column}`,
            detail: { max_similarity: Math.round(Math.max(...members.map((i) => best.get(i)!)) * 1000) / 1000 },
          });
        }
        return {
          affected,
          findings: findings.list,
          summary: `${groups.size} groups of near duplicates in ${column} (threshold ${threshold})`,
        };
      },
    };
  },
};

const emptyFields: CheckDefinition = {
  id: 'empty_fields',
  name: 'Empty or missing fields',
  description: 'Required columns that are missing, null, or empty or whitespace-only strings',
  params: COMMON,
  applicability: (ctx) => {
    const mapped = mappedPair(ctx);
    if (mapped.length) return applies(mapped, 'requires the mapped input and expected output', '');
    const nearlyFull = ctx.columns.filter((c) => (c.types.null ?? 0) <= 0.05 * ctx.row_count).map((c) => c.name);
    return applies(
      nearlyFull,
      'requires the columns filled in at least 95% of rows',
      'no column is filled in at least 95% of rows; name columns to require',
    );
  },
  start: (_ctx, params, columns) => {
    const empty = new Map<string, string[]>(columns.map((c) => [c, []]));
    const affectedRows = new Set<string>();
    return {
      add(row) {
        for (const c of columns) {
          const v = row.data[c];
          if (v === undefined || v === null || (typeof v === 'string' && !v.trim())) {
            empty.get(c)!.push(row.row_id);
            affectedRows.add(row.row_id);
          }
        }
      },
      finish() {
        const findings = new Findings(params.max_findings as number);
        for (const [column, ids] of empty) {
          if (ids.length)
            findings.push({
              row_ids: ids.slice(0, 1000),
              column,
              message: `${ids.length} rows have no ${column}`,
              detail: { rows: ids.length },
            });
        }
        return {
          affected: affectedRows.size,
          findings: findings.list,
          summary: `${affectedRows.size} rows miss a required value in ${columns.join(', ')}`,
        };
      },
    };
  },
};

const PII_KINDS: PiiKind[] = ['email', 'phone', 'card', 'iban', 'ssn'];
const PII_NAMES: Record<PiiKind, string> = {
  email: 'an email address',
  phone: 'a phone number',
  card: 'a payment card number',
  iban: 'an IBAN',
  ssn: 'a US social security number',
};

const pii: CheckDefinition = {
  id: 'pii',
  name: 'Personal data',
  description:
    'Emails, phone numbers, payment card numbers (Luhn-valid), IBANs (mod-97 valid) and US social security numbers in text',
  params: {
    ...COMMON,
    fail_ratio: { ...COMMON.fail_ratio, default: 0.01 },
    kinds: { type: 'string[]', default: PII_KINDS, description: `Kinds to look for: ${PII_KINDS.join(', ')}` },
  },
  applicability: (ctx) =>
    applies(
      textColumns(ctx).map((c) => c.name),
      'scans every text column',
      'the version has no text column',
    ),
  start: (_ctx, params, columns) => {
    const kinds = new Set(params.kinds as PiiKind[]);
    const affected = new Set<string>();
    const byKind: Record<string, number> = {};
    const findings = new Findings(params.max_findings as number);
    return {
      add(row) {
        for (const column of columns) {
          const text = asText(row.data[column]);
          if (!text) continue;
          for (const match of findPii(text, kinds)) {
            affected.add(row.row_id);
            byKind[match.kind] = (byKind[match.kind] ?? 0) + 1;
            findings.push({
              row_ids: [row.row_id],
              column,
              message: `${column} holds ${PII_NAMES[match.kind]}`,
              detail: { kind: match.kind, excerpt: mask(match.value) },
            });
          }
        }
      },
      finish() {
        const counts = Object.entries(byKind)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ');
        return {
          affected: affected.size,
          findings: findings.list,
          summary: affected.size ? `${affected.size} rows hold personal data (${counts})` : 'no personal data found',
        };
      },
    };
  },
};

function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

const lengthOutliers: CheckDefinition = {
  id: 'length_outliers',
  name: 'Length outliers',
  description: 'Texts whose length in characters lies outside [Q1 - k·IQR, Q3 + k·IQR] of their column',
  params: { ...COMMON, k: { type: 'number', default: 3, description: 'IQR multiplier of the fences' } },
  applicability: (ctx) => {
    const cols = mappedPair(ctx).length ? mappedPair(ctx) : [primaryText(ctx)].filter((c): c is string => Boolean(c));
    return applies(
      cols,
      'measures the mapped input and expected output (or the main text column)',
      'the version has no text column',
    );
  },
  start: (_ctx, params, columns) => {
    const lengths = new Map<string, Array<[string, number]>>(columns.map((c) => [c, []]));
    return {
      add(row) {
        for (const c of columns) {
          const text = asText(row.data[c]);
          if (text && text.trim()) lengths.get(c)!.push([row.row_id, [...text].length]);
        }
      },
      finish() {
        const findings = new Findings(params.max_findings as number);
        const affected = new Set<string>();
        const k = params.k as number;
        const bounds: string[] = [];
        for (const [column, entries] of lengths) {
          if (entries.length < 4) continue;
          const sorted = entries.map(([, n]) => n).sort((a, b) => a - b);
          const q1 = quantile(sorted, 0.25);
          const q3 = quantile(sorted, 0.75);
          const low = q1 - k * (q3 - q1);
          const high = q3 + k * (q3 - q1);
          bounds.push(`${column} [${Math.max(0, low)}, ${high}]`);
          for (const [id, n] of entries) {
            if (n >= low && n <= high) continue;
            affected.add(id);
            findings.push({
              row_ids: [id],
              column,
              message: `${column} is ${n} characters long, ${n > high ? 'above' : 'below'} the usual range`,
              detail: { length: n, low: Math.max(0, low), high },
            });
          }
        }
        return {
          affected: affected.size,
          findings: findings.list,
          summary: `${affected.size} rows outside the length fences ${bounds.join('; ') || '(too few texts to tell)'}`,
        };
      },
    };
  },
};

const MIN_LANGUAGE_CHARS = 20;

const languageMismatch: CheckDefinition = {
  id: 'language_mismatch',
  name: 'Language mismatch',
  description: `Rows whose input and expected output are in different languages, or whose text is not in the dataset's main (or the expected) language; texts under ${MIN_LANGUAGE_CHARS} characters are skipped`,
  params: {
    ...COMMON,
    expected_language: {
      type: 'string',
      default: '',
      description: 'ISO 639-1 code every text should be in (default: the most common language)',
    },
  },
  applicability: (ctx) => {
    const cols = mappedPair(ctx).length ? mappedPair(ctx) : [primaryText(ctx)].filter((c): c is string => Boolean(c));
    return applies(
      cols,
      'detects the language of the mapped input and expected output (or the main text column)',
      'the version has no text column',
    );
  },
  start: (_ctx, params, columns) => {
    const detected: Array<{ id: string; langs: Array<string | undefined> }> = [];
    const tally = new Map<string, number>();
    return {
      add(row) {
        const langs = columns.map((c) => {
          const text = asText(row.data[c]);
          if (!text || text.trim().length < MIN_LANGUAGE_CHARS) return undefined;
          const lang = tinyld().detect(text) || undefined;
          if (lang) tally.set(lang, (tally.get(lang) ?? 0) + 1);
          return lang;
        });
        detected.push({ id: row.row_id, langs });
      },
      finish() {
        const expected =
          (params.expected_language as string) || [...tally.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
        const findings = new Findings(params.max_findings as number);
        let affected = 0;
        for (const { id, langs } of detected) {
          const known = langs.filter((l): l is string => Boolean(l));
          const pairMismatch = columns.length === 2 && known.length === 2 && known[0] !== known[1];
          const offMain = expected !== undefined && known.some((l) => l !== expected);
          if (!pairMismatch && !offMain) continue;
          affected++;
          const detail = Object.fromEntries(columns.map((c, i) => [c, langs[i] ?? null]));
          findings.push({
            row_ids: [id],
            message: pairMismatch ? `${columns[0]} and ${columns[1]} are in different languages` : `not in ${expected}`,
            detail: { ...detail, expected_language: expected ?? null },
          });
        }
        return {
          affected,
          findings: findings.list,
          summary: `main language ${expected ?? 'unknown'}; ${affected} rows differ`,
        };
      },
    };
  },
};

const labelLeakage: CheckDefinition = {
  id: 'label_leakage',
  name: 'Label leakage',
  description:
    'Rows whose expected output appears verbatim (normalised) in their input or context, so a system can copy the answer',
  params: {
    ...COMMON,
    min_words: {
      type: 'number',
      default: 3,
      description: 'Expected outputs shorter than this many words are not checked (short labels appear by chance)',
    },
  },
  applicability: (ctx) => {
    const { expected_output, input, context } = ctx.mapping;
    const sources = [input, context].filter((c): c is string => Boolean(c));
    return expected_output && sources.length
      ? {
          applicable: true,
          reason: `looks for ${expected_output} inside ${sources.join(' and ')}`,
          columns: [expected_output, ...sources],
        }
      : { applicable: false, reason: 'needs expected_output and input or context mapped (POST .../map)', columns: [] };
  },
  start: (_ctx, params, columns) => {
    const [expectedColumn, ...sources] = columns;
    const findings = new Findings(params.max_findings as number);
    let affected = 0;
    return {
      add(row) {
        const expected = asText(row.data[expectedColumn]);
        if (!expected || words(expected).length < (params.min_words as number)) return;
        const needle = normalizeText(expected);
        const leaked = sources.filter((c) => {
          const text = asText(row.data[c]);
          return text !== undefined && normalizeText(text).includes(needle);
        });
        if (!leaked.length) return;
        affected++;
        findings.push({
          row_ids: [row.row_id],
          column: leaked[0],
          message: `${expectedColumn} appears in ${leaked.join(' and ')}`,
          detail: { leaked_into: leaked },
        });
      },
      finish: () => ({ affected, findings: findings.list, summary: `${affected} rows leak their expected output` }),
    };
  },
};

export const QUALITY_CHECKS: readonly CheckDefinition[] = [
  exactDuplicates,
  nearDuplicates,
  emptyFields,
  pii,
  lengthOutliers,
  languageMismatch,
  labelLeakage,
];

/** Checks a selection against the catalogue and fills in default params. */
export function validateSelection(selection: unknown): Selection[] {
  if (!Array.isArray(selection))
    throw new QualityCheckSelectionError('checks must be an array of { "check": id, "params": {...} }');
  if (selection.length > QUALITY_CHECKS.length * 2)
    throw new QualityCheckSelectionError(`at most ${QUALITY_CHECKS.length * 2} checks per run`);
  return selection.map((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new QualityCheckSelectionError('each check is an object with "check" and optional "params"', String(i));
    const { check, params = {}, ...rest } = item as { check?: unknown; params?: unknown };
    if (Object.keys(rest).length)
      throw new QualityCheckSelectionError(
        `unknown member "${Object.keys(rest)[0]}"; a check has "check" and "params"`,
        String(i),
      );
    const def = QUALITY_CHECKS.find((c) => c.id === check);
    if (!def)
      throw new QualityCheckSelectionError(
        `unknown check ${JSON.stringify(check)}; the checks are ${QUALITY_CHECKS.map((c) => c.id).join(', ')}`,
        `${i}.check`,
      );
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      throw new QualityCheckSelectionError('params must be an object', `${i}.params`);
    const resolved: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(def.params)) resolved[name] = spec.default;
    for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
      const spec = def.params[name];
      if (!spec)
        throw new QualityCheckSelectionError(
          `${def.id} has no parameter "${name}"; it has ${Object.keys(def.params).join(', ')}`,
          `${i}.params.${name}`,
        );
      const ok =
        spec.type === 'string[]'
          ? Array.isArray(value) && value.length <= 1000 && value.every((v) => typeof v === 'string')
          : spec.type === 'number'
            ? typeof value === 'number' && Number.isFinite(value) && value >= 0
            : typeof value === spec.type;
      if (!ok)
        throw new QualityCheckSelectionError(
          `${def.id}.${name} must be ${spec.type === 'number' ? 'a non-negative number' : `a ${spec.type}`}`,
          `${i}.params.${name}`,
        );
      resolved[name] = value;
    }
    if (def.id === 'pii') {
      const bad = (resolved.kinds as string[]).filter((k) => !(PII_KINDS as string[]).includes(k));
      if (bad.length)
        throw new QualityCheckSelectionError(
          `pii.kinds: unknown kind "${bad[0]}"; the kinds are ${PII_KINDS.join(', ')}`,
          `${i}.params.kinds`,
        );
    }
    return { check: def.id, params: resolved };
  });
}

/** Runs the selected checks in one pass over the rows. A check whose columns are missing is skipped, with the reason. */
export async function runQualityChecks(
  rows: AsyncIterable<QualityRow> | Iterable<QualityRow>,
  ctx: QualityContext,
  selection: Selection[],
): Promise<QualityVerdict> {
  const known = new Set(ctx.columns.map((c) => c.name));
  const running = selection.map((sel) => {
    const def = QUALITY_CHECKS.find((c) => c.id === sel.check)!;
    const given = sel.params.columns as string[];
    const applicability = given.length
      ? { applicable: true, reason: 'columns given', columns: given }
      : def.applicability(ctx);
    const missing = applicability.columns.filter((c) => !known.has(c));
    if (!applicability.applicable || missing.length) {
      return {
        sel,
        skipped: missing.length ? `no column ${missing.join(', ')} in this version` : applicability.reason,
      };
    }
    return { sel, acc: def.start(ctx, sel.params, applicability.columns) };
  });
  let count = 0;
  for await (const row of rows) {
    count++;
    for (const r of running) r.acc?.add(row);
  }
  const checks: CheckResult[] = running.map(({ sel, acc, skipped }) => {
    if (!acc)
      return {
        check: sel.check,
        status: 'skipped',
        summary: skipped!,
        affected_rows: 0,
        affected_ratio: 0,
        findings: [],
      };
    const { affected, findings, summary } = acc.finish(count);
    const ratio = count ? affected / count : 0;
    const status =
      ratio > (sel.params.fail_ratio as number) ? 'fail' : ratio > (sel.params.warn_ratio as number) ? 'warn' : 'pass';
    const capped = findings.length === sel.params.max_findings ? ` (first ${findings.length} findings listed)` : '';
    return {
      check: sel.check,
      status,
      summary: summary + capped,
      affected_rows: affected,
      affected_ratio: Math.round(ratio * 10000) / 10000,
      findings,
    };
  });
  const verdict = checks.some((c) => c.status === 'fail')
    ? 'fail'
    : checks.some((c) => c.status === 'warn')
      ? 'warn'
      : 'pass';
  return { verdict, checks, rows_checked: count };
}

/** Checks suited to a schema, each with why. */
export function suggestChecks(
  ctx: QualityContext,
): Array<{ check: string; reason: string; params: Record<string, unknown> }> {
  return QUALITY_CHECKS.flatMap((def) => {
    const a = def.applicability(ctx);
    if (!a.applicable) return [];
    return [{ check: def.id, reason: `${def.name}: ${a.reason}`, params: {} }];
  });
}
