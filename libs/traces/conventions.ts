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
import { OpenInferenceSpanKind, SemanticConventions as OI } from '@arizeai/openinference-semantic-conventions';
import type { AttributeValue, CanonicalSpan, Convention, Drop, DropReason, RetrievedDocument, SourceSpan, SpanKind, ToolCall } from './span.types.js';
import { CONVENTIONS } from './span.types.js';

// ---------------------------------------------------------------------------------------------
// Attribute names not taken from a package (gen_ai.* copied from @opentelemetry/semantic-conventions
// incubating, which is a devDependency only; Traceloop and Langfuse publish no JS constants we have).
// ---------------------------------------------------------------------------------------------

export const GEN_AI = {
  OPERATION_NAME: 'gen_ai.operation.name',
  SYSTEM: 'gen_ai.system',
  PROVIDER_NAME: 'gen_ai.provider.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  RESPONSE_MODEL: 'gen_ai.response.model',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  USAGE_PROMPT_TOKENS: 'gen_ai.usage.prompt_tokens',
  USAGE_COMPLETION_TOKENS: 'gen_ai.usage.completion_tokens',
  USAGE_TOTAL_TOKENS: 'gen_ai.usage.total_tokens',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  PROMPT: 'gen_ai.prompt',
  COMPLETION: 'gen_ai.completion',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_CALL_ARGUMENTS: 'gen_ai.tool.call.arguments',
  TOOL_CALL_RESULT: 'gen_ai.tool.call.result',
  AGENT_NAME: 'gen_ai.agent.name',
  ERROR_TYPE: 'error.type',
  USER_ID: 'user.id',
  ENDUSER_ID: 'enduser.id',
} as const;

export const TRACELOOP = {
  SPAN_KIND: 'traceloop.span.kind',
  ENTITY_NAME: 'traceloop.entity.name',
  ENTITY_INPUT: 'traceloop.entity.input',
  ENTITY_OUTPUT: 'traceloop.entity.output',
  ASSOCIATION_PREFIX: 'traceloop.association.properties.',
  LLM_REQUEST_TYPE: 'llm.request.type',
  LLM_USAGE_TOTAL_TOKENS: 'llm.usage.total_tokens',
  LLM_REQUEST_MODEL: 'llm.request.model',
  LLM_RESPONSE_MODEL: 'llm.response.model',
} as const;

export const LANGFUSE = {
  OBSERVATION_TYPE: 'langfuse.observation.type',
  OBSERVATION_INPUT: 'langfuse.observation.input',
  OBSERVATION_OUTPUT: 'langfuse.observation.output',
  OBSERVATION_MODEL: 'langfuse.observation.model.name',
  OBSERVATION_USAGE: 'langfuse.observation.usage_details',
  OBSERVATION_COST: 'langfuse.observation.cost_details',
  OBSERVATION_LEVEL: 'langfuse.observation.level',
  OBSERVATION_STATUS_MESSAGE: 'langfuse.observation.status_message',
  SESSION_ID: 'langfuse.session.id',
  USER_ID: 'langfuse.user.id',
  TRACE_NAME: 'langfuse.trace.name',
  TRACE_INPUT: 'langfuse.trace.input',
  TRACE_OUTPUT: 'langfuse.trace.output',
} as const;

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
export const CONVENTION_PRECEDENCE: readonly Convention[] = ['openinference', 'langfuse', 'openllmetry', 'genai', 'plain_otel'];

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
// Small value helpers
// ---------------------------------------------------------------------------------------------

const isPresent = (v: AttributeValue | undefined): v is AttributeValue => v !== undefined && v !== null && v !== '';

function toNumber(v: AttributeValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function toStr(v: AttributeValue | undefined): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

/** Parses strings that look like JSON; anything else (or unparsable) is returned as is. */
function parseJsonish(v: AttributeValue): AttributeValue {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('[') || t.startsWith('"'))) return v;
  try {
    return JSON.parse(t) as AttributeValue;
  } catch {
    return v;
  }
}

function isObject(v: AttributeValue | undefined): v is { [key: string]: AttributeValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonBytes(v: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
  } catch {
    // Cycles or BigInt cannot come from a JSON/OTLP reader; treat as unmeasurable and oversize.
    return Number.POSITIVE_INFINITY;
  }
}

