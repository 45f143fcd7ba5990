/**
 * Convention detection and mapping of `SourceSpan`s onto `CanonicalSpan`s. Pure: no I/O.
 *
 * Provenance keys. `used`, `unmapped`, `dropped` and the detection report name where a value came
 * from. Span attributes appear under their own key. Other sources use these keys, which are also
 * the keys under which unmapped ones are kept in `CanonicalSpan.attributes`:
 *   - `resource.<key>`      a resource attribute (e.g. `resource.service.name`)
 *   - `otel.scope.name` / `otel.scope.version`   the instrumentation scope
 *   - `span.events`         span events no field consumed (kept as an array)
 *   - `@span.name`, `@span.status`, `@event.<event name>`   structural parts of the span (never kept)
 * In the detection report, numeric path segments are folded to `*`
 * (`llm.input_messages.*.message.role`) so indexed attributes read as one family.
 */
import { SemanticConventions as OI } from '@arizeai/openinference-semantic-conventions';
import type { AttributeValue, CanonicalSpan, Convention, Drop, DropReason, SourceSpan } from './span.types.js';
import { CONVENTIONS } from './span.types.js';
import { TRACELOOP } from './conventions/attributes.js';
import { mapGenAi } from './conventions/genai.js';
import { mapLangfuse } from './conventions/langfuse.js';
import { Ctx, foldKey, jsonBytes, jsonFits, round3, toStr } from './conventions/mapping-context.js';
import { mapOpenInference } from './conventions/openinference.js';
import { mapOpenLlmetry } from './conventions/openllmetry.js';

/** Canonical fields a convention fills from attributes, events or resource (ids and times are structural). */
export const MAPPED_FIELDS = [
  'kind',
  'name',
  'input',
  'output',
  'model',
  'tokens_input',
  'tokens_output',
  'tokens_total',
  'cost',
  'status',
  'error',
  'session_id',
  'user_id',
  'tool_calls',
  'retrieved_documents',
  'service_name',
] as const;
export type MappedField = (typeof MAPPED_FIELDS)[number];

/** Every CanonicalSpan field the detection report covers, in CanonicalSpan order (convention and attributes are reported separately). */
export const REPORTED_FIELDS = [
  'trace_id',
  'span_id',
  'parent_span_id',
  'session_id',
  'user_id',
  'name',
  'kind',
  'start_time',
  'end_time',
  'duration_ms',
  'status',
  'error',
  'input',
  'output',
  'model',
  'tokens_input',
  'tokens_output',
  'tokens_total',
  'cost',
  'tool_calls',
  'retrieved_documents',
  'service_name',
] as const satisfies ReadonlyArray<keyof CanonicalSpan>;
export type ReportedField = (typeof REPORTED_FIELDS)[number];

export const DEFAULT_MAX_ATTRIBUTE_BYTES = 32768;
/** A span above this is almost always an inlined binary payload; one such row stalls a landing batch. */
export const DEFAULT_MAX_RECORD_BYTES = 4 * 1024 * 1024;
/** Most specific first: detection picks the first that matches. */
export const CONVENTION_PRECEDENCE: readonly Convention[] = [
  'openinference',
  'langfuse',
  'openllmetry',
  'genai',
  'plain_otel',
];

export interface NormaliseOptions {
  keepUnmapped: boolean;
  /** Kept unmapped attribute values larger than this (bytes of their JSON) are dropped; default 32768 */
  maxAttributeBytes?: number;
  /** Whole records larger than this (bytes of the source span's JSON) are dropped; default 4 MiB */
  maxRecordBytes?: number;
}

export type NormaliseResult =
  | {
      ok: true;
      span: CanonicalSpan;
      /** canonical field -> provenance keys it took */
      used: Record<string, string[]>;
      /** provenance keys no field took (each is either kept in span.attributes or listed in dropped) */
      unmapped: string[];
      /** unmapped keys not kept: keepUnmapped false, or value larger than maxAttributeBytes */
      dropped: string[];
    }
  | { ok: false; drop: Drop };

