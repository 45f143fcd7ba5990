import type { ProblemFieldError, ProblemResponse } from './generated/api.js';

/**
 * An error body as the service writes it (application/problem+json, RFC 9457): the documented
 * members plus the extensions some errors carry (`available`, `limit_bytes`, `checks`, …).
 */
export type Problem = ProblemResponse & { [extension: string]: unknown };

/** Marks an EwsApiError across copies of the SDK (the ESM and the CommonJS build are two classes). */
const BRAND = Symbol.for('@ews/sdk/EwsApiError');

/**
 * Thrown for every answer outside 2xx. `problem` is the body; when the answer was not
 * problem+json (a proxy's HTML page, an empty 304) one is made up with `error_code`
 * `http_<status>` and the start of the text as `detail`.
 */
export class EwsApiError extends Error {
  override readonly name = 'EwsApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The stable machine-readable code (docs/errors.md), e.g. `validation_failed`. */
  readonly errorCode: string;
  /** The whole problem body, extensions included. */
  readonly problem: Problem;
  /** The request's id (the problem's `request_id`, else the X-Request-Id header): quote it to the operators. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (Retry-After on 429 and 503). */
  readonly retryAfter: number | undefined;
  /** The request that failed, e.g. `GET /datasets/…`. */
  readonly request: string;

  constructor(problem: Problem, init: { request: string; requestId?: string; retryAfter?: number }) {
    super(`${init.request} answered ${problem.status} ${problem.error_code}: ${problem.detail}`);
    this.status = problem.status;
    this.errorCode = problem.error_code;
    this.problem = problem;
    this.requestId = problem.request_id ?? init.requestId;
    this.retryAfter = init.retryAfter;
    this.request = init.request;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Per-field messages of a `validation_failed` problem (empty for other errors). */
  get errors(): ProblemFieldError[] {
    return this.listed().filter((e): e is ProblemFieldError => typeof e === 'object' && e !== null);
  }

  /** The problems an `…_invalid` error lists one line each (project_dimensions_invalid, test_plan_invalid, …). */
  get problems(): string[] {
    return this.listed().filter((e): e is string => typeof e === 'string');
  }

  private listed(): Array<ProblemFieldError | string> {
    return this.problem.errors ?? [];
  }

  /** Reads a failed response to `method url` into an EwsApiError. */
  static async fromResponse(response: Response, method: string, url: string): Promise<EwsApiError> {
    const request = `${method.toUpperCase()} ${url.replace(/^[a-z]+:\/\/[^/]+/i, '').replace(/\?.*$/, '')}`;
    const text = await response.text().catch(() => '');
    return new EwsApiError(parseProblem(text, response), {
      request,
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
    });
  }
}

/** True for an EwsApiError from any copy of the SDK (instanceof only knows its own copy). */
export function isEwsApiError(value: unknown): value is EwsApiError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

function parseProblem(text: string, response: Response): Problem {
  try {
    const body = JSON.parse(text) as Partial<Problem> | null;
    if (body && typeof body === 'object' && typeof body.error_code === 'string')
      return { ...body, status: typeof body.status === 'number' ? body.status : response.status } as Problem;
  } catch {
    // not JSON: described below
  }
  return {
    type: 'about:blank',
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    error_code: `http_${response.status}`,
    detail: text.slice(0, 500) || `HTTP ${response.status} without a problem body`,
  };
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