/** Folds numeric path segments so indexed attribute families group together. */
export function foldKey(key: string): string {
  return key.replace(/(^|\.)\d+(?=\.|$)/g, '$1*');
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

const OI_MARKER_PREFIXES = ['llm.token_count.', 'llm.input_messages.', 'llm.output_messages.', 'retrieval.documents.', 'llm.cost.'];
const OI_MARKER_KEYS: string[] = [OI.OPENINFERENCE_SPAN_KIND, OI.LLM_MODEL_NAME, OI.LLM_INPUT_MESSAGES, OI.LLM_OUTPUT_MESSAGES];

function matches(span: SourceSpan, convention: Convention): boolean {
  const keys = Object.keys(span.attributes);
  const scope = span.scope?.name ?? '';
  switch (convention) {
    case 'openinference':
      return keys.some((k) => OI_MARKER_KEYS.includes(k) || OI_MARKER_PREFIXES.some((p) => k.startsWith(p))) || scope.startsWith('@arizeai/openinference') || scope.startsWith('openinference.');
    case 'langfuse':
      return keys.some((k) => k.startsWith('langfuse.')) || scope.startsWith('langfuse');
    case 'openllmetry':
      return keys.some((k) => k.startsWith('traceloop.') || k === TRACELOOP.LLM_REQUEST_TYPE || k === TRACELOOP.LLM_USAGE_TOTAL_TOKENS);
    case 'genai':
      return keys.some((k) => k.startsWith('gen_ai.')) || (span.events ?? []).some((e) => e.name.startsWith('gen_ai.'));
    case 'plain_otel':
      return true;
  }
}

/** The most specific convention whose marker attributes the span carries (openinference > langfuse > openllmetry > genai > plain_otel). */
export function detectSpanConvention(span: SourceSpan): Convention {
  if (typeof span !== 'object' || span === null || typeof span.attributes !== 'object' || span.attributes === null) return 'plain_otel';
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
function checkId(raw: unknown, width: 32 | 16): { ok: true; id: string } | { ok: false; missing: boolean; detail: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, missing: true, detail: 'empty' };
  const id = raw.trim();
  if (/^[0-9a-fA-F]+$/.test(id) && id.length >= 16) {
    if (id.length !== width) return { ok: false, missing: false, detail: `hex id of ${id.length} characters, expected ${width}` };
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
  if (typeof span !== 'object' || span === null || typeof span.attributes !== 'object' || span.attributes === null) return fail('malformed_record', 'not a span object with attributes');
  const size = jsonBytes(span);
  if (size > maxRecordBytes) return fail('record_too_large', `record is ${size} bytes, limit ${maxRecordBytes}`);
  const t = checkId(span.trace_id, 32);
  if (!t.ok) return t.missing ? fail('missing_trace_id', 'trace_id is missing or empty') : fail('invalid_id', `trace_id ${JSON.stringify(span.trace_id)}: ${t.detail}`);
  const s = checkId(span.span_id, 16);
  if (!s.ok) return s.missing ? fail('missing_span_id', 'span_id is missing or empty') : fail('invalid_id', `span_id ${JSON.stringify(span.span_id)}: ${s.detail}`);
  const start = parseNanos(span.start_time_unix_nano);
  const end = parseNanos(span.end_time_unix_nano);
  if (start === null || end === null) {
    const which = [start === null ? 'start' : '', end === null ? 'end' : ''].filter(Boolean).join(' and ');
    return fail('missing_timestamps', `${which} time missing, zero or not a decimal nanosecond string`);
  }
  if (end < start) return fail('end_before_start', `end ${span.end_time_unix_nano} is before start ${span.start_time_unix_nano}`);
  return { ok: true, v: { trace_id: t.id, span_id: s.id, parent_span_id: normaliseParent(span.parent_span_id), start, end } };
}

// ---------------------------------------------------------------------------------------------
// Mapping context
// ---------------------------------------------------------------------------------------------

type Mapped = {
  kind: SpanKind | null;
  name: string | null;
  input: AttributeValue | undefined;
  output: AttributeValue | undefined;
  model: string | null;
  tokens_input: number | null;
  tokens_output: number | null;
  tokens_total: number | null;
  cost: number | null;
  error: string | null;
  session_id: string | null;
  user_id: string | null;
  tool_calls: ToolCall[];
  retrieved_documents: RetrievedDocument[];
};

class Ctx {
  readonly out: Mapped = {
    kind: null,
    name: null,
    input: undefined,
    output: undefined,
    model: null,
    tokens_input: null,
    tokens_output: null,
    tokens_total: null,
    cost: null,
    error: null,
    session_id: null,
    user_id: null,
    tool_calls: [],
    retrieved_documents: [],
  };
  readonly used = new Map<string, Set<string>>();
  readonly consumedEvents = new Set<number>();

  constructor(readonly span: SourceSpan) {}

  get attrs(): Record<string, AttributeValue> {
    return this.span.attributes;
  }

  has(key: string): boolean {
    return isPresent(this.attrs[key]);
  }

  /** Records that `field` took `keys`. */
  mark(field: string, ...keys: string[]): void {
    let set = this.used.get(field);
    if (!set) this.used.set(field, (set = new Set()));
    for (const k of keys) set.add(k);
  }

  empty(field: keyof Mapped): boolean {
    const v = this.out[field];
    return v === null || v === undefined || (Array.isArray(v) && v.length === 0);
  }

  /** First present key of `keys`, unmarked (caller marks what it actually uses). */
  first(keys: string[]): { key: string; value: AttributeValue } | null {
    for (const key of keys) if (this.has(key)) return { key, value: this.attrs[key] };
    return null;
  }

  /**
   * Kind from a marker attribute through `table`. A value the table does not know is left unmapped
   * (so kept verbatim) and the kind open for fallbacks, rather than consumed into 'unknown'.
   */
  setKind(key: string, table: Record<string, SpanKind>, caseOf: (s: string) => string): boolean {
    if (!this.empty('kind')) return false;
    const raw = toStr(this.attrs[key]);
    const kind = raw === null ? undefined : table[caseOf(raw)];
    if (kind === undefined) return false;
    this.out.kind = kind;
    this.mark('kind', key);
    return true;
  }

  setString(field: 'name' | 'model' | 'session_id' | 'user_id' | 'error', keys: string[]): void {
    if (!this.empty(field)) return;
    for (const key of keys) {
      const s = toStr(this.attrs[key]);
      if (s !== null) {
        this.out[field] = s;
        this.mark(field, key);
        return;
      }
    }
  }

  setNumber(field: 'tokens_input' | 'tokens_output' | 'tokens_total' | 'cost', keys: string[]): void {
    if (!this.empty(field)) return;
    for (const key of keys) {
      const n = toNumber(this.attrs[key]);
      if (n !== null) {
        this.out[field] = n;
        this.mark(field, key);
        return;
      }
    }
  }

  setValue(field: 'input' | 'output', key: string, parse: boolean, extraKeys: string[] = []): void {
    if (!this.empty(field) || !this.has(key)) return;
    const v = this.attrs[key];
    this.out[field] = parse ? parseJsonish(v) : v;
    this.mark(field, key, ...extraKeys);
  }

  /**
   * Indexed families: `prefix.N.rest` flattened keys, or one `prefix` attribute holding an array of
   * objects (a reader that kept the list). Returns rows by index with `rest -> {key, value}`.
   */
  indexed(prefix: string): Map<number, Map<string, { key: string; value: AttributeValue }>> {
    const rows = new Map<number, Map<string, { key: string; value: AttributeValue }>>();
    const put = (i: number, rest: string, key: string, value: AttributeValue): void => {
      let row = rows.get(i);
      if (!row) rows.set(i, (row = new Map()));
      row.set(rest, { key, value });
    };
    const p = `${prefix}.`;
    for (const [key, value] of Object.entries(this.attrs)) {
      if (!key.startsWith(p) || !isPresent(value)) continue;
      const m = /^(\d+)\.(.+)$/.exec(key.slice(p.length));
      if (m) put(Number(m[1]), m[2], key, value);
    }
    const whole = this.attrs[prefix];
    if (rows.size === 0 && Array.isArray(whole)) {
      whole.forEach((item, i) => {
        if (isObject(item)) for (const [rest, value] of flattenObject(item)) put(i, rest, prefix, value);
      });
    }
    return new Map([...rows.entries()].sort((a, b) => a[0] - b[0]));
  }
}

function flattenObject(obj: { [key: string]: AttributeValue }, prefix = ''): Array<[string, AttributeValue]> {
  const out: Array<[string, AttributeValue]> = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) out.push(...flattenObject(v, key));
    else if (Array.isArray(v) && v.every(isObject)) v.forEach((item, i) => out.push(...flattenObject(item as { [key: string]: AttributeValue }, `${key}.${i}`)));
    else if (isPresent(v)) out.push([key, v]);
  }
  return out;
}