export interface FieldMapping {
  field: string;
  /** Provenance keys (indices folded to `*`) that supplied this field in at least one sampled span */
  source_attributes: string[];
  /** Sampled, normalisable spans where the field got a value */
  spans_mapped: number;
  /** spans_mapped / sampled */
  coverage: number;
}

export interface UnmappedAttribute {
  /** Provenance key with numeric segments folded to `*` */
  key: string;
  /** Sampled spans carrying it unmapped */
  spans: number;
  /** 'dropped' when it was dropped in at least one of those spans */
  fate: 'kept' | 'dropped';
  spans_dropped: number;
  /** Up to 3 concrete keys behind a folded key */
  examples: string[];
}

export interface DroppedRecords {
  reason: DropReason;
  count: number;
  example_source_ref: string;
}

export interface ConventionCandidate {
  convention: Convention;
  /** spans / sampled */
  confidence: number;
  /** Sampled spans whose own markers say this convention */
  spans: number;
}

export interface TraceConventionDetection {
  convention: Convention;
  /**
   * Share of the sampled spans that carry any LLM convention's markers whose convention is the chosen
   * one (1 when the choice is plain_otel and nothing carries markers; 0 for no spans). Spans without
   * markers (HTTP, DB, ...) do not dilute it: they conflict with nothing. How well fields map is
   * reported per field in `field_mappings`, not folded into this number, so each stays readable.
   */
  confidence: number;
  candidates: ConventionCandidate[];
  span_count: number;
  sampled: number;
  field_mappings: FieldMapping[];
  unmapped_attributes: UnmappedAttribute[];
  /** Over ALL spans (validation is cheap), not only the sample */
  dropped_records: DroppedRecords[];
  warnings: string[];
}

export interface DetectOptions {
  /** Spans examined for detection and mapping stats (evenly spaced over the input); default 1000 */
  sample?: number;
  /** Mapping the landing will use; default 'auto' (per-span detection) */
  convention?: Convention | 'auto';
  keepUnmapped?: boolean;
  maxAttributeBytes?: number;
  maxRecordBytes?: number;
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

const OI_MARKER_PREFIXES = [
  'llm.token_count.',
  'llm.input_messages.',
  'llm.output_messages.',
  'retrieval.documents.',
  'llm.cost.',
];
const OI_MARKER_KEYS: string[] = [
  OI.OPENINFERENCE_SPAN_KIND,
  OI.LLM_MODEL_NAME,
  OI.LLM_INPUT_MESSAGES,
  OI.LLM_OUTPUT_MESSAGES,
];

function matches(span: SourceSpan, convention: Convention): boolean {
  const keys = Object.keys(span.attributes);
  const scope = span.scope?.name ?? '';
  switch (convention) {
    case 'openinference':
      return (
        keys.some((k) => OI_MARKER_KEYS.includes(k) || OI_MARKER_PREFIXES.some((p) => k.startsWith(p))) ||
        scope.startsWith('@arizeai/openinference') ||
        scope.startsWith('openinference.')
      );
    case 'langfuse':
      return keys.some((k) => k.startsWith('langfuse.')) || scope.startsWith('langfuse');
    case 'openllmetry':
      return keys.some(
        (k) => k.startsWith('traceloop.') || k === TRACELOOP.LLM_REQUEST_TYPE || k === TRACELOOP.LLM_USAGE_TOTAL_TOKENS,
      );
    case 'genai':
      // MCP's conventions are published with GenAI's; an MCP span is read by this mapping.
      return (
        keys.some((k) => k.startsWith('gen_ai.') || k.startsWith('mcp.')) ||
        (span.events ?? []).some((e) => e.name.startsWith('gen_ai.'))
      );
    case 'plain_otel':
      return true;
  }
}

/** The most specific convention whose marker attributes the span carries (openinference > langfuse > openllmetry > genai > plain_otel). */
export function detectSpanConvention(span: SourceSpan): Convention {
  if (typeof span !== 'object' || span === null || typeof span.attributes !== 'object' || span.attributes === null)
    return 'plain_otel';
  for (const c of CONVENTION_PRECEDENCE) if (matches(span, c)) return c;
  return 'plain_otel';
}

// ---------------------------------------------------------------------------------------------
// Validation (drops)
// ---------------------------------------------------------------------------------------------

/**
 * Id rule: a string of hex digits only, 16 characters or longer, is taken to be an OTLP id and must
 * be exactly 32 (trace) / 16 (span) hex digits and not all zeros; it is lower-cased. Any other
 * non-empty string (UUIDs with dashes, `run-42`, short numbers from exports) is a source's own id
 * and is accepted verbatim. Short hex strings are accepted because numeric ids from exports are hex too.
 */
export function checkId(
  raw: unknown,
  width: 32 | 16,
): { ok: true; id: string } | { ok: false; missing: boolean; detail: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, missing: true, detail: 'empty' };
  const id = raw.trim();
  if (/^[0-9a-fA-F]+$/.test(id) && id.length >= 16) {
    if (id.length !== width)
      return { ok: false, missing: false, detail: `hex id of ${id.length} characters, expected ${width}` };
    if (/^0+$/.test(id)) return { ok: false, missing: false, detail: 'all-zero id' };
    return { ok: true, id: id.toLowerCase() };
  }
  return { ok: true, id };
}

