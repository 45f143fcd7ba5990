import { EwsApiError } from './errors.js';

/** How 429 (rate limited) and 503 (unavailable) answers are retried. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 never retries). */
  retries?: number;
  /** The longest wait before a retry, in ms (default 30 000): a Retry-After beyond it is thrown at once. */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { retries: 2, maxDelayMs: 30_000 };

/**
 * The one way requests leave the SDK, for the generated operations (as their `customFetch`)
 * and the upload helpers alike: adds the client's headers, retries 429 and 503 as long as
 * Retry-After (else 1 s, 2 s, …) stays within `maxDelayMs` and the body can be sent again (a
 * stream cannot), and throws EwsApiError for every answer outside 2xx.
 */
export function createTransport(
  fetchImpl: typeof fetch,
  headers: Record<string, string>,
  retry: Required<RetryOptions>,
) {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const method = init.method ?? (input instanceof Request ? input.method : 'GET');
    const url = input instanceof Request ? input.url : String(input);
    const sent = new Headers(init.headers);
    for (const [name, value] of Object.entries(headers)) if (!sent.has(name)) sent.set(name, value);
    const retries = isOneShot(init.body) ? 0 : retry.retries;
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(input, { ...init, headers: sent });
      if (response.ok) return response;
      const error = await EwsApiError.fromResponse(response, method, url);
      const waitMs = (error.retryAfter ?? 2 ** attempt) * 1000;
      if ((error.status !== 429 && error.status !== 503) || attempt >= retries || waitMs > retry.maxDelayMs)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
}

/** A body that is read once (a stream), so that a request carrying it cannot be repeated. */
function isOneShot(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    (typeof (body as { getReader?: unknown }).getReader === 'function' || Symbol.asyncIterator in body)
  );
}