type Row = Map<string, { key: string; value: AttributeValue }>;

/** Sub-rows of a row: `sub.M.rest` entries grouped by M. */
function subRows(row: Row, sub: string): Map<number, Row> {
  const out = new Map<number, Row>();
  const p = `${sub}.`;
  for (const [rest, cell] of row) {
    if (!rest.startsWith(p)) continue;
    const m = /^(\d+)\.(.+)$/.exec(rest.slice(p.length));
    if (!m) continue;
    let r = out.get(Number(m[1]));
    if (!r) out.set(Number(m[1]), (r = new Map()));
    r.set(m[2], cell);
  }
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}

// ---------------------------------------------------------------------------------------------
// OpenInference
// ---------------------------------------------------------------------------------------------

const OI_KIND: Record<string, SpanKind> = {
  [OpenInferenceSpanKind.LLM]: 'llm',
  [OpenInferenceSpanKind.CHAIN]: 'chain',
  [OpenInferenceSpanKind.TOOL]: 'tool',
  [OpenInferenceSpanKind.AGENT]: 'agent',
  [OpenInferenceSpanKind.RETRIEVER]: 'retriever',
  [OpenInferenceSpanKind.EMBEDDING]: 'embedding',
  [OpenInferenceSpanKind.RERANKER]: 'reranker',
  [OpenInferenceSpanKind.GUARDRAIL]: 'guardrail',
  [OpenInferenceSpanKind.EVALUATOR]: 'evaluator',
  // A prompt-template render step sits in a pipeline like any chain step.
  [OpenInferenceSpanKind.PROMPT]: 'chain',
};

/** OpenInference message rows -> [{role, content, ...}]; marks the keys it translated. */
function oiMessages(ctx: Ctx, field: string, prefix: string): Array<Record<string, AttributeValue>> {
  const messages: Array<Record<string, AttributeValue>> = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const msg: Record<string, AttributeValue> = {};
    const take = (rest: string, as: string): void => {
      const cell = row.get(rest);
      if (cell) {
        msg[as] = cell.value;
        ctx.mark(field, cell.key);
      }
    };
    take(OI.MESSAGE_ROLE, 'role');
    take(OI.MESSAGE_CONTENT, 'content');
    take(OI.MESSAGE_NAME, 'name');
    take(OI.MESSAGE_TOOL_CALL_ID, 'tool_call_id');
    const parts: AttributeValue[] = [];
    for (const [, part] of subRows(row, OI.MESSAGE_CONTENTS)) {
      const type = part.get(OI.MESSAGE_CONTENT_TYPE);
      const text = part.get(OI.MESSAGE_CONTENT_TEXT);
      if (!text) continue; // image/audio parts stay unmapped (kept) rather than half-translated
      parts.push({ type: type ? type.value : 'text', text: text.value });
      ctx.mark(field, text.key, ...(type ? [type.key] : []));
    }
    if (parts.length > 0 && msg.content === undefined) msg.content = parts;
    const calls = oiToolCalls(row, (k) => ctx.mark(field, k));
    if (calls.length > 0) msg.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    if (Object.keys(msg).length > 0) messages.push(msg);
  }
  return messages;
}

function oiToolCalls(row: Row, mark: (key: string) => void): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const [, tc] of subRows(row, OI.MESSAGE_TOOL_CALLS)) {
    const name = tc.get(OI.TOOL_CALL_FUNCTION_NAME);
    if (!name) continue;
    const args = tc.get(OI.TOOL_CALL_FUNCTION_ARGUMENTS_JSON);
    const id = tc.get(OI.TOOL_CALL_ID);
    calls.push({ name: String(name.value), arguments: args ? parseJsonish(args.value) : null, id: id ? String(id.value) : null });
    mark(name.key);
    if (args) mark(args.key);
    if (id) mark(id.key);
  }
  return calls;
}

function oiDocuments(ctx: Ctx, prefix: string): RetrievedDocument[] {
  const docs: RetrievedDocument[] = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const id = row.get(OI.DOCUMENT_ID);
    const content = row.get(OI.DOCUMENT_CONTENT);
    const score = row.get(OI.DOCUMENT_SCORE);
    const metaCells = [...row.entries()].filter(([rest]) => rest === OI.DOCUMENT_METADATA || rest.startsWith(`${OI.DOCUMENT_METADATA}.`));
    if (!id && !content && !score && metaCells.length === 0) continue;
    let metadata: AttributeValue = null;
    if (metaCells.length === 1 && metaCells[0][0] === OI.DOCUMENT_METADATA) metadata = parseJsonish(metaCells[0][1].value);
    else if (metaCells.length > 0) metadata = Object.fromEntries(metaCells.map(([rest, c]) => [rest.slice(OI.DOCUMENT_METADATA.length + 1), c.value]));
    docs.push({ id: id ? toStr(id.value) : null, content: content ? toStr(content.value) : null, score: score ? toNumber(score.value) : null, metadata });
    ctx.mark('retrieved_documents', ...[id, content, score].filter((c) => c !== undefined).map((c) => c!.key), ...metaCells.map(([, c]) => c.key));
  }
  return docs;
}