function normaliseParent(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const p = raw.trim();
  // OTLP writes an absent parent as empty bytes or zeros.
  if (p === '' || /^0+$/.test(p)) return null;
  return /^[0-9a-fA-F]+$/.test(p) && p.length >= 16 ? p.toLowerCase() : p;
}

function parseNanos(raw: string | null | undefined): bigint | null {
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim())) return null;
  const n = BigInt(raw.trim());
  // 0 is how OTLP encodes "not set".
  return n === 0n ? null : n;
}

const nanosToIso = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();

interface Validated {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  start: bigint;
  end: bigint;
}

function validate(span: SourceSpan, maxRecordBytes: number): { ok: true; v: Validated } | { ok: false; drop: Drop } {
  const fail = (reason: DropReason, detail: string): { ok: false; drop: Drop } => ({
    ok: false,
    drop: { reason, detail, source_ref: String(span?.source_ref ?? ''), payload: span },
  });
  if (typeof span !== 'object' || span === null || typeof span.attributes !== 'object' || span.attributes === null)
    return fail('malformed_record', 'not a span object with attributes');
  if (!jsonFits(span, maxRecordBytes))
    return fail('record_too_large', `record is ${jsonBytes(span)} bytes, limit ${maxRecordBytes}`);
  const t = checkId(span.trace_id, 32);
  if (!t.ok)
    return t.missing
      ? fail('missing_trace_id', 'trace_id is missing or empty')
      : fail('invalid_id', `trace_id ${JSON.stringify(span.trace_id)}: ${t.detail}`);
  const s = checkId(span.span_id, 16);
  if (!s.ok)
    return s.missing
      ? fail('missing_span_id', 'span_id is missing or empty')
      : fail('invalid_id', `span_id ${JSON.stringify(span.span_id)}: ${s.detail}`);
  const start = parseNanos(span.start_time_unix_nano);
  const end = parseNanos(span.end_time_unix_nano);
  if (start === null || end === null) {
    const which = [start === null ? 'start' : '', end === null ? 'end' : ''].filter(Boolean).join(' and ');
    return fail('missing_timestamps', `${which} time missing, zero or not a decimal nanosecond string`);
  }
  if (end < start)
    return fail('end_before_start', `end ${span.end_time_unix_nano} is before start ${span.start_time_unix_nano}`);
  return {
    ok: true,
    v: { trace_id: t.id, span_id: s.id, parent_span_id: normaliseParent(span.parent_span_id), start, end },
  };
}

// ---------------------------------------------------------------------------------------------
// normaliseSpan
// ---------------------------------------------------------------------------------------------

const MAPPERS: Record<Convention, (ctx: Ctx) => void> = {
  openinference: (ctx) => {
    mapOpenInference(ctx);
    mapGenAi(ctx);
  },
  genai: mapGenAi,
  openllmetry: mapOpenLlmetry,
  langfuse: mapLangfuse,
  // No LLM convention: OTel span kinds (server/client/internal) say nothing about an LLM role.
  plain_otel: () => undefined,
};

