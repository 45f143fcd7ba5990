/**
 * OTLP log records joined to their spans. OpenTelemetry's GenAI instrumentations (the `openai`
 * one among them) put a model call's prompts and answers in log records ("events") correlated
 * to the call's span by trace and span id, not on the span. Joined to the span's row they fill
 * what the span lacks: `input` (the messages), `output` (the choices), `tool_calls` (the calls the
 * model asked for), and keep evaluation results; every joined record stays on the row as the
 * span's `log.records`. The row is a function of the span and the set of its records, whatever
 * order (and whichever export batches) they arrived in.
 */
import { createHash } from 'node:crypto';
import { genaiPartsToolCalls } from './conventions/genai.js';
import { isObject, isPresent, jsonBytes, parseJsonish, toNumber, toStr } from './conventions/mapping-context.js';
import type { SourceLogRecord } from './otlp-logs.js';
import type { AttributeValue, CanonicalSpan, Drop, ToolCall } from './span.types.js';

/** The GenAI event records joined into a span's fields. */
export const GENAI_LOG_EVENTS = {
  details: 'gen_ai.client.inference.operation.details',
  system: 'gen_ai.system.message',
  user: 'gen_ai.user.message',
  assistant: 'gen_ai.assistant.message',
  tool: 'gen_ai.tool.message',
  choice: 'gen_ai.choice',
  evaluation: 'gen_ai.evaluation.result',
} as const;

const MESSAGE_ROLE: Record<string, string> = {
  [GENAI_LOG_EVENTS.system]: 'system',
  [GENAI_LOG_EVENTS.user]: 'user',
  [GENAI_LOG_EVENTS.assistant]: 'assistant',
  [GENAI_LOG_EVENTS.tool]: 'tool',
};

/** The row attribute holding every log record joined to the span, in time order. */
export const LOG_RECORDS_ATTRIBUTE = 'log.records';
/** The row attribute naming, per field a log record filled (`input`, `output`, `tool_calls`), the event names it came from. */
export const LOG_SOURCES_ATTRIBUTE = 'log.sources';
/** The row attribute holding the span's `gen_ai.evaluation.result` events, one object each. */
export const EVALUATION_RESULTS_ATTRIBUTE = 'gen_ai.evaluation.results';

/** Log records one span keeps; more are dropped (`log_records_over_limit`). */
export const MAX_LOG_RECORDS_PER_SPAN = 128;
/** Bytes of one log record (its body and attributes as JSON); a larger one is dropped (`record_too_large`). */
export const MAX_LOG_RECORD_BYTES = 32 * 1024;

/** A log record as its span's row keeps it. */
export interface SpanLogRecord {
  /** Identifies the record's content: an exporter's retry of it is kept once */
  key: string;
  event_name: string | null;
  /** ISO 8601, milliseconds */
  time: string | null;
  /** Unix epoch nanoseconds, the order records are kept in */
  time_unix_nano: string | null;
  severity: string | null;
  body: AttributeValue;
  attributes: Record<string, AttributeValue>;
}

/** A log record waiting for its span: the span's ids, the dataset it routes to, the record as the row keeps it. */
export interface PendingLogRecord {
  trace_id: string;
  span_id: string;
  service_name: string | null;
  record: SpanLogRecord;
}

export type LogRecordResult = { ok: true; log: PendingLogRecord } | { ok: false; drop: Drop };

/**
 * Checks one log record and puts it in the form its span keeps. The keep/drop rule: a record with
 * a valid trace id and span id is kept (to join its span); one without trace context has no span
 * to join and is dropped (`missing_trace_context`), as is one over MAX_LOG_RECORD_BYTES.
 */
export function normaliseLogRecord(source: SourceLogRecord): LogRecordResult {
  const drop = (reason: Drop['reason'], detail: string, payload: unknown = logPayload(source)): LogRecordResult => ({
    ok: false,
    drop: { reason, detail, source_ref: source.source_ref, payload },
  });
  if (!source.trace_id || !source.span_id)
    return drop(
      'missing_trace_context',
      `the log record${source.event_name ? ` (${source.event_name})` : ''} has no ${source.trace_id ? 'span id' : 'trace id'}: only records correlated to a span are kept`,
    );
  if (!/^[0-9a-f]{32}$/.test(source.trace_id) || !/^[0-9a-f]{16}$/.test(source.span_id))
    return drop('invalid_id', 'a log record’s trace id is 16 bytes and its span id 8 bytes');
  const content = { body: source.body, attributes: source.attributes };
  const bytes = jsonBytes(content);
  if (bytes > MAX_LOG_RECORD_BYTES)
    return drop('record_too_large', `the log record is ${bytes} bytes as JSON (at most ${MAX_LOG_RECORD_BYTES})`, {
      event_name: source.event_name,
      trace_id: source.trace_id,
      span_id: source.span_id,
      bytes,
    });
  const severity =
    source.severity_text ?? (source.severity_number ? `SEVERITY_NUMBER_${source.severity_number}` : null);
  const record: Omit<SpanLogRecord, 'key'> = {
    event_name: source.event_name,
    time: source.time_unix_nano ? new Date(Number(BigInt(source.time_unix_nano) / 1_000_000n)).toISOString() : null,
    time_unix_nano: source.time_unix_nano,
    severity,
    ...content,
  };
  const key = createHash('sha256')
    .update(JSON.stringify([source.trace_id, source.span_id, record]))
    .digest('base64url')
    .slice(0, 22);
  const service = source.resource['service.name'];
  return {
    ok: true,
    log: {
      trace_id: source.trace_id,
      span_id: source.span_id,
      service_name: typeof service === 'string' && service ? service : null,
      record: { key, ...record },
    },
  };
}

