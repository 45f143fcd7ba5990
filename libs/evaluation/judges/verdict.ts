/**
 * Reads a judge's answer into a verdict on the scale. Tolerant of how models wrap JSON, strict
 * about what counts as a score: when no score or label is clearly stated, the answer is
 * `unparseable_verdict`, never a number picked from surrounding text.
 */
import { jsonrepair } from 'jsonrepair';
import type { Verdict, VerdictScale } from './judge.types.js';

export type VerdictError = { code: 'unparseable_verdict' | 'off_scale'; message: string };
export type VerdictParse = { verdict: Verdict } | { error: VerdictError };

const SCORE_KEYS = ['score', 'rating', 'grade'];
const LABEL_KEYS = ['label', 'verdict', 'answer'];
const REASON_KEYS = ['reason', 'reasoning', 'explanation', 'rationale'];
/** Brace positions tried when hunting for an object in prose; answers are short, this bounds the quadratic scan. */
const MAX_OBJECT_STARTS = 64;
const QUOTE_CHARS = 200;

const NUMBER = String.raw`-?\d+(?:\.\d+)?`;
const OUT_OF = String.raw`(?:\s*(?:\/|out of)\s*\d+(?:\.\d+)?)?`;
/** "4", "4/5", "4 out of 5" as a whole value. */
const SCORE_VALUE = new RegExp(String.raw`^\s*(${NUMBER})${OUT_OF}\s*\.?\s*$`, 'i');
/** A line that is only "Score: 4", "**Rating:** 4/5", "Final grade = 3 out of 5". */
const SCORE_LINE = new RegExp(
  String.raw`^[\s*_#>-]*(?:(?:final|overall)\s+)?(?:score|rating|grade)[\s*_]*[:=][\s*_]*(${NUMBER})${OUT_OF}[\s*_.]*$`,
  'i',
);

export function parseVerdict(text: string, scale: VerdictScale): VerdictParse {
  const object = findVerdictObject(text, scale.type === 'numeric' ? SCORE_KEYS : LABEL_KEYS);
  if (object)
    return scale.type === 'numeric'
      ? numericVerdict(object.score, object.reason, scale)
      : labelVerdict(object.label, object.reason, scale);
  return scale.type === 'numeric' ? numericFromProse(text, scale) : labelFromProse(text, scale);
}

interface VerdictObject {
  score: unknown;
  label: unknown;
  reason: string | null;
}

/** The first JSON object in the answer that carries one of `keys`: whole text, fenced block, balanced braces, then a truncated tail. */
function findVerdictObject(text: string, keys: string[]): VerdictObject | null {
  for (const candidate of jsonCandidates(text)) {
    const value = candidate.strict ? parseStrict(candidate.text) : parseLenient(candidate.text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const byKey = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value)) if (!byKey.has(k.toLowerCase())) byKey.set(k.toLowerCase(), v);
    if (!keys.some((k) => byKey.has(k))) continue;
    const reason = REASON_KEYS.map((k) => byKey.get(k)).find((v) => typeof v === 'string');
    return {
      score: firstPresent(byKey, SCORE_KEYS),
      label: firstPresent(byKey, LABEL_KEYS),
      reason: typeof reason === 'string' ? reason : null,
    };
  }
  return null;
}

function* jsonCandidates(text: string): Generator<{ text: string; strict: boolean }> {
  yield { text: text.trim(), strict: true };
  for (const fence of text.matchAll(/```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```/g)) yield { text: fence[1], strict: false };
  let starts = 0;
  for (
    let start = text.indexOf('{');
    start !== -1 && starts < MAX_OBJECT_STARTS;
    start = text.indexOf('{', start + 1), starts++
  ) {
    const end = balancedEnd(text, start);
    if (end !== -1) yield { text: text.slice(start, end + 1), strict: false };
  }
  // An answer cut off by max_tokens leaves an unclosed object that jsonrepair can still close.
  const first = text.indexOf('{');
  if (first !== -1) yield { text: text.slice(first), strict: false };
}