/** Message of the first `exception` event. The event itself stays in `span.events`: its stacktrace has no field. */
function exceptionMessage(span: SourceSpan): string | null {
  const ev = span.events.find((e) => e.name === 'exception')?.attributes;
  if (!ev) return null;
  const type = toStr(ev['exception.type']);
  const msg = toStr(ev['exception.message']);
  return msg !== null ? (type !== null ? `${type}: ${msg}` : msg) : (type ?? 'exception');
}

/** The span's status: error on an OTLP error status, an exception event or a convention marker; marks its source. */
function markStatus(ctx: Ctx, span: SourceSpan, exc: string | null, convErrKeys: string[]): CanonicalSpan['status'] {
  const otlpErr = span.status_code === 'error';
  const isError = otlpErr || exc !== null || ctx.out.error !== null;
  if (otlpErr || !isError) ctx.mark('status', '@span.status');
  else if (exc !== null) ctx.mark('status', '@event.exception');
  else if (!ctx.used.has('status')) ctx.mark('status', ...convErrKeys);
  return isError ? 'error' : span.status_code === 'ok' ? 'ok' : 'unset';
}

/** The span's error message: OTLP status message, else the exception event's, else the convention's; marks its source. */
function markError(ctx: Ctx, span: SourceSpan, exc: string | null, convErrKeys: string[]): string | null {
  // Only the source whose message is taken counts as used; the others stay unmapped and are kept.
  if (span.status_code === 'error' && span.status_message) {
    ctx.mark('error', '@span.status');
    return span.status_message;
  }
  if (exc !== null) {
    ctx.mark('error', '@event.exception');
    return exc;
  }
  if (ctx.out.error !== null) {
    ctx.mark('error', ...convErrKeys);
    return ctx.out.error;
  }
  return null;
}

/** A span's values no field took, gathered once per span. */
interface Leftovers {
  /** The span's own attributes: a non-attribute source never overwrites one */
  spanAttributes: Record<string, AttributeValue>;
  /** Provenance keys some field took */
  usedKeys: Set<string>;
  /** Provenance key and value of each leftover, span attributes first */
  candidates: Array<[string, AttributeValue]>;
  /** Non-attribute keys equal to a span attribute's key (reported as dropped) */
  clashes: string[];
}

/** Adds a non-attribute leftover unless a field took it; one whose key a span attribute has is a clash instead. */
function addNonAttribute(left: Leftovers, k: string, val: AttributeValue): void {
  if (left.usedKeys.has(k)) return;
  if (k in left.spanAttributes) left.clashes.push(k);
  else left.candidates.push([k, val]);
}

/** Everything no field took, under its provenance key: span attributes, resource, scope, then unconsumed events. */
function leftovers(ctx: Ctx, span: SourceSpan): Leftovers {
  const left: Leftovers = { spanAttributes: span.attributes, usedKeys: new Set<string>(), candidates: [], clashes: [] };
  for (const keys of ctx.used.values()) for (const k of keys) left.usedKeys.add(k);
  for (const [k, val] of Object.entries(span.attributes))
    if (!left.usedKeys.has(k) && val !== undefined) left.candidates.push([k, val]);
  // Non-attribute sources never overwrite a span attribute with the same key; such a clash is reported as dropped.
  for (const [k, val] of Object.entries(ctx.span.resource))
    if (val !== undefined) addNonAttribute(left, `resource.${k}`, val);
  if (span.scope?.name) addNonAttribute(left, 'otel.scope.name', span.scope.name);
  if (span.scope?.version) addNonAttribute(left, 'otel.scope.version', span.scope.version);
  const rest = ctx.span.events.filter((_, i) => !ctx.consumedEvents.has(i));
  if (rest.length > 0)
    addNonAttribute(
      left,
      'span.events',
      rest.map((e) => ({ name: e.name, time_unix_nano: e.time_unix_nano, attributes: e.attributes })),
    );
  return left;
}