function logPayload(source: SourceLogRecord): unknown {
  const { resource: _resource, scope: _scope, source_ref: _ref, ...rest } = source;
  return rest;
}

export interface JoinOutcome {
  span: CanonicalSpan;
  /** Records new to the span (not kept before) */
  added: number;
  /** Records the span had no room for (over MAX_LOG_RECORDS_PER_SPAN) */
  overflow: SpanLogRecord[];
}

/**
 * The span's row with `records` joined: kept in `log.records` (a record already kept is not
 * kept twice), and `input`, `output`, `tool_calls` filled from the GenAI events where the span
 * lacks them (or where earlier log records filled them: then from all records now known);
 * `log.sources` names the events each filled field came from, `gen_ai.evaluation.results` holds
 * the evaluation events.
 */
export function joinLogRecords(span: CanonicalSpan, records: SpanLogRecord[]): JoinOutcome {
  const kept = keptRecords(span);
  const keys = new Set(kept.map((r) => r.key));
  const overflow: SpanLogRecord[] = [];
  let added = 0;
  for (const record of records) {
    if (keys.has(record.key)) continue;
    if (kept.length >= MAX_LOG_RECORDS_PER_SPAN) {
      overflow.push(record);
      continue;
    }
    keys.add(record.key);
    kept.push(record);
    added++;
  }
  if (!added) return { span, added, overflow };
  const ordered = sortByTime(kept);
  const before = isObject(span.attributes[LOG_SOURCES_ATTRIBUTE])
    ? (span.attributes[LOG_SOURCES_ATTRIBUTE] as Record<string, AttributeValue>)
    : {};
  const derived = deriveFields(ordered);
  const out: CanonicalSpan = { ...span, attributes: { ...span.attributes } };
  const sources: Record<string, AttributeValue> = {};
  for (const field of ['input', 'output', 'tool_calls'] as const) {
    const value = derived[field];
    if (!value || !(isEmpty(span[field]) || field in before)) {
      if (field in before) sources[field] = before[field];
      continue;
    }
    (out as unknown as Record<string, unknown>)[field] = value.value;
    sources[field] = value.events;
  }
  out.attributes[LOG_RECORDS_ATTRIBUTE] = ordered as unknown as AttributeValue;
  if (Object.keys(sources).length) out.attributes[LOG_SOURCES_ATTRIBUTE] = sources;
  if (derived.evaluations.length) out.attributes[EVALUATION_RESULTS_ATTRIBUTE] = derived.evaluations;
  return { span: out, added, overflow };
}

function keptRecords(span: CanonicalSpan): SpanLogRecord[] {
  const value = span.attributes?.[LOG_RECORDS_ATTRIBUTE];
  return Array.isArray(value) ? (value as unknown as SpanLogRecord[]).filter((r) => isObject(r as never)) : [];
}

