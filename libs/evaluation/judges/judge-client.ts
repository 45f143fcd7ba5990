/**
 * One judge call with retries: never throws, always returns a JudgeCallResult, and never lets
 * the credential into it.
 */
import type { JudgeCallResult, JudgeConnection, JudgeCredential } from './judge.types.js';
import { buildJudgeRequest, parseJudgeResponse, type JudgeMessage, type JudgeUsage } from './providers.js';
import { outboundFetch } from '#libs/common/outbound.js';

export interface CallJudgeOptions {
  /** Cancels the whole call, backoff included (the result is `cancelled`). */
  signal?: AbortSignal;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;
const EXCERPT_CHARS = 4096;
const RETRYABLE_STATUSES = new Set([408, 409, 425, 429]);

type JudgeError = NonNullable<JudgeCallResult['error']>;

interface AttemptOutcome {
  status_code: number | null;
  text: string | null;
  usage: JudgeUsage;
  error: JudgeError | null;
  response_excerpt: string | null;
  retryable: boolean;
  retry_after_ms: number | null;
}

export async function callJudge(
  conn: JudgeConnection,
  key: JudgeCredential,
  messages: JudgeMessage[],
  opts: CallJudgeOptions = {},
): Promise<JudgeCallResult> {
  const doFetch = opts.fetch ?? outboundFetch;
  const sleep = opts.sleep ?? sleepUnlessAborted;
  const maxAttempts = Math.max(1, Math.floor(conn.max_attempts));
  const started = performance.now();
  let attempts = 0;
  let outcome: AttemptOutcome = cancelledOutcome();

  while (!opts.signal?.aborted) {
    attempts += 1;
    outcome = await attempt(conn, key, messages, doFetch, opts.signal);
    if (!outcome.retryable || attempts >= maxAttempts) break;
    await sleep(backoffMs(attempts, outcome.retry_after_ms), opts.signal);
  }
  if (opts.signal?.aborted) outcome = cancelledOutcome();

  return redact(
    {
      ok: outcome.error === null,
      status_code: outcome.status_code,
      latency_ms: Math.round((performance.now() - started) * 10) / 10,
      attempts,
      text: outcome.text,
      usage: outcome.usage,
      error: outcome.error,
      response_excerpt: outcome.response_excerpt,
    },
    key,
  );
}

async function attempt(
  conn: JudgeConnection,
  key: JudgeCredential,
  messages: JudgeMessage[],
  doFetch: typeof fetch,
  outer: AbortSignal | undefined,
): Promise<AttemptOutcome> {
  const timeout = AbortSignal.timeout(conn.timeout_ms);
  const signal = outer ? AbortSignal.any([timeout, outer]) : timeout;
  let status: number | null = null;
  try {
    const request = buildJudgeRequest(conn, key, messages);
    const response = await doFetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal,
    });
    status = response.status;
    const body = await response.text();
    const excerpt = body.slice(0, EXCERPT_CHARS);
    if (!response.ok) {
      const retryable = RETRYABLE_STATUSES.has(status) || status >= 500;
      const error: JudgeError = { code: 'http_status', message: `the judge answered HTTP ${status}` };
      return {
        ...failure(status, error, excerpt),
        retryable,
        retry_after_ms: retryable ? parseRetryAfter(response.headers.get('retry-after')) : null,
      };
    }
    const answer = parseJudgeResponse(conn, body);
    if (!answer.ok) return failure(status, { code: 'malformed_response', message: answer.message }, excerpt);
    return {
      status_code: status,
      text: answer.text,
      usage: answer.usage,
      error: null,
      response_excerpt: null,
      retryable: false,
      retry_after_ms: null,
    };
  } catch (err) {
    if (outer?.aborted) return cancelledOutcome();
    if (timeout.aborted)
      return {
        ...failure(status, { code: 'timeout', message: `the judge did not answer within ${conn.timeout_ms} ms` }, null),
        retryable: true,
      };
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const message = err instanceof Error ? err.message : String(err);
    return {
      ...failure(status, { code: 'network', message: `the judge could not be reached: ${message}${cause}` }, null),
      retryable: true,
    };
  }
}

function failure(status: number | null, error: JudgeError, excerpt: string | null): AttemptOutcome {
  return {
    status_code: status,
    text: null,
    usage: { prompt_tokens: null, completion_tokens: null },
    error,
    response_excerpt: excerpt,
    retryable: false,
    retry_after_ms: null,
  };
}

function cancelledOutcome(): AttemptOutcome {
  return failure(null, { code: 'cancelled', message: 'the judge call was cancelled' }, null);
}

/** Full jitter over an exponential ceiling; a Retry-After replaces the jitter but stays under the cap. */
export function backoffMs(failedAttempts: number, retryAfterMs: number | null): number {
  if (retryAfterMs !== null) return Math.min(MAX_BACKOFF_MS, retryAfterMs);
  const ceiling = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (failedAttempts - 1));
  return Math.random() * ceiling;
}

/** Retry-After is either delay-seconds or an HTTP date. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Provider errors and network messages can echo the key; scrub it from every string in the result. */
function redact(result: JudgeCallResult, key: JudgeCredential): JudgeCallResult {
  if (!key) return result;
  const scrub = (s: string | null) => (s === null ? null : s.split(key).join('[redacted]'));
  return {
    ...result,
    text: scrub(result.text),
    error: result.error && { code: result.error.code, message: scrub(result.error.message) ?? '' },
    response_excerpt: scrub(result.response_excerpt),
  };
}