/** Marks the structural fields, so `used` accounts for every field of the row, and lists `used` per field. */
function usedByField(ctx: Ctx, v: Validated): Record<string, string[]> {
  ctx.mark('trace_id', '@span.trace_id');
  ctx.mark('span_id', '@span.span_id');
  if (v.parent_span_id !== null) ctx.mark('parent_span_id', '@span.parent_span_id');
  ctx.mark('start_time', '@span.start_time_unix_nano');
  ctx.mark('end_time', '@span.end_time_unix_nano');
  ctx.mark('duration_ms', '@span.start_time_unix_nano', '@span.end_time_unix_nano');
  const used: Record<string, string[]> = {};
  for (const [f, keys] of ctx.used) if (keys.size > 0) used[f] = [...keys];
  return used;
}

/**
 * Maps one source span. Never throws: records that cannot land come back as `{ ok: false, drop }`.
 * `convention: 'auto'` detects per span.
 */
export function normaliseSpan(
  span: SourceSpan,
  convention: Convention | 'auto',
  options: NormaliseOptions,
): NormaliseResult {
  const maxAttr = options.maxAttributeBytes ?? DEFAULT_MAX_ATTRIBUTE_BYTES;
  const maxRecord = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const checked = validate(span, maxRecord);
  if (!checked.ok) return checked;
  const v = checked.v;
  try {
    const conv: Convention =
      convention === 'auto' || !CONVENTIONS.includes(convention) ? detectSpanConvention(span) : convention;
    const ctx = new Ctx({
      ...span,
      events: Array.isArray(span.events) ? span.events : [],
      resource: span.resource ?? {},
    });
    MAPPERS[conv](ctx);
    const o = ctx.out;

    // Status: OTLP error status, an exception event, or a convention marker (o.error, keys under used.error).
    const convErrKeys = [...(ctx.used.get('error') ?? [])];
    ctx.used.delete('error');
    const exc = exceptionMessage(ctx.span);
    const status = markStatus(ctx, span, exc, convErrKeys);
    const error = markError(ctx, span, exc, convErrKeys);

    const name = o.name ?? (typeof span.name === 'string' ? span.name : String(span.name ?? ''));
    if (o.name === null) ctx.mark('name', '@span.name');
    // Total defaults to input + output when the source gave both but no total.
    let tokensTotal = o.tokens_total;
    if (tokensTotal === null && o.tokens_input !== null && o.tokens_output !== null) {
      tokensTotal = o.tokens_input + o.tokens_output;
      ctx.mark('tokens_total', ...(ctx.used.get('tokens_input') ?? []), ...(ctx.used.get('tokens_output') ?? []));
    }
    const serviceName = toStr(ctx.span.resource['service.name']);
    if (serviceName !== null) ctx.mark('service_name', 'resource.service.name');

    // Everything no field took, under its provenance key.
    const left = leftovers(ctx, span);
    const attributes: Record<string, AttributeValue> = {};
    const unmapped: string[] = [...left.clashes];
    const dropped: string[] = [...left.clashes];
    for (const [k, val] of left.candidates) {
      unmapped.push(k);
      if (options.keepUnmapped && jsonFits(val, maxAttr)) attributes[k] = val;
      else dropped.push(k);
    }

    const durationMicros = (v.end - v.start + 500n) / 1000n;
    const canonical: CanonicalSpan = {
      trace_id: v.trace_id,
      span_id: v.span_id,
      parent_span_id: v.parent_span_id,
      session_id: o.session_id,
      user_id: o.user_id,
      name,
      kind: o.kind ?? 'unknown',
      start_time: nanosToIso(v.start),
      end_time: nanosToIso(v.end),
      duration_ms: Number(durationMicros) / 1000,
      status,
      error,
      input: o.input ?? null,
      output: o.output ?? null,
      model: o.model,
      tokens_input: o.tokens_input,
      tokens_output: o.tokens_output,
      tokens_total: tokensTotal,
      cost: o.cost,
      tool_calls: o.tool_calls,
      retrieved_documents: o.retrieved_documents,
      service_name: serviceName,
      convention: conv,
      attributes,
    };
    const used = usedByField(ctx, v);
    return { ok: true, span: canonical, used, unmapped, dropped };
  } catch (e) {
    // Mapping code only reads plain values; anything thrown means a record shape no reader should emit.
    return {
      ok: false,
      drop: {
        reason: 'malformed_record',
        detail: `mapping failed: ${e instanceof Error ? e.message : String(e)}`,
        source_ref: String(span.source_ref ?? ''),
        payload: span,
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// detectConventions
// ---------------------------------------------------------------------------------------------

/** Fields that count as "mapped" for a span: non-null, non-empty; `kind` other than unknown; status other than unset. */
function fieldHasValue(span: CanonicalSpan, field: ReportedField): boolean {
  const v = span[field];
  if (field === 'kind') return v !== 'unknown';
  if (field === 'status') return v !== 'unset';
  if (Array.isArray(v)) return v.length > 0;
  return v !== null && v !== undefined && v !== '';
}

function evenSample<T>(items: T[], cap: number): T[] {
  if (items.length <= cap) return items;
  // Evenly spaced picks, so a file whose conventions change part-way through is still represented.
  const out: T[] = [];
  for (let i = 0; i < cap; i++) out.push(items[Math.floor((i * items.length) / cap)]);
  return out;
}

/** Records that cannot land, per reason: how many, and the first one's source_ref. */
function countDrops(spans: SourceSpan[], maxRecordBytes: number): Map<DropReason, { count: number; example: string }> {
  const drops = new Map<DropReason, { count: number; example: string }>();
  for (const s of spans) {
    const r = validate(s, maxRecordBytes);
    if (r.ok) continue;
    const d = drops.get(r.drop.reason) ?? { count: 0, example: r.drop.source_ref };
    d.count++;
    drops.set(r.drop.reason, d);
  }
  return drops;
}

/** How the sampled spans' own markers vote for a convention, and the convention chosen. */
interface ConventionVote {
  /** Sampled spans per convention their markers say */
  perConv: Map<Convention, number>;
  /** LLM conventions (not plain_otel) some sampled span carries, in precedence order */
  llmConvs: Convention[];
  /** Sampled spans carrying any LLM convention's markers */
  marked: number;
  best: Convention;
  confidence: number;
  candidates: ConventionCandidate[];
}

/** Counts the sample's spans per convention and picks the convention with the most. */
function voteConvention(sample: SourceSpan[]): ConventionVote {
  const perConv = new Map<Convention, number>();
  for (const s of sample) {
    const c = typeof s === 'object' && s !== null && s.attributes ? detectSpanConvention(s) : 'plain_otel';
    perConv.set(c, (perConv.get(c) ?? 0) + 1);
  }
  const llmConvs = CONVENTION_PRECEDENCE.filter((c) => c !== 'plain_otel' && (perConv.get(c) ?? 0) > 0);
  const marked = llmConvs.reduce((n, c) => n + (perConv.get(c) ?? 0), 0);
  // Most spans wins; ties go to the more specific convention (precedence order).
  const best: Convention =
    llmConvs.length === 0
      ? 'plain_otel'
      : llmConvs.reduce((b, c) => ((perConv.get(c) ?? 0) > (perConv.get(b) ?? 0) ? c : b));
  const confidence = sample.length === 0 ? 0 : best === 'plain_otel' ? 1 : round3((perConv.get(best) ?? 0) / marked);
  const candidates: ConventionCandidate[] = CONVENTION_PRECEDENCE.filter((c) => (perConv.get(c) ?? 0) > 0)
    .map((c) => ({ convention: c, spans: perConv.get(c)!, confidence: round3(perConv.get(c)! / sample.length) }))
    .sort(
      (a, b) =>
        b.spans - a.spans || CONVENTION_PRECEDENCE.indexOf(a.convention) - CONVENTION_PRECEDENCE.indexOf(b.convention),
    );
  return { perConv, llmConvs, marked, best, confidence, candidates };
}

/** What normalising the sample showed, added to span by span. */
interface SampleStats {
  /** Reported field -> folded provenance keys that supplied it */
  fieldSources: Map<string, Set<string>>;
  /** Reported field -> sampled spans where it got a value */
  fieldCounts: Map<string, number>;
  /** Folded unmapped key -> spans carrying it, spans dropping it, up to 3 concrete keys */
  unmappedStats: Map<string, { spans: number; dropped: number; examples: Set<string> }>;
  /** Trace id -> whether any of its sampled spans has a session id */
  traceSession: Map<string, boolean>;
  llmSpans: number;
  llmNoTokens: number;
  llmNoModel: number;
  /** Sampled spans that normalised */
  normalised: number;
}

/** Empty statistics, one per detection. */
function newSampleStats(): SampleStats {
  return {
    fieldSources: new Map<string, Set<string>>(REPORTED_FIELDS.map((f) => [f, new Set<string>()])),
    fieldCounts: new Map<string, number>(REPORTED_FIELDS.map((f) => [f, 0])),
    unmappedStats: new Map(),
    traceSession: new Map(),
    llmSpans: 0,
    llmNoTokens: 0,
    llmNoModel: 0,
    normalised: 0,
  };
}

/** Adds one sampled span's normalisation to the statistics (a dropped span adds nothing). */
function tallySpan(stats: SampleStats, r: NormaliseResult): void {
  if (!r.ok) return;
  stats.normalised++;
  const cs = r.span;
  for (const f of REPORTED_FIELDS) {
    if (!fieldHasValue(cs, f)) continue;
    stats.fieldCounts.set(f, stats.fieldCounts.get(f)! + 1);
    for (const k of r.used[f] ?? []) stats.fieldSources.get(f)!.add(foldKey(k));
  }
  // Per folded key in this span: was any of its concrete keys dropped?
  const droppedSet = new Set(r.dropped);
  const inSpan = new Map<string, boolean>();
  for (const k of r.unmapped) {
    const fk = foldKey(k);
    inSpan.set(fk, (inSpan.get(fk) ?? false) || droppedSet.has(k));
    const st = stats.unmappedStats.get(fk) ?? { spans: 0, dropped: 0, examples: new Set<string>() };
    if (st.examples.size < 3) st.examples.add(k);
    stats.unmappedStats.set(fk, st);
  }
  for (const [fk, wasDropped] of inSpan) {
    const st = stats.unmappedStats.get(fk)!;
    st.spans++;
    if (wasDropped) st.dropped++;
  }
  stats.traceSession.set(cs.trace_id, (stats.traceSession.get(cs.trace_id) ?? false) || cs.session_id !== null);
  if (cs.kind === 'llm') {
    stats.llmSpans++;
    if (cs.tokens_input === null && cs.tokens_output === null && cs.tokens_total === null) stats.llmNoTokens++;
    if (cs.model === null) stats.llmNoModel++;
  }
}

/** Unmapped keys, most spans first (then by key). */
function unmappedAttributes(stats: SampleStats): UnmappedAttribute[] {
  return [...stats.unmappedStats.entries()]
    .map(([key, st]) => ({
      key,
      spans: st.spans,
      fate: st.dropped > 0 ? ('dropped' as const) : ('kept' as const),
      spans_dropped: st.dropped,
      examples: [...st.examples],
    }))
    .sort((a, b) => b.spans - a.spans || a.key.localeCompare(b.key));
}

/** The parts of the report the warnings read. */
interface WarningInputs {
  spanCount: number;
  sampled: number;
  cap: number;
  mode: Convention | 'auto';
  vote: ConventionVote;
  stats: SampleStats;
  unmapped: UnmappedAttribute[];
  drops: DroppedRecords[];
}

/** What the report's reader should know: sampling, mixed or forced conventions, missing sessions, tokens, models, drops. */
function detectionWarnings({
  spanCount,
  sampled: n,
  cap,
  mode,
  vote,
  stats,
  unmapped,
  drops,
}: WarningInputs): string[] {
  const warnings: string[] = [];
  const { perConv, llmConvs, best, marked } = vote;
  if (n < spanCount) warnings.push(`examined ${n} of ${spanCount} spans (sample cap ${cap})`);
  if (llmConvs.length > 1)
    warnings.push(`mixed conventions: ${llmConvs.map((c) => `${c} (${perConv.get(c)} spans)`).join(', ')}`);
  if (mode !== 'auto' && mode !== best && marked > 0)
    warnings.push(
      `convention forced to ${mode} but ${perConv.get(mode) ?? 0} of ${n} sampled spans carry its markers (detected ${best})`,
    );
  const traces = stats.traceSession.size;
  const withoutSession = [...stats.traceSession.values()].filter((x) => !x).length;
  if (traces > 0 && withoutSession === traces)
    warnings.push(`no session id on any sampled span: traces cannot be grouped into sessions`);
  else if (withoutSession > 0)
    warnings.push(`${withoutSession} of ${traces} sampled traces have no span with a session id`);
  const { llmSpans, llmNoTokens, llmNoModel } = stats;
  if (llmNoTokens > 0)
    warnings.push(
      `${llmNoTokens} of ${llmSpans} llm spans have no token counts: cost can only be reported, not estimated, for them`,
    );
  if (llmNoModel > 0) warnings.push(`${llmNoModel} of ${llmSpans} llm spans have no model name`);
  const droppedKeys = unmapped.filter((u) => u.fate === 'dropped');
  if (droppedKeys.length > 0)
    warnings.push(
      `${droppedKeys.length} unmapped attribute keys are dropped in some spans: ${droppedKeys
        .slice(0, 10)
        .map((u) => u.key)
        .join(', ')}${droppedKeys.length > 10 ? ', ...' : ''}`,
    );
  const totalDrops = drops.reduce((x, d) => x + d.count, 0);
  if (totalDrops > 0)
    warnings.push(
      `${totalDrops} of ${spanCount} records cannot be landed (${drops.map((d) => `${d.reason}: ${d.count}`).join(', ')})`,
    );
  if (n > 0 && stats.normalised === 0) warnings.push('no sampled span could be normalised');
  return warnings;
}

export function detectConventions(spans: SourceSpan[], options: DetectOptions = {}): TraceConventionDetection {
  const cap = Math.max(1, Math.floor(options.sample ?? 1000));
  const mode = options.convention ?? 'auto';
  const normOpts: NormaliseOptions = {
    keepUnmapped: options.keepUnmapped ?? true,
    maxAttributeBytes: options.maxAttributeBytes,
    maxRecordBytes: options.maxRecordBytes,
  };

  // Drops over every span: validation is cheap next to mapping.
  const drops = countDrops(spans, normOpts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES);
  const sample = evenSample(spans, cap);
  const vote = voteConvention(sample);
  const stats = newSampleStats();
  for (const s of sample) tallySpan(stats, normaliseSpan(s, mode, normOpts));

  const n = sample.length;
  const field_mappings: FieldMapping[] = REPORTED_FIELDS.map((f) => ({
    field: f,
    source_attributes: [...stats.fieldSources.get(f)!].sort(),
    spans_mapped: stats.fieldCounts.get(f)!,
    coverage: n === 0 ? 0 : round3(stats.fieldCounts.get(f)! / n),
  }));
  const unmapped_attributes = unmappedAttributes(stats);
  const dropped_records: DroppedRecords[] = [...drops.entries()]
    .map(([reason, d]) => ({ reason, count: d.count, example_source_ref: d.example }))
    .sort((a, b) => b.count - a.count);
  const warnings = detectionWarnings({
    spanCount: spans.length,
    sampled: n,
    cap,
    mode,
    vote,
    stats,
    unmapped: unmapped_attributes,
    drops: dropped_records,
  });

  return {
    convention: vote.best,
    confidence: vote.confidence,
    candidates: vote.candidates,
    span_count: spans.length,
    sampled: n,
    field_mappings,
    unmapped_attributes,
    dropped_records,
    warnings,
  };
}
