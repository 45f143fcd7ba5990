/**
 * What an online evaluator scores, made from landed spans: the targets a batch of spans names
 * (spans, traces or sessions), whether a trace is complete, and the fields a metric reads, picked
 * from the target's spans by a mapping. Pure: spans in, values out.
 */
import { spanTokens } from '#libs/traces/enrichment.js';
import type { CanonicalSpan } from '#libs/traces/span.types.js';
import { valueAt } from '../row-context.js';
import { isSampled } from './sampling.js';

export const TARGET_LEVELS = ['span', 'trace', 'session'] as const;
export type TargetLevel = (typeof TARGET_LEVELS)[number];

/** Which spans of a target a mapped field is read from. */
export const SPAN_PICKS = ['first_root', 'last_root', 'first', 'last', 'all'] as const;
export type SpanPick = (typeof SPAN_PICKS)[number];

/** A metric input read from the target's spans: the spans picked (of a kind or name), then a path into each. */
export interface SpanFieldRef {
  pick: SpanPick;
  /** Only spans of this kind (llm, retriever, tool…). */
  kind?: string | null;
  /** Only spans of this name. */
  name?: string | null;
  /** A dotted path into the span: `output`, `attributes.answer`, `retrieved_documents`. */
  field: string;
}

export const MAPPED_FIELDS = ['input', 'output', 'context', 'expected_output', 'tool_calls'] as const;
export type MappedField = (typeof MAPPED_FIELDS)[number];
export type TargetMapping = Partial<Record<MappedField, SpanFieldRef | null>>;

/** What a field reads when the mapping names nothing for it. */
export const DEFAULT_MAPPING: Record<MappedField, SpanFieldRef | null> = {
  input: { pick: 'first_root', field: 'input' },
  output: { pick: 'last_root', field: 'output' },
  context: { pick: 'all', kind: 'retriever', field: 'retrieved_documents' },
  expected_output: null,
  tool_calls: { pick: 'all', field: 'tool_calls' },
};

export type Span = Record<string, unknown>;

