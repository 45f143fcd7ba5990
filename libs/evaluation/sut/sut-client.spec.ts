import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outboundRequest } from '#libs/common/outbound.js';
import { defaultAdapter } from './adapter.js';
import { callSut } from './sut-client.js';
import type { AdapterSpec, ConnectionSpec, RetryPolicy, RowContext } from './sut.types.js';

const row: RowContext = { row_id: 'r1', data: { q: 'hi' }, input: 'hi' };
const adapter: AdapterSpec = {
  ...defaultAdapter('http'),
  response: { language: 'jsonpath', output: '$.output', usage: { total_tokens: '$.usage.total' } },
};
const fastRetry: RetryPolicy = {
  max_attempts: 3,
  initial_backoff_ms: 1,
  max_backoff_ms: 5,
  retry_on_status: [429, 500, 503],
  retry_on_timeout: true,
};

/** Calls per route key, so a route can fail first and succeed later. */
const hits = new Map<string, number>();
const pendingTimers = new Set<NodeJS.Timeout>();
let server: Server;
let baseUrl: string;

function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const key = url.searchParams.get('id') ?? url.pathname;
  const count = (hits.get(key) ?? 0) + 1;
  hits.set(key, count);
  switch (url.pathname) {
    case '/ok':
      return reply(res, 200, JSON.stringify({ output: `echo ${JSON.parse(body).input}`, usage: { total: 'n/a' } }));
    case '/auth':
      return reply(res, 200, JSON.stringify({ output: req.headers['x-api-key'] ?? null }));
    case '/slow': {
      const timer = setTimeout(() => reply(res, 200, JSON.stringify({ output: 'late' })), 3000);
      pendingTimers.add(timer);
      return;
    }
    case '/flaky':
      return count === 1 ? reply(res, 500, 'boom') : reply(res, 200, JSON.stringify({ output: 'second time' }));
    case '/limited':
      return count === 1
        ? reply(res, 429, '{"error":"slow down"}', { 'retry-after': url.searchParams.get('after') ?? '0' })
        : reply(res, 200, JSON.stringify({ output: 'after wait' }));
    case '/moved':
      return reply(res, 307, '', { location: `/ok?id=${key}-after` });
    case '/down':
      return reply(res, 500, 'x'.repeat(5000));
    case '/not-json':
      return reply(res, 200, '<html>oops');
    case '/no-output':
      return reply(res, 200, JSON.stringify({ result: 'elsewhere' }));
    default:
      return reply(res, 404, '{}');
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const timer of pendingTimers) clearTimeout(timer);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const conn = (path: string, overrides: Partial<ConnectionSpec> = {}): ConnectionSpec => ({
  kind: 'http',
  http: { url: `${baseUrl}${path}`, method: 'POST', headers: {} },
  auth: null,
  timeout_ms: 2000,
  max_concurrency: 1,
  requests_per_second: null,
  retry: fastRetry,
  ...overrides,
});

