/**
 * The shapes trace ingestion works with. Sources (OTLP/JSON, OTLP/protobuf, JSON/JSONL span
 * exports, Langfuse and Phoenix APIs) are read into `SourceSpan`s; a convention maps each onto a
 * `CanonicalSpan`, which is what a trace dataset version stores (one row per span). Traces and
 * sessions are groupings of spans by `trace_id` and `session_id`.
 */

/** Attribute values after flattening OTLP AnyValue: scalars, arrays of them, nested objects. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };

/** A span as read from a source, before any convention is applied. Ids are lower-case hex (OTLP) or the source's own strings. */
export interface SourceSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** OTLP SpanKind as a word: internal, server, client, producer, consumer, unspecified */
  otel_kind: string;
  /** Unix epoch nanoseconds as a decimal string (precision beyond 2^53), or null when the source lacks it */
  start_time_unix_nano: string | null;
  end_time_unix_nano: string | null;
  /** OTLP status: code unset | ok | error, with its message */
  status_code: 'unset' | 'ok' | 'error';
  status_message: string;
  /** Span attributes, flattened: key -> value (dotted keys kept as they are) */
  attributes: Record<string, AttributeValue>;
  /** Resource attributes (service.name, ...) */
  resource: Record<string, AttributeValue>;
  /** Instrumentation scope name and version */
  scope: { name: string; version: string };
  events: Array<{ name: string; time_unix_nano: string | null; attributes: Record<string, AttributeValue> }>;
  /** Where the span came from (1-based record or line number in the upload), for drops */
  source_ref: string;
}

export const CONVENTIONS = ['openinference', 'genai', 'openllmetry', 'langfuse', 'plain_otel'] as const;
export type Convention = (typeof CONVENTIONS)[number];

export const SPAN_KINDS = [
  'llm',
  'chain',
  'agent',
  'tool',
  'retriever',
  'embedding',
  'reranker',
  'guardrail',
  'evaluator',
  'unknown',
] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];

export interface ToolCall {
  name: string;
  arguments: AttributeValue;
  id: string | null;
  /** The MCP server the call went through (`host:port` from the client's span, the server's `service.name` from its own); only on MCP tool calls */
  mcp_server?: string | null;
}

export interface RetrievedDocument {
  id: string | null;
  content: string | null;
  score: number | null;
  metadata: AttributeValue;
}

/** One landed span: a row of a trace dataset version. */
export interface CanonicalSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  session_id: string | null;
  user_id: string | null;
  name: string;
  kind: SpanKind;
  /** ISO 8601 with microseconds dropped to milliseconds */
  start_time: string;
  end_time: string;
  duration_ms: number;
  status: 'ok' | 'error' | 'unset';
  error: string | null;
  input: AttributeValue;
  output: AttributeValue;
  model: string | null;
  tokens_input: number | null;
  tokens_output: number | null;
  tokens_total: number | null;
  /** Cost in USD the source reported (enrichment also prices tokens by model) */
  cost: number | null;
  tool_calls: ToolCall[];
  retrieved_documents: RetrievedDocument[];
  service_name: string | null;
  convention: Convention;
  /** Attributes no canonical field took, kept verbatim (unless the landing asked to drop them) */
  attributes: Record<string, AttributeValue>;
}

/** Why a record could not be normalised; kept with its original payload. */
export const DROP_REASONS = [
  'missing_trace_id',
  'missing_span_id',
  'invalid_id',
  'missing_timestamps',
  'end_before_start',
  'malformed_record',
  'unsupported_record',
  'record_too_large',
  // Log records (POST /v1/logs): none correlated to a span, its span not received in time, past a span's limit
  'missing_trace_context',
  'span_not_received',
  'log_records_over_limit',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface Drop {
  reason: DropReason;
  detail: string;
  source_ref: string;
  /** The original record (or as much of it as was readable) */
  payload: unknown;
}