function mapOpenInference(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(OI.OPENINFERENCE_SPAN_KIND, OI_KIND, (x) => x.toUpperCase());
  const isJson = (mimeKey: string): boolean => String(a[mimeKey] ?? '').toLowerCase() === 'application/json';
  ctx.setValue('input', OI.INPUT_VALUE, isJson(OI.INPUT_MIME_TYPE), ctx.has(OI.INPUT_MIME_TYPE) ? [OI.INPUT_MIME_TYPE] : []);
  ctx.setValue('output', OI.OUTPUT_VALUE, isJson(OI.OUTPUT_MIME_TYPE), ctx.has(OI.OUTPUT_MIME_TYPE) ? [OI.OUTPUT_MIME_TYPE] : []);
  if (ctx.empty('input')) {
    const msgs = oiMessages(ctx, 'input', OI.LLM_INPUT_MESSAGES);
    if (msgs.length > 0) ctx.out.input = msgs;
  }
  if (ctx.empty('output')) {
    const msgs = oiMessages(ctx, 'output', OI.LLM_OUTPUT_MESSAGES);
    if (msgs.length > 0) ctx.out.output = msgs;
  }
  ctx.setString('model', [OI.LLM_MODEL_NAME, OI.LLM_RESPONSE_MODEL_NAME, OI.LLM_REQUEST_MODEL_NAME, OI.EMBEDDING_MODEL_NAME, OI.RERANKER_MODEL_NAME]);
  ctx.setNumber('tokens_input', [OI.LLM_TOKEN_COUNT_PROMPT]);
  ctx.setNumber('tokens_output', [OI.LLM_TOKEN_COUNT_COMPLETION]);
  ctx.setNumber('tokens_total', [OI.LLM_TOKEN_COUNT_TOTAL]);
  ctx.setNumber('cost', [OI.LLM_COST_TOTAL]);
  ctx.setString('session_id', [OI.SESSION_ID]);
  ctx.setString('user_id', [OI.USER_ID]);

  // Tool calls the model asked for (output messages), then the call a TOOL span executes.
  for (const [, row] of ctx.indexed(OI.LLM_OUTPUT_MESSAGES)) ctx.out.tool_calls.push(...oiToolCalls(row, (k) => ctx.mark('tool_calls', k)));
  if (ctx.has(OI.TOOL_NAME) && ctx.out.tool_calls.length === 0) {
    // tool.parameters is the tool's parameter schema; the actual arguments of a TOOL span are its input.
    const args = ctx.has(OI.INPUT_VALUE) ? { key: OI.INPUT_VALUE, value: ctx.out.input ?? null } : ctx.first([OI.TOOL_PARAMETERS]);
    const id = ctx.first([OI.TOOL_ID]);
    ctx.out.tool_calls.push({ name: String(a[OI.TOOL_NAME]), arguments: args ? (args.key === OI.TOOL_PARAMETERS ? parseJsonish(args.value) : args.value) : null, id: id ? toStr(id.value) : null });
    ctx.mark('tool_calls', OI.TOOL_NAME, ...(args ? [args.key] : []), ...(id ? [id.key] : []));
  }
  ctx.out.retrieved_documents.push(...oiDocuments(ctx, OI.RETRIEVAL_DOCUMENTS));
  if (ctx.out.kind === 'reranker') ctx.out.retrieved_documents.push(...oiDocuments(ctx, OI.RERANKER_OUTPUT_DOCUMENTS));
}

// ---------------------------------------------------------------------------------------------
// OpenTelemetry GenAI (also the fallback for OpenLLMetry, Langfuse and OpenInference fields left empty)
// ---------------------------------------------------------------------------------------------

const GENAI_KIND: Record<string, SpanKind> = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  completion: 'llm',
  embeddings: 'embedding',
  embedding: 'embedding',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
};

const GENAI_EVENT_ROLE: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

/** OpenLLMetry / old GenAI indexed prompt or completion rows -> messages (+ tool calls). */
function indexedMessages(ctx: Ctx, field: string, prefix: string, calls?: ToolCall[]): Array<Record<string, AttributeValue>> {
  const msgs: Array<Record<string, AttributeValue>> = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const msg: Record<string, AttributeValue> = {};
    for (const rest of ['role', 'content', 'finish_reason', 'tool_call_id']) {
      const cell = row.get(rest);
      if (cell) {
        msg[rest] = rest === 'content' ? parseJsonish(cell.value) : cell.value;
        ctx.mark(field, cell.key);
      }
    }
    const rowCalls: ToolCall[] = [];
    for (const [, tc] of subRows(row, 'tool_calls')) {
      const name = tc.get('name');
      if (!name) continue;
      const args = tc.get('arguments');
      const id = tc.get('id');
      rowCalls.push({ name: String(name.value), arguments: args ? parseJsonish(args.value) : null, id: id ? toStr(id.value) : null });
      const keys = [name.key, ...(args ? [args.key] : []), ...(id ? [id.key] : [])];
      ctx.mark(field, ...keys);
      if (calls) ctx.mark('tool_calls', ...keys);
    }
    if (rowCalls.length > 0) {
      msg.tool_calls = rowCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
      calls?.push(...rowCalls);
    }
    if (Object.keys(msg).length > 0) msgs.push(msg);
  }
  return msgs;
}

/** Tool calls inside parsed gen_ai.output.messages: [{role, parts: [{type: 'tool_call', id, name, arguments}]}]. */
function genaiPartsToolCalls(messages: AttributeValue): ToolCall[] {
  const calls: ToolCall[] = [];
  if (!Array.isArray(messages)) return calls;
  for (const m of messages) {
    if (!isObject(m) || !Array.isArray(m.parts)) continue;
    for (const p of m.parts) {
      if (isObject(p) && p.type === 'tool_call' && typeof p.name === 'string') calls.push({ name: p.name, arguments: p.arguments !== undefined ? parseJsonish(p.arguments) : null, id: toStr(p.id) });
    }
  }
  return calls;
}