/** By time (a record without one last), ties in the order they were kept: the order they were sent. */
function sortByTime(records: SpanLogRecord[]): SpanLogRecord[] {
  const at = (r: SpanLogRecord) => (r.time_unix_nano ? BigInt(r.time_unix_nano) : null);
  return records
    .map((r, i) => ({ r, i, t: at(r) }))
    .sort((a, b) => {
      if (a.t !== b.t) {
        if (a.t === null) return 1;
        if (b.t === null) return -1;
        return a.t < b.t ? -1 : 1;
      }
      return a.i - b.i;
    })
    .map((x) => x.r);
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

interface Derived {
  value: AttributeValue;
  events: string[];
}

/** What the GenAI events among `records` say of the span's fields. */
function deriveFields(records: SpanLogRecord[]): {
  input?: Derived;
  output?: Derived;
  tool_calls?: Derived;
  evaluations: AttributeValue[];
} {
  const result: ReturnType<typeof deriveFields> = { evaluations: [] };
  // The newer single event (semantic conventions 1.37+) first: it carries whole message lists.
  const details = records.filter((r) => r.event_name === GENAI_LOG_EVENTS.details).at(-1);
  if (details) {
    const a = details.attributes;
    const instructions = a['gen_ai.system_instructions'];
    const messages = isPresent(a['gen_ai.input.messages']) ? parseJsonish(a['gen_ai.input.messages']) : null;
    const input = [
      ...(isPresent(instructions) ? [{ role: 'system', parts: parseJsonish(instructions) }] : []),
      ...(Array.isArray(messages) ? messages : messages === null ? [] : [messages]),
    ];
    if (input.length) result.input = { value: input, events: [GENAI_LOG_EVENTS.details] };
    const output = isPresent(a['gen_ai.output.messages']) ? parseJsonish(a['gen_ai.output.messages']) : null;
    if (output !== null) {
      result.output = { value: output, events: [GENAI_LOG_EVENTS.details] };
      const calls = genaiPartsToolCalls(output);
      if (calls.length) result.tool_calls = { value: toolCallValues(calls), events: [GENAI_LOG_EVENTS.details] };
    }
  }
  const messages: AttributeValue[] = [];
  const messageEvents = new Set<string>();
  const choices: Array<{ index: number; message: AttributeValue; calls: ToolCall[] }> = [];
  for (const record of records) {
    const name = record.event_name ?? '';
    const role = MESSAGE_ROLE[name];
    if (role) {
      messages.push(messageOf(role, record));
      messageEvents.add(name);
    } else if (name === GENAI_LOG_EVENTS.choice) choices.push(choiceOf(record, choices.length));
    else if (name === GENAI_LOG_EVENTS.evaluation) result.evaluations.push(evaluationOf(record));
  }
  if (!result.input && messages.length) result.input = { value: messages, events: [...messageEvents] };
  if (!result.output && choices.length) {
    choices.sort((a, b) => a.index - b.index);
    result.output = { value: choices.map((c) => c.message), events: [GENAI_LOG_EVENTS.choice] };
    const calls = choices.flatMap((c) => c.calls);
    if (!result.tool_calls && calls.length)
      result.tool_calls = { value: toolCallValues(calls), events: [GENAI_LOG_EVENTS.choice] };
  }
  return result;
}

function bodyObject(record: SpanLogRecord): Record<string, AttributeValue> {
  return isObject(record.body) ? record.body : isPresent(record.body) ? { content: record.body } : {};
}

/** A role event (`gen_ai.user.message`, …) as a message: role, content, and an assistant's tool calls or a tool's call id. */
function messageOf(role: string, record: SpanLogRecord): AttributeValue {
  const body = bodyObject(record);
  const message: Record<string, AttributeValue> = {
    role: toStr(body.role) ?? toStr(record.attributes.role) ?? role,
    content: isPresent(body.content) ? parseJsonish(body.content) : null,
  };
  const calls = toolCallsOf(body.tool_calls);
  if (calls.length) message.tool_calls = toolCallValues(calls);
  if (role === 'tool' && isPresent(body.id)) message.tool_call_id = toStr(body.id);
  return message;
}

/** A `gen_ai.choice` event: its message (an assistant's, with its tool calls) and finish reason. */
function choiceOf(record: SpanLogRecord, place: number): { index: number; message: AttributeValue; calls: ToolCall[] } {
  const body = bodyObject(record);
  const inner = isObject(body.message) ? body.message : {};
  const calls = toolCallsOf(inner.tool_calls);
  const message: Record<string, AttributeValue> = {
    role: toStr(inner.role) ?? 'assistant',
    content: isPresent(inner.content) ? parseJsonish(inner.content) : null,
  };
  if (calls.length) message.tool_calls = toolCallValues(calls);
  if (isPresent(body.finish_reason)) message.finish_reason = body.finish_reason;
  return { index: toNumber(body.index) ?? place, message, calls };
}

/** OpenAI-shaped tool calls (`{id, type, function: {name, arguments}}`) or flat ones (`{id, name, arguments}`). */
function toolCallsOf(value: AttributeValue | undefined): ToolCall[] {
  if (!Array.isArray(value)) return [];
  const calls: ToolCall[] = [];
  for (const tc of value) {
    if (!isObject(tc)) continue;
    const fn = isObject(tc.function) ? tc.function : tc;
    const name = toStr(fn.name);
    if (!name) continue;
    calls.push({ name, arguments: isPresent(fn.arguments) ? parseJsonish(fn.arguments) : null, id: toStr(tc.id) });
  }
  return calls;
}

function toolCallValues(calls: ToolCall[]): AttributeValue {
  return calls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id }));
}

/** A `gen_ai.evaluation.result` event: its gen_ai.evaluation.* attributes without the prefix, and when. */
function evaluationOf(record: SpanLogRecord): AttributeValue {
  const a = record.attributes;
  const body = bodyObject(record);
  return {
    name: toStr(a['gen_ai.evaluation.name']),
    score_value: toNumber(a['gen_ai.evaluation.score.value']),
    score_label: toStr(a['gen_ai.evaluation.score.label']),
    explanation: toStr(a['gen_ai.evaluation.explanation']) ?? toStr(body.content),
    response_id: toStr(a['gen_ai.response.id']),
    error_type: toStr(a['error.type']),
    time: record.time,
  };
}
