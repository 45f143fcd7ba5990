/**
 * How the service reaches a system under test (a connection) and how a dataset row becomes a
 * request and a response becomes an output (an adapter). Runs use these per row; the SUT
 * endpoints validate and test them. Snake-case members: these are stored and served as JSON.
 */

import type { Trajectory } from '../trajectory/trajectory.types.js';

export const CONNECTION_KINDS = ['http', 'openai_chat', 'offline'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

export const HTTP_METHODS = ['POST', 'PUT', 'PATCH', 'GET'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** When and how often a failed call is tried again (429, 5xx, timeouts, network errors). */
export interface RetryPolicy {
  /** Calls in all, the first included (1 = no retry). */
  max_attempts: number;
  /** Backoff before the 2nd attempt; doubles each time, with full jitter, capped at max_backoff_ms. A Retry-After header wins when present (capped too). */
  initial_backoff_ms: number;
  max_backoff_ms: number;
  /** Statuses that are retried. */
  retry_on_status: number[];
  retry_on_timeout: boolean;
}

/** Where the secret's value goes on each request. */
export interface ConnectionAuth {
  /** A workspace secret; its value is resolved at call time and never stored here. */
  secret_id: string;
  /** `bearer`: `Authorization: Bearer <value>`; `header`: `<header>: <prefix><value>`; `query`: `?<param>=<value>`. */
  scheme: 'bearer' | 'header' | 'query';
  header?: string;
  prefix?: string;
  param?: string;
}

export interface HttpTransport {
  url: string;
  method: HttpMethod;
  /** Static headers (templates are the adapter's). */
  headers: Record<string, string>;
}

export interface OpenAiChatTransport {
  /** e.g. https://api.openai.com/v1 — `/chat/completions` is appended. */
  base_url: string;
  model: string;
  /** Passed through in the body: temperature, max_tokens, top_p, seed, stop, response_format… */
  parameters: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * How a run joins each row to the trace the SUT exported of its call: every call carries a W3C
 * `traceparent`; the SUT exports its spans to the OTLP receiver into the trace dataset named here
 * (its exporter's `x-ews-dataset`), and the run waits for them before it scores the row.
 */
export interface TraceLink {
  /** The trace dataset the SUT's spans land in, by name (compared case-insensitively). */
  dataset: string;
  /** How long after the answer the run waits at most for the trace to land. */
  wait_ms: number;
  /** The trace is taken as landed once its entry span has and no new span has for this long. */
  settle_ms: number;
}

/** What the service knows to reach one connection. Exactly one of http / openai_chat per kind; offline has neither. */
export interface ConnectionSpec {
  kind: ConnectionKind;
  http?: HttpTransport;
  openai_chat?: OpenAiChatTransport;
  auth: ConnectionAuth | null;
  timeout_ms: number;
  /** Used by runs: calls in flight at most, and calls started per second at most (null = unlimited). */
  max_concurrency: number;
  requests_per_second: number | null;
  retry: RetryPolicy;
  /** Join each call to the SUT's own exported trace; null (or absent) when the SUT exports none here. */
  trace_link?: TraceLink | null;
}

export const PATH_LANGUAGES = ['jsonpath', 'jmespath'] as const;
export type PathLanguage = (typeof PATH_LANGUAGES)[number];

/**
 * Maps a row to a request and a response to an output.
 *
 * Templates: any JSON value; strings may hold `{{ placeholder }}`s. A string that is exactly one
 * placeholder is replaced by the value itself (an object stays an object); inside longer text a
 * value is inserted as text (objects and arrays as JSON). Placeholders: `input`,
 * `expected_output`, `context` (the row's mapped fields), `row.<column>` (dotted paths into the
 * row's data, `row.a.b`, `row.items.0`), `row_id`, `session_id`, `turn`, `history` (the earlier
 * turns of a multi-turn session as chat messages `[{role, content}]`), and `env.model` for
 * openai_chat. A placeholder may end with a filter: `| json` (JSON text of the value),
 * `| default("text")` (used when the value is missing or null).
 */
export interface AdapterSpec {
  request: {
    /** http: the body (omitted for GET). openai_chat: merged over `{model, messages, ...parameters}`. */
    body?: unknown;
    /** openai_chat only: the messages; default `[{{history}}..., {role: user, content: "{{input}}"}]`. An element that is exactly `"{{history}}"` is spread into the earlier turns. */
    messages?: unknown[];
    /** Extra headers, templated. */
    headers?: Record<string, string>;
    /** Query parameters, templated. */
    query?: Record<string, string>;
  };
  response: {
    language: PathLanguage;
    /** Where the output text is. A non-string match is returned as JSON text. */
    output: string;
    usage?: { prompt_tokens?: string; completion_tokens?: string; total_tokens?: string };
    /** Where the SUT reports its own cost in USD, if it does. */
    cost_usd?: string;
    /** Other fields kept with the result, e.g. `contexts` of a RAG endpoint. */
    extras?: Record<string, string>;
    /**
     * Where an agent endpoint lists the steps it took (its tool calls): a list of
     * `{type?, name|tool|tool_name|function.name, arguments|args|input|function.arguments, output|result, error}`
     * or of OpenAI chat messages. openai_chat connections read the completion's tool calls without it.
     */
    trajectory?: string;
  };
}

/** One row as the adapter sees it. */
export interface RowContext {
  row_id: string;
  data: Record<string, unknown>;
  input?: unknown;
  expected_output?: unknown;
  context?: unknown;
  session_id?: string | null;
  turn?: number | null;
  history?: ChatMessage[];
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** Something wrong with an adapter, a rendering or an extraction, where it is. */
export interface AdapterIssue {
  /** JSON Pointer into the adapter spec (`/request/body/messages/0/content`, `/response/output`). */
  pointer: string;
  code:
    | 'template_syntax'
    | 'unknown_placeholder'
    | 'missing_value'
    | 'path_syntax'
    | 'path_no_match'
    | 'not_a_number'
    | 'response_not_json'
    | 'invalid_spec';
  message: string;
}

/** A request ready to send (secrets already in for calls; redacted for display). */
export interface RenderedRequest {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface ExtractedOutput {
  output: string | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null };
  cost_usd: number | null;
  extras: Record<string, unknown>;
  /** The tool calls and steps the answer shows (bounded for storage); null when it shows none. */
  trajectory: Trajectory | null;
}

/** The outcome of one call (after retries). Failures are values, never thrown. */
export interface SutCallResult {
  ok: boolean;
  /** The last response's status; null when no response came (timeout, network). */
  status_code: number | null;
  /** From sending the first attempt to the end of the last, in ms. */
  latency_ms: number;
  attempts: number;
  request: RenderedRequest;
  extracted: ExtractedOutput | null;
  error: {
    code:
      'timeout' | 'network' | 'http_status' | 'response_not_json' | 'extraction_failed' | 'render_failed' | 'cancelled';
    message: string;
    issues?: AdapterIssue[];
  } | null;
  /** The start of the response body (4 KB) when the call failed, for diagnosis. */
  response_excerpt: string | null;
}