function eventContent(attrs: Record<string, AttributeValue>): AttributeValue | undefined {
  for (const k of ['content', 'message.content', 'gen_ai.prompt', 'gen_ai.completion', 'body']) if (isPresent(attrs[k])) return parseJsonish(attrs[k]);
  if (isObject(attrs.message) && isPresent(attrs.message.content)) return attrs.message.content;
  return undefined;
}

function mapGenAi(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(GEN_AI.OPERATION_NAME, GENAI_KIND, (x) => x.toLowerCase());
  // The response model is what actually served the call; the request model is the fallback.
  ctx.setString('model', [GEN_AI.RESPONSE_MODEL, GEN_AI.REQUEST_MODEL]);
  ctx.setNumber('tokens_input', [GEN_AI.USAGE_INPUT_TOKENS, GEN_AI.USAGE_PROMPT_TOKENS]);
  ctx.setNumber('tokens_output', [GEN_AI.USAGE_OUTPUT_TOKENS, GEN_AI.USAGE_COMPLETION_TOKENS]);
  ctx.setNumber('tokens_total', [GEN_AI.USAGE_TOTAL_TOKENS]);
  ctx.setString('session_id', [GEN_AI.CONVERSATION_ID]);
  ctx.setString('user_id', [GEN_AI.USER_ID, GEN_AI.ENDUSER_ID]);

  ctx.setValue('input', GEN_AI.INPUT_MESSAGES, true);
  ctx.setValue('output', GEN_AI.OUTPUT_MESSAGES, true);
  if (ctx.out.tool_calls.length === 0 && ctx.used.get('output')?.has(GEN_AI.OUTPUT_MESSAGES)) {
    const calls = genaiPartsToolCalls(ctx.out.output ?? null);
    if (calls.length > 0) {
      ctx.out.tool_calls.push(...calls);
      ctx.mark('tool_calls', GEN_AI.OUTPUT_MESSAGES);
    }
  }
  if (ctx.empty('input')) {
    const msgs = indexedMessages(ctx, 'input', GEN_AI.PROMPT);
    if (msgs.length > 0) ctx.out.input = msgs;
  }
  if (ctx.empty('output')) {
    const calls: ToolCall[] = [];
    const msgs = indexedMessages(ctx, 'output', GEN_AI.COMPLETION, ctx.out.tool_calls.length === 0 ? calls : undefined);
    if (msgs.length > 0) ctx.out.output = msgs;
    ctx.out.tool_calls.push(...calls);
  }
  // Span events (older GenAI semconv) as the last input/output source.
  const evIn: AttributeValue[] = [];
  const evOut: AttributeValue[] = [];
  const evInNames = new Set<string>();
  const evOutNames = new Set<string>();
  ctx.span.events.forEach((e, i) => {
    const content = eventContent(e.attributes);
    const role = GENAI_EVENT_ROLE[e.name];
    if (ctx.empty('input') && (role || e.name === 'gen_ai.content.prompt')) {
      evIn.push(role ? { role: toStr(e.attributes.role) ?? role, content: content ?? null } : (content ?? null));
      evInNames.add(e.name);
      ctx.consumedEvents.add(i);
    } else if (ctx.empty('output') && (e.name === 'gen_ai.choice' || e.name === 'gen_ai.content.completion')) {
      const msg = isObject(e.attributes.message) ? e.attributes.message : null;
      evOut.push(e.name === 'gen_ai.choice' ? { role: toStr(msg?.role) ?? toStr(e.attributes['message.role']) ?? 'assistant', content: content ?? null } : (content ?? null));
      evOutNames.add(e.name);
      ctx.consumedEvents.add(i);
    }
  });
  if (evIn.length > 0) {
    ctx.out.input = evIn;
    ctx.mark('input', ...[...evInNames].map((n) => `@event.${n}`));
  }
  if (evOut.length > 0) {
    ctx.out.output = evOut;
    ctx.mark('output', ...[...evOutNames].map((n) => `@event.${n}`));
  }

  if (ctx.out.tool_calls.length === 0 && ctx.has(GEN_AI.TOOL_NAME)) {
    const args = ctx.first([GEN_AI.TOOL_CALL_ARGUMENTS]);
    const id = ctx.first([GEN_AI.TOOL_CALL_ID]);
    ctx.out.tool_calls.push({ name: String(a[GEN_AI.TOOL_NAME]), arguments: args ? parseJsonish(args.value) : null, id: id ? toStr(id.value) : null });
    ctx.mark('tool_calls', GEN_AI.TOOL_NAME, ...(args ? [args.key] : []), ...(id ? [id.key] : []));
    if (ctx.empty('input') && args) {
      ctx.out.input = parseJsonish(args.value);
      ctx.mark('input', args.key);
    }
    ctx.setValue('output', GEN_AI.TOOL_CALL_RESULT, true);
  }
  const modelKey = [...(ctx.used.get('model') ?? [])].find((k) => k === GEN_AI.REQUEST_MODEL || k === GEN_AI.RESPONSE_MODEL);
  if (ctx.empty('kind') && modelKey !== undefined) {
    // A span naming a model with no (known) operation is a model call (pre-1.27 instrumentations).
    // The evidence is the key the model field took, so no other key gets consumed by this inference.
    ctx.out.kind = 'llm';
    ctx.mark('kind', modelKey);
  }
  if (ctx.empty('error') && ctx.has(GEN_AI.ERROR_TYPE)) ctx.setString('error', [GEN_AI.ERROR_TYPE]);
}

// ---------------------------------------------------------------------------------------------
// OpenLLMetry (Traceloop)
// ---------------------------------------------------------------------------------------------

