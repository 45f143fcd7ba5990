import { renderRequest } from './adapter.js';
import { extractResponse } from './extract.js';
import type {
  AdapterSpec,
  ConnectionSpec,
  RenderedRequest,
  RetryPolicy,
  RowContext,
  SutCallResult,
} from './sut.types.js';
import { outboundRequest } from '#libs/common/outbound.js';

/** How much of a failed response's body is kept for diagnosis. */
const EXCERPT_CHARS = 4096;

export interface CallSutOptions {
  secret: string | null;
  signal?: AbortSignal;
  /** The HTTP exchange (tests wrap it); `outboundRequest` by default. */
  request?: typeof outboundRequest;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Headers the caller adds to every attempt (a W3C `traceparent`), over the adapter's. */
  headers?: Record<string, string>;
}

type SutError = NonNullable<SutCallResult['error']>;
/** Builds the result from what an outcome decides; request and latency are filled in. */
type Finish = (
  fields: Pick<SutCallResult, 'ok' | 'status_code' | 'attempts' | 'error'> & Partial<SutCallResult>,
) => SutCallResult;

/** Waits `ms`, ending early (without throwing) when the signal aborts; the caller checks the signal. */
function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (header === null || header.trim() === '') return null;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** Full jitter: a uniform wait up to the doubled backoff, so many clients do not retry in step. */
function backoffMs(policy: RetryPolicy, attempt: number, retryAfter: number | null): number {
  if (retryAfter !== null) return Math.min(retryAfter, policy.max_backoff_ms);
  const ceiling = Math.min(policy.max_backoff_ms, policy.initial_backoff_ms * 2 ** (attempt - 1));
  return Math.random() * ceiling;
}

type Attempt =
  | { kind: 'response'; status: number; text: string; retryAfter: string | null }
  | { kind: 'timeout' }
  | { kind: 'network'; message: string }
  | { kind: 'cancelled' };

async function attemptOnce(
  request: RenderedRequest,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  send: typeof outboundRequest,
): Promise<Attempt> {
  // One controller for the timeout and the caller's cancel, undone when the attempt ends (AbortSignal.any and
  // AbortSignal.timeout cost more than the rest of the attempt's own work, thousands of times a run).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const cancel = () => controller.abort();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    if (signal?.aborted) return { kind: 'cancelled' };
    // The body is read under the same signal, so a response that stalls midway also times out.
    const response = await send(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: controller.signal,
    });
    return {
      kind: 'response',
      status: response.status,
      text: response.text,
      retryAfter: response.header('retry-after'),
    };
  } catch (error) {
    if (signal?.aborted) return { kind: 'cancelled' };
    if (timedOut) return { kind: 'timeout' };
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { kind: 'network', message: `${error instanceof Error ? error.message : String(error)}${cause}` };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
  }
}

function withHeaders(request: RenderedRequest, headers: Record<string, string> | undefined): RenderedRequest {
  return headers ? { ...request, headers: { ...request.headers, ...headers } } : request;
}

function roundTenth(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** Sends one row to the system under test, retrying per the connection's policy; failures come back as values. */
export async function callSut(
  conn: ConnectionSpec,
  adapter: AdapterSpec,
  row: RowContext,
  opts: CallSutOptions,
): Promise<SutCallResult> {
  const shown = withHeaders(renderRequest(conn, adapter, row, opts.secret, { redact: true }).request, opts.headers);
  const base = { request: shown, extracted: null, response_excerpt: null };
  const rendered = renderRequest(conn, adapter, row, opts.secret);
  rendered.request = withHeaders(rendered.request, opts.headers);
  if (rendered.issues.length) {
    return {
      ...base,
      ok: false,
      status_code: null,
      latency_ms: 0,
      attempts: 0,
      error: {
        code: 'render_failed',
        message: `the request could not be rendered: ${rendered.issues.map((issue) => issue.message).join('; ')}`,
        issues: rendered.issues,
      },
    };
  }

  const send = opts.request ?? outboundRequest;
  const sleep = opts.sleep ?? defaultSleep;
  const policy = conn.retry;
  const maxAttempts = Math.max(1, policy.max_attempts);
  const started = performance.now();
  const finish: Finish = (fields) => ({ ...base, ...fields, latency_ms: roundTenth(performance.now() - started) });
  const cancelled = (attempts: number, status: number | null): SutCallResult =>
    finish({
      ok: false,
      status_code: status,
      attempts,
      error: { code: 'cancelled', message: 'the call was cancelled' },
    });

  let lastStatus: number | null = null;
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) return cancelled(attempt - 1, lastStatus);
    const outcome = await attemptOnce(rendered.request, conn.timeout_ms, opts.signal, send);
    if (outcome.kind === 'cancelled') return cancelled(attempt, lastStatus);

    let retryable: boolean;
    let error: SutError;
    let retryAfter: number | null = null;
    let excerpt: string | null = null;
    if (outcome.kind === 'timeout') {
      lastStatus = null;
      retryable = policy.retry_on_timeout;
      error = { code: 'timeout', message: `no response within ${conn.timeout_ms} ms` };
    } else if (outcome.kind === 'network') {
      lastStatus = null;
      retryable = true;
      error = { code: 'network', message: outcome.message };
    } else {
      lastStatus = outcome.status;
      if (outcome.status >= 200 && outcome.status < 300)
        return finishResponse(outcome.status, outcome.text, attempt, adapter, conn.kind, finish);
      retryable = policy.retry_on_status.includes(outcome.status);
      retryAfter = retryAfterMs(outcome.retryAfter);
      error = { code: 'http_status', message: `the system under test answered HTTP ${outcome.status}` };
      excerpt = outcome.text.slice(0, EXCERPT_CHARS);
    }
    if (!retryable || attempt >= maxAttempts)
      return finish({ ok: false, status_code: lastStatus, attempts: attempt, error, response_excerpt: excerpt });
    await sleep(backoffMs(policy, attempt, retryAfter), opts.signal);
  }
}

function finishResponse(
  status: number,
  text: string,
  attempts: number,
  adapter: AdapterSpec,
  kind: ConnectionSpec['kind'],
  finish: Finish,
): SutCallResult {
  const excerpt = text.slice(0, EXCERPT_CHARS);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return finish({
      ok: false,
      status_code: status,
      attempts,
      response_excerpt: excerpt,
      error: { code: 'response_not_json', message: `the response body is not JSON (HTTP ${status})` },
    });
  }
  const { extracted, issues } = extractResponse(adapter.response, body, kind);
  if (extracted.output === null) {
    return finish({
      ok: false,
      status_code: status,
      attempts,
      extracted,
      response_excerpt: excerpt,
      error: {
        code: 'extraction_failed',
        message: issues
          .filter((issue) => issue.pointer === '/response/output')
          .map((issue) => issue.message)
          .join('; '),
        issues,
      },
    });
  }
  return finish({ ok: true, status_code: status, attempts, extracted, error: null });
}
