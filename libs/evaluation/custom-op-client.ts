/**
 * The protocol between the service and a workspace's custom op (docs/ops.md):
 * POST <endpoint> {op, params, items: [{row_id, ...fields}]} -> 200 {results: [{row_id, score?, passed?, detail?, error?}]}.
 * The deploy check is GET <health_url> answering 2xx, or, without a health URL, the same POST
 * with an empty batch answering 2xx with `results: []`.
 */
import { outboundFetch } from '#libs/common/outbound.js';

export interface CustomOpEndpoint {
  endpoint_url: string;
  /** '' for the protocol probe. */
  health_url: string;
  timeout_ms: number;
  /** Sent as `Authorization: Bearer <secret>` when set. */
  secret: string | null;
}

export interface HealthCheck {
  healthy: boolean;
  status_code: number | null;
  latency_ms: number;
  /** Why it is not healthy (null when it is). */
  reason: string | null;
  method: 'GET' | 'POST';
  url: string;
}

const EXCERPT = 300;

export async function checkCustomOpHealth(
  endpoint: CustomOpEndpoint,
  op: string,
  doFetch: typeof fetch = outboundFetch,
): Promise<HealthCheck> {
  const probe = endpoint.health_url === '';
  const url = probe ? endpoint.endpoint_url : endpoint.health_url;
  const method = probe ? 'POST' : 'GET';
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(probe ? { 'content-type': 'application/json' } : {}),
    ...(endpoint.secret ? { authorization: `Bearer ${endpoint.secret}` } : {}),
  };
  const started = performance.now();
  const done = (status: number | null, reason: string | null): HealthCheck => ({
    healthy: reason === null,
    status_code: status,
    latency_ms: Math.round((performance.now() - started) * 10) / 10,
    reason,
    method,
    url,
  });
  try {
    const response = await doFetch(url, {
      method,
      headers,
      body: probe ? JSON.stringify({ op, params: {}, items: [] }) : undefined,
      signal: AbortSignal.timeout(endpoint.timeout_ms),
    });
    const text = await response.text();
    if (!response.ok)
      return done(response.status, `${method} ${url} answered ${response.status}: ${text.slice(0, EXCERPT)}`);
    if (!probe) return done(response.status, null);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return done(
        response.status,
        `POST ${url} answered ${response.status} with a body that is not JSON: ${text.slice(0, EXCERPT)}`,
      );
    }
    const results = (body as { results?: unknown } | null)?.results;
    return done(
      response.status,
      Array.isArray(results)
        ? null
        : 'the probe answer has no `results` array: the endpoint does not speak the custom op protocol (docs/ops.md)',
    );
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return done(null, `${method} ${url} did not answer within ${endpoint.timeout_ms} ms`);
    const cause = (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
    return done(null, `${method} ${url} failed: ${(error as Error).message}${cause}`);
  }
}

export interface CustomOpItem {
  row_id: string;
  input?: unknown;
  output: string | null;
  expected_output?: unknown;
  context?: unknown;
}

export interface CustomOpResult {
  row_id: string;
  score: number | null;
  passed: boolean | null;
  detail: Record<string, unknown> | null;
  error: string | null;
}

/** Sends one batch to a custom op; a failed call or a malformed answer gives every item an error (never a score). */
export async function invokeCustomOp(
  endpoint: CustomOpEndpoint,
  op: string,
  params: Record<string, unknown>,
  items: CustomOpItem[],
  signal?: AbortSignal,
  doFetch: typeof fetch = outboundFetch,
): Promise<CustomOpResult[]> {
  const failAll = (error: string) =>
    items.map((i) => ({ row_id: i.row_id, score: null, passed: null, detail: null, error }));
  try {
    const timeout = AbortSignal.timeout(endpoint.timeout_ms);
    const response = await doFetch(endpoint.endpoint_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(endpoint.secret ? { authorization: `Bearer ${endpoint.secret}` } : {}),
      },
      body: JSON.stringify({ op, params, items }),
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
    const text = await response.text();
    if (!response.ok) return failAll(`custom op ${op} answered ${response.status}: ${text.slice(0, EXCERPT)}`);
    const results = (JSON.parse(text) as { results?: unknown }).results;
    if (!Array.isArray(results)) return failAll(`custom op ${op} answered without a results array`);
    const byRow = new Map(
      results
        .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null)
        .map((r) => [String(r.row_id), r]),
    );
    return items.map((item) => {
      const r = byRow.get(item.row_id);
      if (!r)
        return {
          row_id: item.row_id,
          score: null,
          passed: null,
          detail: null,
          error: `custom op ${op} returned no result for this row`,
        };
      const score = typeof r.score === 'number' && Number.isFinite(r.score) ? r.score : null;
      const error =
        typeof r.error === 'string' && r.error
          ? r.error
          : score === null
            ? `custom op ${op} returned no numeric score`
            : null;
      return {
        row_id: item.row_id,
        score: error ? null : score,
        passed: typeof r.passed === 'boolean' ? r.passed : null,
        detail: typeof r.detail === 'object' && r.detail !== null ? (r.detail as Record<string, unknown>) : null,
        error,
      };
    });
  } catch (error) {
    const name = (error as Error).name;
    return failAll(
      name === 'TimeoutError'
        ? `custom op ${op} did not answer within ${endpoint.timeout_ms} ms`
        : `custom op ${op} failed: ${(error as Error).message}`,
    );
  }
}
