/**
 * The protocol between the service and a workspace's custom op (docs/ops.md):
 * POST <endpoint> {op, params, items: [{row_id, ...fields}]} -> 200 {results: [{row_id, score?, passed?, detail?, error?}]}.
 * The deploy check is GET <health_url> answering 2xx, or, without a health URL, the same POST
 * with an empty batch answering 2xx with `results: []`.
 */

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

export async function checkCustomOpHealth(endpoint: CustomOpEndpoint, op: string, doFetch: typeof fetch = fetch): Promise<HealthCheck> {
  const probe = endpoint.health_url === '';
  const url = probe ? endpoint.endpoint_url : endpoint.health_url;
  const method = probe ? 'POST' : 'GET';
  const headers: Record<string, string> = { accept: 'application/json', ...(probe ? { 'content-type': 'application/json' } : {}), ...(endpoint.secret ? { authorization: `Bearer ${endpoint.secret}` } : {}) };
  const started = performance.now();
  const done = (status: number | null, reason: string | null): HealthCheck => ({ healthy: reason === null, status_code: status, latency_ms: Math.round((performance.now() - started) * 10) / 10, reason, method, url });
  try {
    const response = await doFetch(url, { method, headers, body: probe ? JSON.stringify({ op, params: {}, items: [] }) : undefined, signal: AbortSignal.timeout(endpoint.timeout_ms) });
    const text = await response.text();
    if (!response.ok) return done(response.status, `${method} ${url} answered ${response.status}: ${text.slice(0, EXCERPT)}`);
    if (!probe) return done(response.status, null);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return done(response.status, `POST ${url} answered ${response.status} with a body that is not JSON: ${text.slice(0, EXCERPT)}`);
    }
    const results = (body as { results?: unknown } | null)?.results;
    return done(response.status, Array.isArray(results) ? null : 'the probe answer has no `results` array: the endpoint does not speak the custom op protocol (docs/ops.md)');
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return done(null, `${method} ${url} did not answer within ${endpoint.timeout_ms} ms`);
    const cause = (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
    return done(null, `${method} ${url} failed: ${(error as Error).message}${cause}`);
  }
}