/** One target a batch of spans names, and what the batch says of it. */
export interface SeenTarget {
  key: string;
  level: TargetLevel;
  trace_id: string | null;
  span_id: string | null;
  session_id: string | null;
  /** A span of the batch matched the evaluator's filter. */
  matched: boolean;
  /** The target's end was seen: its root span (a trace), the span itself (a span). Sessions never are. */
  complete: boolean;
  /** Sampled at the evaluator's rate, by the trace id (the session id for sessions). */
  sampled: boolean;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export function isRoot(span: Span): boolean {
  return str(span.parent_span_id) === null;
}

/** The key a target is kept under: the trace id, `trace/span` for a span, the session id. */
export function targetKey(level: TargetLevel, span: Span): string | null {
  const trace = str(span.trace_id);
  if (level === 'trace') return trace;
  if (level === 'span') {
    const id = str(span.span_id);
    return trace && id ? `${trace}/${id}` : null;
  }
  return str(span.session_id);
}

/**
 * The targets a batch of landed spans names, each once, in the order first seen: matched when a
 * span of the batch matched the filter (a span target: when it did), complete when the batch holds
 * its end, sampled by the evaluator's rate. Spans without the target's key (a span outside any
 * session, for a session evaluator) name none.
 */
export function targetsOf(
  spans: Array<{ span: Span; matched: boolean }>,
  level: TargetLevel,
  rate: number,
): SeenTarget[] {
  const out = new Map<string, SeenTarget>();
  for (const { span, matched } of spans) {
    const key = targetKey(level, span);
    if (key === null) continue;
    let target = out.get(key);
    if (!target) {
      const sampleBy = level === 'session' ? key : str(span.trace_id)!;
      target = {
        key,
        level,
        trace_id: level === 'session' ? null : str(span.trace_id),
        span_id: level === 'span' ? str(span.span_id) : null,
        session_id: level === 'session' ? key : null,
        matched: false,
        complete: level === 'span',
        sampled: isSampled(sampleBy, rate),
      };
      out.set(key, target);
    }
    if (matched) target.matched = true;
    if (level === 'trace' && isRoot(span) && str(span.end_time) !== null) target.complete = true;
  }
  return [...out.values()];
}

function startOf(span: Span): number {
  const t = Date.parse(String(span.start_time ?? ''));
  return Number.isFinite(t) ? t : Number.POSITIVE_INFINITY;
}

function endOf(span: Span): number {
  const t = Date.parse(String(span.end_time ?? ''));
  return Number.isFinite(t) ? t : Number.NEGATIVE_INFINITY;
}

/** The spans a mapped field reads, in time order. */
export function pickSpans(spans: Span[], ref: SpanFieldRef): Span[] {
  const ordered = [...spans].sort((a, b) => startOf(a) - startOf(b));
  let pool = ordered.filter((s) => (!ref.kind || s.kind === ref.kind) && (!ref.name || s.name === ref.name));
  if (ref.pick === 'first_root' || ref.pick === 'last_root') {
    const roots = pool.filter(isRoot);
    // A target without a root of that kind (a span evaluator's one span, a trace whose root did not land) reads its spans.
    pool = roots.length ? roots : pool;
  }
  if (!pool.length) return [];
  if (ref.pick === 'first_root' || ref.pick === 'first') return [pool[0]];
  if (ref.pick === 'last_root' || ref.pick === 'last') return [pool[pool.length - 1]];
  return pool;
}

/** A mapped field's value: one span's value, or (pick `all`) every picked span's values, arrays flattened; null when none has one. */
export function mappedValue(spans: Span[], ref: SpanFieldRef | null): unknown {
  if (!ref) return null;
  const picked = pickSpans(spans, ref);
  const values = picked.map((s) => valueAt(s, ref.field)).filter((v) => v !== undefined && v !== null && v !== '');
  if (ref.pick !== 'all') return values[0] ?? null;
  const flat = values.flatMap((v) => (Array.isArray(v) ? v : [v]));
  return flat.length ? flat : null;
}

/** What a metric reads of a target, and what its score row keeps beside. */
export interface TargetContext {
  fields: Record<MappedField, unknown>;
  /** From the first span's start to the last span's end. */
  latency_ms: number | null;
  tokens: { prompt_tokens: number; completion_tokens: number } | null;
  /** The target's time: its first span's start. */
  observed_at: Date;
  service_name: string | null;
  model: string | null;
}

/** The context of a target from its spans (those of the trace, the session, or the one span). */
export function targetContext(spans: Span[], mapping: TargetMapping): TargetContext {
  const fields = {} as Record<MappedField, unknown>;
  for (const f of MAPPED_FIELDS)
    fields[f] = mappedValue(spans, mapping[f] === undefined ? DEFAULT_MAPPING[f] : mapping[f]!);
  const starts = spans.map(startOf).filter(Number.isFinite);
  const ends = spans.map(endOf).filter(Number.isFinite);
  const first = starts.length ? Math.min(...starts) : Date.now();
  const last = ends.length ? Math.max(...ends) : null;
  // Tokens counted as enrichment counts them, over the span fields it reads (absent ones null).
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  const counted = spanTokens(
    spans.map((s) => ({
      ...s,
      span_id: String(s.span_id ?? ''),
      parent_span_id: str(s.parent_span_id),
      start_time: String(s.start_time ?? ''),
      tokens_input: num(s.tokens_input),
      tokens_output: num(s.tokens_output),
      tokens_total: num(s.tokens_total),
    })) as unknown as CanonicalSpan[],
  );
  const tokens =
    counted.input === null && counted.output === null
      ? null
      : { prompt_tokens: counted.input ?? 0, completion_tokens: counted.output ?? 0 };
  const roots = spans.filter(isRoot);
  const llm = [...spans].sort((a, b) => startOf(a) - startOf(b)).find((s) => str(s.model) !== null);
  return {
    fields,
    latency_ms: last !== null && starts.length ? Math.max(0, last - first) : null,
    tokens,
    observed_at: new Date(first),
    service_name: str((roots[0] ?? spans[0])?.service_name),
    model: llm ? str(llm.model) : null,
  };
}

/** A mapped value as text for metrics and rubrics (documents and objects as JSON, lists of text joined by blank lines). */
export function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n\n');
  // Retrieved documents: their text.
  if (
    Array.isArray(value) &&
    value.length &&
    value.every((v) => typeof (v as { content?: unknown })?.content === 'string')
  )
    return value.map((v) => (v as { content: string }).content).join('\n\n');
  return JSON.stringify(value);
}