const TRACELOOP_KIND: Record<string, SpanKind> = { workflow: 'chain', task: 'chain', agent: 'agent', tool: 'tool' };
const TRACELOOP_REQUEST_KIND: Record<string, SpanKind> = { chat: 'llm', completion: 'llm', embedding: 'embedding', rerank: 'reranker' };

function mapOpenLlmetry(ctx: Ctx): void {
  if (!ctx.setKind(TRACELOOP.SPAN_KIND, TRACELOOP_KIND, (x) => x.toLowerCase())) ctx.setKind(TRACELOOP.LLM_REQUEST_TYPE, TRACELOOP_REQUEST_KIND, (x) => x.toLowerCase());
  // Span names are `<entity>.<kind>`; the entity name is the component's own name.
  ctx.setString('name', [TRACELOOP.ENTITY_NAME]);
  ctx.setValue('input', TRACELOOP.ENTITY_INPUT, true);
  ctx.setValue('output', TRACELOOP.ENTITY_OUTPUT, true);
  ctx.setNumber('tokens_total', [TRACELOOP.LLM_USAGE_TOTAL_TOKENS]);
  ctx.setString('session_id', [`${TRACELOOP.ASSOCIATION_PREFIX}session_id`]);
  ctx.setString('user_id', [`${TRACELOOP.ASSOCIATION_PREFIX}user_id`]);
  if (ctx.out.kind === 'tool' && ctx.out.name !== null && !ctx.has(GEN_AI.TOOL_NAME)) {
    // A @tool-decorated function: the entity is the tool, its input the arguments.
    ctx.out.tool_calls.push({ name: ctx.out.name, arguments: ctx.out.input ?? null, id: null });
    ctx.mark('tool_calls', TRACELOOP.ENTITY_NAME, ...(ctx.out.input !== undefined ? [TRACELOOP.ENTITY_INPUT] : []));
  }
  mapGenAi(ctx);
  ctx.setString('model', [TRACELOOP.LLM_RESPONSE_MODEL, TRACELOOP.LLM_REQUEST_MODEL]);
}

// ---------------------------------------------------------------------------------------------
// Langfuse
// ---------------------------------------------------------------------------------------------

const LANGFUSE_KIND: Record<string, SpanKind> = {
  generation: 'llm',
  agent: 'agent',
  tool: 'tool',
  chain: 'chain',
  retriever: 'retriever',
  evaluator: 'evaluator',
  embedding: 'embedding',
  guardrail: 'guardrail',
  // A generic Langfuse span is a step of a pipeline, the role OpenInference calls CHAIN.
  span: 'chain',
};

function jsonObject(v: AttributeValue | undefined): { [key: string]: AttributeValue } | null {
  if (v === undefined || v === null) return null;
  const p = parseJsonish(v);
  return isObject(p) ? p : null;
}