/** Index of the `}` closing the object opened at `start`, skipping braces inside double-quoted strings; -1 if unclosed. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

function parseStrict(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseLenient(text: string): unknown {
  const strict = parseStrict(text);
  if (strict !== undefined) return strict;
  try {
    return JSON.parse(jsonrepair(text));
  } catch {
    return undefined;
  }
}

function firstPresent(byKey: Map<string, unknown>, keys: string[]): unknown {
  for (const k of keys) if (byKey.has(k)) return byKey.get(k);
  return undefined;
}

function numericVerdict(raw: unknown, reason: string | null, scale: { min: number; max: number }): VerdictParse {
  const score =
    typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(SCORE_VALUE.exec(raw)?.[1] ?? NaN) : NaN;
  if (!Number.isFinite(score)) return unparseable(`the judge's score ${shorten(JSON.stringify(raw))} is not a number`);
  if (score < scale.min || score > scale.max)
    return {
      error: {
        code: 'off_scale',
        message: `the judge's score ${score} is outside the scale ${scale.min} to ${scale.max}`,
      },
    };
  // A degenerate scale has a single value, which is its top.
  const normalized = scale.max === scale.min ? 1 : (score - scale.min) / (scale.max - scale.min);
  return { verdict: { score, label: null, reason, normalized } };
}

function labelVerdict(
  raw: unknown,
  reason: string | null,
  scale: { labels: string[]; scores?: Record<string, number> },
): VerdictParse {
  if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean')
    return unparseable(`the judge's label ${shorten(JSON.stringify(raw))} is not text`);
  const wanted = normalizeLabel(String(raw));
  const label = scale.labels.find((l) => normalizeLabel(l) === wanted);
  if (label === undefined)
    return {
      error: {
        code: 'off_scale',
        message: `the judge's label ${quote(String(raw))} is not one of ${scale.labels.map((l) => JSON.stringify(l)).join(', ')}`,
      },
    };
  const scores = labelScores(scale);
  const score = scores.get(label) ?? 0;
  return { verdict: { score, label, reason, normalized: normalizeLabelScore(score, [...scores.values()]) } };
}

function numericFromProse(text: string, scale: { min: number; max: number }): VerdictParse {
  const whole = SCORE_VALUE.exec(text);
  if (whole) return numericVerdict(Number(whole[1]), null, scale);
  const values = new Set(
    text
      .split(/\r?\n/)
      .flatMap((line) => SCORE_LINE.exec(line)?.[1] ?? [])
      .map(Number),
  );
  if (values.size === 1) return numericVerdict([...values][0], text.trim(), scale);
  if (values.size > 1)
    return unparseable(`the judge's answer states several different scores: ${[...values].join(', ')}`);
  return unparseable(`no score found in the judge's answer: ${quote(text)}`);
}

function labelFromProse(text: string, scale: { labels: string[]; scores?: Record<string, number> }): VerdictParse {
  const found = scale.labels.filter((label) =>
    new RegExp(String.raw`(?<![\p{L}\p{N}_])${escapeRegExp(label.trim())}(?![\p{L}\p{N}_])`, 'iu').test(text),
  );
  if (found.length === 1) return labelVerdict(found[0], text.trim(), scale);
  if (found.length > 1)
    return unparseable(`the judge's answer names several labels: ${found.map((l) => JSON.stringify(l)).join(', ')}`);
  return unparseable(`no label found in the judge's answer: ${quote(text)}`);
}

/** Each label's score: the configured one, else evenly spaced from 1 (first label) to 0 (last). */
function labelScores(scale: { labels: string[]; scores?: Record<string, number> }): Map<string, number> {
  const n = scale.labels.length;
  return new Map(scale.labels.map((label, i) => [label, scale.scores?.[label] ?? (n === 1 ? 1 : 1 - i / (n - 1))]));
}

function normalizeLabelScore(score: number, all: number[]): number {
  if (all.every((s) => s >= 0 && s <= 1)) return score;
  const min = Math.min(...all);
  const max = Math.max(...all);
  return max === min ? 1 : (score - min) / (max - min);
}

/** Ignores case, surrounding quotes or markdown emphasis, and a trailing full stop. */
function normalizeLabel(label: string): string {
  return label
    .trim()
    .replace(/^["'`*_\s]+|["'`*_.!\s]+$/g, '')
    .toLowerCase();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Quotes the judge's text in messages, cut to a readable length. */
function quote(text: string): string {
  return JSON.stringify(shorten(text.trim()));
}

function shorten(text: string): string {
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text;
}

function unparseable(message: string): VerdictParse {
  return { error: { code: 'unparseable_verdict', message } };
}