describe('callSut against a local server', () => {
  it('follows a redirect as fetch would, the body sent again to the new address', async () => {
    const result = await callSut(conn('/moved'), adapter, row, { secret: null });
    expect(result).toMatchObject({ ok: true, status_code: 200, attempts: 1, extracted: { output: 'echo hi' } });
    expect(hits.get('/moved-after')).toBe(1);
  });

  it('a fast 200 is extracted; usage issues do not fail the call', async () => {
    const result = await callSut(conn('/ok'), adapter, row, { secret: null });
    expect(result).toMatchObject({ ok: true, status_code: 200, attempts: 1, error: null, response_excerpt: null });
    expect(result.extracted).toEqual({
      output: 'echo hi',
      usage: { prompt_tokens: null, completion_tokens: null, total_tokens: null },
      cost_usd: null,
      extras: {},
      trajectory: null,
    });
    expect(result.latency_ms).toBeGreaterThan(0);
    expect(Math.round(result.latency_ms * 10)).toBe(result.latency_ms * 10);
    expect(result.request).toEqual({
      method: 'POST',
      url: `${baseUrl}/ok`,
      headers: { 'content-type': 'application/json' },
      body: { input: 'hi' },
    });
  });

  it('an answer slower than the timeout is a timeout, retried per the policy', async () => {
    const result = await callSut(
      conn('/slow', { timeout_ms: 100, retry: { ...fastRetry, max_attempts: 2 } }),
      adapter,
      row,
      { secret: null },
    );
    expect(result).toMatchObject({
      ok: false,
      status_code: null,
      attempts: 2,
      extracted: null,
      error: { code: 'timeout' },
    });
    expect(result.latency_ms).toBeGreaterThanOrEqual(190);
    const once = await callSut(
      conn('/slow', { timeout_ms: 50, retry: { ...fastRetry, retry_on_timeout: false } }),
      adapter,
      row,
      { secret: null },
    );
    expect(once).toMatchObject({ attempts: 1, error: { code: 'timeout' } });
  });

  it('a 500 then a 200 succeeds on the second attempt', async () => {
    const result = await callSut(conn('/flaky?id=flaky1'), adapter, row, { secret: null });
    expect(result).toMatchObject({ ok: true, status_code: 200, attempts: 2, extracted: { output: 'second time' } });
  });

  it('a 429 with Retry-After: 0 waits 0 ms; a long Retry-After is capped at max_backoff_ms', async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    expect(await callSut(conn('/limited?id=l1&after=0'), adapter, row, { secret: null, sleep })).toMatchObject({
      ok: true,
      attempts: 2,
    });
    expect(await callSut(conn('/limited?id=l2&after=120'), adapter, row, { secret: null, sleep })).toMatchObject({
      ok: true,
      attempts: 2,
    });
    const past = new Date(Date.now() - 60_000).toUTCString();
    expect(
      await callSut(conn(`/limited?id=l3&after=${encodeURIComponent(past)}`), adapter, row, { secret: null, sleep }),
    ).toMatchObject({ ok: true, attempts: 2 });
    expect(waits).toEqual([0, 5, 0]);
  });

  it('backs off with full jitter below the doubled, capped backoff', async () => {
    const waits: number[] = [];
    const result = await callSut(
      conn('/down', { retry: { ...fastRetry, max_attempts: 4, initial_backoff_ms: 2, max_backoff_ms: 6 } }),
      adapter,
      row,
      { secret: null, sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toMatchObject({
      ok: false,
      status_code: 500,
      attempts: 4,
      error: { code: 'http_status', message: expect.stringContaining('500') },
    });
    expect(result.response_excerpt).toHaveLength(4096);
    expect(waits).toHaveLength(3);
    [2, 4, 6].forEach((ceiling, index) => {
      expect(waits[index]).toBeGreaterThanOrEqual(0);
      expect(waits[index]).toBeLessThanOrEqual(ceiling);
    });
  });

  it('a status not in retry_on_status is not retried', async () => {
    const result = await callSut(conn('/down', { retry: { ...fastRetry, retry_on_status: [503] } }), adapter, row, {
      secret: null,
    });
    expect(result).toMatchObject({ attempts: 1, status_code: 500, error: { code: 'http_status' } });
  });

  it('a body that is not JSON is response_not_json with an excerpt', async () => {
    const result = await callSut(conn('/not-json'), adapter, row, { secret: null });
    expect(result).toMatchObject({
      ok: false,
      status_code: 200,
      attempts: 1,
      error: { code: 'response_not_json' },
      response_excerpt: '<html>oops',
    });
  });

  it('a 200 without the output is extraction_failed with the issues', async () => {
    const result = await callSut(conn('/no-output'), adapter, row, { secret: null });
    expect(result).toMatchObject({
      ok: false,
      status_code: 200,
      error: { code: 'extraction_failed', message: expect.stringContaining('$.output') },
      response_excerpt: '{"result":"elsewhere"}',
    });
    expect(result.error?.issues?.map((issue) => issue.pointer)).toEqual([
      '/response/output',
      '/response/usage/total_tokens',
    ]);
  });

  it('sends the secret in its header and shows it redacted', async () => {
    const result = await callSut(
      conn('/auth', { auth: { secret_id: 'k', scheme: 'header', header: 'X-Api-Key' } }),
      adapter,
      row,
      { secret: 'top-secret' },
    );
    expect(result.extracted?.output).toBe('top-secret');
    expect(result.request.headers['x-api-key']).toBe('***');
    expect(JSON.stringify(result.request)).not.toContain('top-secret');
  });

  it('is cancelled by the caller’s signal, during a call or before it', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = await callSut(conn('/slow', { timeout_ms: 5000 }), adapter, row, {
      secret: null,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { code: 'cancelled' } });
    expect(result.latency_ms).toBeLessThan(2000);
    expect(await callSut(conn('/ok'), adapter, row, { secret: null, signal: AbortSignal.abort() })).toMatchObject({
      attempts: 0,
      error: { code: 'cancelled' },
    });
  });

  it('a cancel during the backoff stops the retries', async () => {
    const controller = new AbortController();
    const result = await callSut(
      conn('/limited?id=c1&after=100', { retry: { ...fastRetry, max_backoff_ms: 10_000 } }),
      adapter,
      row,
      {
        secret: null,
        signal: controller.signal,
        // Aborted once the 429 is in (inside the 10 s backoff), however long the call itself took.
        request: async (url, init) => {
          const response = await outboundRequest(url, init);
          setTimeout(() => controller.abort(), 200);
          return response;
        },
      },
    );
    expect(result).toMatchObject({ attempts: 1, status_code: 429, error: { code: 'cancelled' } });
    expect(result.latency_ms).toBeLessThan(5000);
  });

  it('network errors are retried and reported; render problems fail before any call', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const network = await callSut(
      { ...conn('/'), http: { url: `http://127.0.0.1:${port}/`, method: 'POST', headers: {} } },
      adapter,
      row,
      { secret: null },
    );
    expect(network).toMatchObject({ ok: false, status_code: null, attempts: 3, error: { code: 'network' } });

    const rendered = await callSut(conn('/ok'), { ...adapter, request: { body: { x: '{{row.missing}}' } } }, row, {
      secret: null,
    });
    expect(rendered).toMatchObject({
      ok: false,
      attempts: 0,
      latency_ms: 0,
      error: { code: 'render_failed', issues: [{ pointer: '/request/body/x', code: 'missing_value' }] },
    });
  });
});