function mapLangfuse(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(LANGFUSE.OBSERVATION_TYPE, LANGFUSE_KIND, (x) => x.toLowerCase());
  ctx.setValue('input', LANGFUSE.OBSERVATION_INPUT, true);
  ctx.setValue('output', LANGFUSE.OBSERVATION_OUTPUT, true);
  // Trace-level input/output sits on the root span when the observation has none of its own.
  ctx.setValue('input', LANGFUSE.TRACE_INPUT, true);
  ctx.setValue('output', LANGFUSE.TRACE_OUTPUT, true);
  ctx.setString('model', [LANGFUSE.OBSERVATION_MODEL]);
  const usage = jsonObject(a[LANGFUSE.OBSERVATION_USAGE]);
  if (usage) {
    const pick = (keys: string[]): number | null => {
      for (const k of keys) if (toNumber(usage[k]) !== null) return toNumber(usage[k]);
      return null;
    };
    const tin = pick(['input', 'prompt_tokens', 'input_tokens']);
    const tout = pick(['output', 'completion_tokens', 'output_tokens']);
    const ttot = pick(['total', 'total_tokens']);
    if (tin !== null) ctx.out.tokens_input = tin;
    if (tout !== null) ctx.out.tokens_output = tout;
    if (ttot !== null) ctx.out.tokens_total = ttot;
    for (const [f, v] of [['tokens_input', tin], ['tokens_output', tout], ['tokens_total', ttot]] as const) if (v !== null) ctx.mark(f, LANGFUSE.OBSERVATION_USAGE);
  }
  const cost = jsonObject(a[LANGFUSE.OBSERVATION_COST]);
  if (cost) {
    const total = toNumber(cost.total);
    // Langfuse itself sums the cost details when no total is given.
    const parts = Object.values(cost).map((v) => toNumber(v)).filter((n): n is number => n !== null);
    const value = total ?? (parts.length > 0 ? parts.reduce((x, y) => x + y, 0) : null);
    if (value !== null) {
      ctx.out.cost = value;
      ctx.mark('cost', LANGFUSE.OBSERVATION_COST);
    }
  }
  ctx.setString('session_id', [LANGFUSE.SESSION_ID, OI.SESSION_ID]);
  ctx.setString('user_id', [LANGFUSE.USER_ID, OI.USER_ID]);
  if (String(a[LANGFUSE.OBSERVATION_LEVEL] ?? '').toUpperCase() === 'ERROR') {
    ctx.mark('status', LANGFUSE.OBSERVATION_LEVEL);
    const msg = toStr(a[LANGFUSE.OBSERVATION_STATUS_MESSAGE]);
    ctx.out.error = msg ?? 'ERROR';
    ctx.mark('error', msg !== null ? LANGFUSE.OBSERVATION_STATUS_MESSAGE : LANGFUSE.OBSERVATION_LEVEL);
  }
  if (ctx.out.kind === 'tool' && ctx.out.tool_calls.length === 0 && !ctx.has(GEN_AI.TOOL_NAME)) {
    // A Langfuse tool observation is the tool itself: its name and input are the call.
    ctx.out.tool_calls.push({ name: ctx.span.name, arguments: ctx.out.input ?? null, id: null });
    ctx.mark('tool_calls', '@span.name', ...(ctx.used.get('input') ?? []));
  }
  mapGenAi(ctx);
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

/**
 * Maps one source span. Never throws: records that cannot land come back as `{ ok: false, drop }`.
 * `convention: 'auto'` detects per span.
 */
export function normaliseSpan(span: SourceSpan, convention: Convention | 'auto', options: NormaliseOptions): NormaliseResult {
  const maxAttr = options.maxAttributeBytes ?? DEFAULT_MAX_ATTRIBUTE_BYTES;
  const maxRecord = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const checked = validate(span, maxRecord);
  if (!checked.ok) return checked;
  const v = checked.v;
  try {
    const conv: Convention = convention === 'auto' || !CONVENTIONS.includes(convention) ? detectSpanConvention(span) : convention;
    const ctx = new Ctx({ ...span, events: Array.isArray(span.events) ? span.events : [], resource: span.resource ?? {} });
    MAPPERS[conv](ctx);
    const o = ctx.out;

    // Status: OTLP error status, an exception event, or a convention marker (o.error, keys under used.error).
    const convErrKeys = [...(ctx.used.get('error') ?? [])];
    ctx.used.delete('error');
    const exc = exceptionMessage(ctx.span);
    const otlpErr = span.status_code === 'error';
    const isError = otlpErr || exc !== null || o.error !== null;
    const status: CanonicalSpan['status'] = isError ? 'error' : span.status_code === 'ok' ? 'ok' : 'unset';
    if (otlpErr || !isError) ctx.mark('status', '@span.status');
    else if (exc !== null) ctx.mark('status', '@event.exception');
    else if (!ctx.used.has('status')) ctx.mark('status', ...convErrKeys);
    // Only the source whose message is taken counts as used; the others stay unmapped and are kept.
    let error: string | null = null;
    if (otlpErr && span.status_message) {
      error = span.status_message;
      ctx.mark('error', '@span.status');
    } else if (exc !== null) {
      error = exc;
      ctx.mark('error', '@event.exception');
    } else if (o.error !== null) {
      error = o.error;
      ctx.mark('error', ...convErrKeys);
    }

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
    const usedKeys = new Set<string>();
    for (const keys of ctx.used.values()) for (const k of keys) usedKeys.add(k);
    const candidates: Array<[string, AttributeValue]> = [];
    for (const [k, val] of Object.entries(span.attributes)) if (!usedKeys.has(k) && val !== undefined) candidates.push([k, val]);
    // Non-attribute sources never overwrite a span attribute with the same key; such a clash is reported as dropped.
    const clashes: string[] = [];
    const addNonAttr = (k: string, val: AttributeValue): void => {
      if (usedKeys.has(k)) return;
      if (k in span.attributes) clashes.push(k);
      else candidates.push([k, val]);
    };
    for (const [k, val] of Object.entries(ctx.span.resource)) if (val !== undefined) addNonAttr(`resource.${k}`, val);
    if (span.scope?.name) addNonAttr('otel.scope.name', span.scope.name);
    if (span.scope?.version) addNonAttr('otel.scope.version', span.scope.version);
    const rest = ctx.span.events.filter((_, i) => !ctx.consumedEvents.has(i));
    if (rest.length > 0) addNonAttr('span.events', rest.map((e) => ({ name: e.name, time_unix_nano: e.time_unix_nano, attributes: e.attributes })));

    const attributes: Record<string, AttributeValue> = {};
    const unmapped: string[] = [...clashes];
    const dropped: string[] = [...clashes];
    for (const [k, val] of candidates) {
      unmapped.push(k);
      if (options.keepUnmapped && jsonBytes(val) <= maxAttr) attributes[k] = val;
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
    // Structural fields, so `used` accounts for every field of the row.
    ctx.mark('trace_id', '@span.trace_id');
    ctx.mark('span_id', '@span.span_id');
    if (v.parent_span_id !== null) ctx.mark('parent_span_id', '@span.parent_span_id');
    ctx.mark('start_time', '@span.start_time_unix_nano');
    ctx.mark('end_time', '@span.end_time_unix_nano');
    ctx.mark('duration_ms', '@span.start_time_unix_nano', '@span.end_time_unix_nano');
    const used: Record<string, string[]> = {};
    for (const [f, keys] of ctx.used) if (keys.size > 0) used[f] = [...keys];
    return { ok: true, span: canonical, used, unmapped, dropped };
  } catch (e) {
    // Mapping code only reads plain values; anything thrown means a record shape no reader should emit.
    return { ok: false, drop: { reason: 'malformed_record', detail: `mapping failed: ${e instanceof Error ? e.message : String(e)}`, source_ref: String(span.source_ref ?? ''), payload: span } };
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

export function detectConventions(spans: SourceSpan[], options: DetectOptions = {}): TraceConventionDetection {
  const cap = Math.max(1, Math.floor(options.sample ?? 1000));
  const mode = options.convention ?? 'auto';
  const normOpts: NormaliseOptions = { keepUnmapped: options.keepUnmapped ?? true, maxAttributeBytes: options.maxAttributeBytes, maxRecordBytes: options.maxRecordBytes };
  const warnings: string[] = [];

  // Drops over every span: validation is cheap next to mapping.
  const drops = new Map<DropReason, { count: number; example: string }>();
  for (const s of spans) {
    const r = validate(s, normOpts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES);
    if (r.ok) continue;
    const d = drops.get(r.drop.reason) ?? { count: 0, example: r.drop.source_ref };
    d.count++;
    drops.set(r.drop.reason, d);
  }

  const sample = evenSample(spans, cap);
  const perConv = new Map<Convention, number>();
  for (const s of sample) {
    const c = typeof s === 'object' && s !== null && s.attributes ? detectSpanConvention(s) : 'plain_otel';
    perConv.set(c, (perConv.get(c) ?? 0) + 1);
  }
  const llmConvs = CONVENTION_PRECEDENCE.filter((c) => c !== 'plain_otel' && (perConv.get(c) ?? 0) > 0);
  const marked = llmConvs.reduce((n, c) => n + (perConv.get(c) ?? 0), 0);
  // Most spans wins; ties go to the more specific convention (precedence order).
  const best: Convention = llmConvs.length === 0 ? 'plain_otel' : llmConvs.reduce((b, c) => ((perConv.get(c) ?? 0) > (perConv.get(b) ?? 0) ? c : b));
  const confidence = sample.length === 0 ? 0 : best === 'plain_otel' ? 1 : round3((perConv.get(best) ?? 0) / marked);
  const candidates: ConventionCandidate[] = CONVENTION_PRECEDENCE.filter((c) => (perConv.get(c) ?? 0) > 0)
    .map((c) => ({ convention: c, spans: perConv.get(c)!, confidence: round3(perConv.get(c)! / sample.length) }))
    .sort((a, b) => b.spans - a.spans || CONVENTION_PRECEDENCE.indexOf(a.convention) - CONVENTION_PRECEDENCE.indexOf(b.convention));

  const fieldSources = new Map<string, Set<string>>(REPORTED_FIELDS.map((f) => [f, new Set<string>()]));
  const fieldCounts = new Map<string, number>(REPORTED_FIELDS.map((f) => [f, 0]));
  const unmappedStats = new Map<string, { spans: number; dropped: number; examples: Set<string> }>();
  const traceSession = new Map<string, boolean>();
  let llmSpans = 0;
  let llmNoTokens = 0;
  let llmNoModel = 0;
  let normalised = 0;
  for (const s of sample) {
    const r = normaliseSpan(s, mode, normOpts);
    if (!r.ok) continue;
    normalised++;
    const cs = r.span;
    for (const f of REPORTED_FIELDS) {
      if (!fieldHasValue(cs, f)) continue;
      fieldCounts.set(f, fieldCounts.get(f)! + 1);
      for (const k of r.used[f] ?? []) fieldSources.get(f)!.add(foldKey(k));
    }
    // Per folded key in this span: was any of its concrete keys dropped?
    const droppedSet = new Set(r.dropped);
    const inSpan = new Map<string, boolean>();
    for (const k of r.unmapped) {
      const fk = foldKey(k);
      inSpan.set(fk, (inSpan.get(fk) ?? false) || droppedSet.has(k));
      const st = unmappedStats.get(fk) ?? { spans: 0, dropped: 0, examples: new Set<string>() };
      if (st.examples.size < 3) st.examples.add(k);
      unmappedStats.set(fk, st);
    }
    for (const [fk, wasDropped] of inSpan) {
      const st = unmappedStats.get(fk)!;
      st.spans++;
      if (wasDropped) st.dropped++;
    }
    traceSession.set(cs.trace_id, (traceSession.get(cs.trace_id) ?? false) || cs.session_id !== null);
    if (cs.kind === 'llm') {
      llmSpans++;
      if (cs.tokens_input === null && cs.tokens_output === null && cs.tokens_total === null) llmNoTokens++;
      if (cs.model === null) llmNoModel++;
    }
  }

  const n = sample.length;
  const field_mappings: FieldMapping[] = REPORTED_FIELDS.map((f) => ({
    field: f,
    source_attributes: [...fieldSources.get(f)!].sort(),
    spans_mapped: fieldCounts.get(f)!,
    coverage: n === 0 ? 0 : round3(fieldCounts.get(f)! / n),
  }));
  const unmapped_attributes: UnmappedAttribute[] = [...unmappedStats.entries()]
    .map(([key, st]) => ({ key, spans: st.spans, fate: st.dropped > 0 ? ('dropped' as const) : ('kept' as const), spans_dropped: st.dropped, examples: [...st.examples] }))
    .sort((a, b) => b.spans - a.spans || a.key.localeCompare(b.key));
  const dropped_records: DroppedRecords[] = [...drops.entries()].map(([reason, d]) => ({ reason, count: d.count, example_source_ref: d.example })).sort((a, b) => b.count - a.count);

  if (n < spans.length) warnings.push(`examined ${n} of ${spans.length} spans (sample cap ${cap})`);
  if (llmConvs.length > 1) warnings.push(`mixed conventions: ${llmConvs.map((c) => `${c} (${perConv.get(c)} spans)`).join(', ')}`);
  if (mode !== 'auto' && mode !== best && marked > 0) warnings.push(`convention forced to ${mode} but ${perConv.get(mode) ?? 0} of ${n} sampled spans carry its markers (detected ${best})`);
  const traces = traceSession.size;
  const withoutSession = [...traceSession.values()].filter((x) => !x).length;
  if (traces > 0 && withoutSession === traces) warnings.push(`no session id on any sampled span: traces cannot be grouped into sessions`);
  else if (withoutSession > 0) warnings.push(`${withoutSession} of ${traces} sampled traces have no span with a session id`);
  if (llmNoTokens > 0) warnings.push(`${llmNoTokens} of ${llmSpans} llm spans have no token counts: cost can only be reported, not estimated, for them`);
  if (llmNoModel > 0) warnings.push(`${llmNoModel} of ${llmSpans} llm spans have no model name`);
  const droppedKeys = unmapped_attributes.filter((u) => u.fate === 'dropped');
  if (droppedKeys.length > 0) warnings.push(`${droppedKeys.length} unmapped attribute keys are dropped in some spans: ${droppedKeys.slice(0, 10).map((u) => u.key).join(', ')}${droppedKeys.length > 10 ? ', ...' : ''}`);
  const totalDrops = dropped_records.reduce((x, d) => x + d.count, 0);
  if (totalDrops > 0) warnings.push(`${totalDrops} of ${spans.length} records cannot be landed (${dropped_records.map((d) => `${d.reason}: ${d.count}`).join(', ')})`);
  if (n > 0 && normalised === 0) warnings.push('no sampled span could be normalised');

  return { convention: best, confidence, candidates, span_count: spans.length, sampled: n, field_mappings, unmapped_attributes, dropped_records, warnings };
}
