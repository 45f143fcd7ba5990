import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createClient,
  EwsApiError,
  isEwsApiError,
  pages,
  paginate,
  type ClientOptions,
  type Problem,
} from './typescript/src/index.js';

/**
 * The hand-written part of the SDK package (sdk/typescript/src) against a fetch stub: sign-in,
 * retries, errors, paging and multipart uploads. test/e2e/sdk/sdk-package.e2e-spec.ts runs the
 * built package against the service.
 */
type Call = {
  method: string;
  url: string;
  headers: Headers;
  body: string;
  redirect: RequestInit['redirect'];
  probe: unknown;
};
type Answer = { status?: number; body?: unknown; headers?: Record<string, string> };

const BASE = 'http://ews.test';
const WS = '7d3c1a52-8d4e-4b7a-9a43-0c6e2f5d7b18';

/** A client whose fetch records each request and answers from `route`. */
/** `probe` is read as each request leaves, before its body is. */
function stubbed(
  route: (call: Call, index: number) => Answer,
  options: Partial<ClientOptions> = { apiKey: 'ews_key' },
  probe: () => unknown = () => undefined,
) {
  const calls: Call[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const seen = probe();
    const call = {
      method: init.method ?? 'GET',
      url: String(input),
      headers: new Headers(init.headers),
      body: init.body == null ? '' : await new Response(init.body).text(),
      redirect: init.redirect,
      probe: seen,
    };
    calls.push(call);
    const { status = 200, body = {}, headers = {} } = route(call, calls.length - 1);
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(status === 204 ? null : text, {
      status,
      headers: {
        'Content-Type':
          typeof body === 'string' ? 'text/html' : status >= 400 ? 'application/problem+json' : 'application/json',
        ...headers,
      },
    });
  };
  const client = createClient({ baseUrl: `${BASE}/`, fetch, ...options } as ClientOptions);
  return { client, calls };
}

const problem = (status: number, error_code: string, extra: Record<string, unknown> = {}) => ({
  type: `/problems/${error_code}`,
  title: error_code,
  status,
  detail: `${error_code} happened`,
  error_code,
  request_id: 'req-1',
  ...extra,
});
const token = (n: number) => ({
  access_token: `tok-${n}`,
  token_type: 'bearer',
  expires_in: 3600,
  expires_at: '',
  user_id: 'u',
});

describe('SDK client', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('sends the API key on operations that need a token, the client headers on every one', async () => {
    const { client, calls } = stubbed(() => ({ body: { status: 'ok' } }), {
      apiKey: 'ews_key',
      headers: { 'User-Agent': 'ci-pipeline' },
    });
    await client.auth.getCurrentUser();
    await client.live.getLiveness();
    expect(calls.map((c) => [c.url, c.headers.get('authorization'), c.headers.get('user-agent')])).toEqual([
      [`${BASE}/auth/me`, 'Bearer ews_key', 'ci-pipeline'],
      [`${BASE}/live`, null, 'ci-pipeline'],
    ]);
    expect(() => createClient({ baseUrl: BASE } as ClientOptions)).toThrow(/apiKey, or email and password/);
  });

  it('signs in by password once for concurrent calls, and again before the token expires', async () => {
    let issued = 0;
    const { client, calls } = stubbed(
      (call) => (call.url.endsWith('/auth/token') ? { body: token(++issued) } : { body: {} }),
      { email: 'a@b.c', password: 'pw' },
    );
    await Promise.all([client.auth.getCurrentUser(), client.auth.getCurrentUser(), client.datasets.listDatasets()]);
    expect(calls.filter((c) => c.url.endsWith('/auth/token')).map((c) => JSON.parse(c.body))).toEqual([
      { email: 'a@b.c', password: 'pw' },
    ]);
    expect(calls.filter((c) => !c.url.endsWith('/auth/token')).map((c) => c.headers.get('authorization'))).toEqual([
      'Bearer tok-1',
      'Bearer tok-1',
      'Bearer tok-1',
    ]);

    // 59 minutes on: within the last minute of the hour, the next call signs in again.
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 59 * 60_000 + 1);
    await client.auth.getCurrentUser();
    expect(issued).toBe(2);
    expect(calls.at(-1)!.headers.get('authorization')).toBe('Bearer tok-2');
  });

  it('retries 429 and 503 as Retry-After asks, a bounded number of times', async () => {
    const flaky = stubbed((_, i) =>
      i === 0
        ? { status: 503, body: problem(503, 'service_unavailable'), headers: { 'Retry-After': '0' } }
        : { body: { items: [] } },
    );
    await expect(flaky.client.datasets.listDatasets()).resolves.toEqual({ items: [] });
    expect(flaky.calls).toHaveLength(2);

    const limited = stubbed(() => ({
      status: 429,
      body: problem(429, 'rate_limited'),
      headers: { 'Retry-After': '0' },
    }));
    const error = await limited.client.datasets.listDatasets().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EwsApiError);
    expect(error).toEqual(expect.objectContaining({ status: 429, errorCode: 'rate_limited', retryAfter: 0 }));
    expect(limited.calls).toHaveLength(3);

    const longWait = stubbed(() => ({
      status: 503,
      body: problem(503, 'service_unavailable'),
      headers: { 'Retry-After': new Date(Date.now() + 120_000).toUTCString() },
    }));
    await expect(longWait.client.datasets.listDatasets()).rejects.toEqual(
      expect.objectContaining({ status: 503, retryAfter: expect.any(Number) }),
    );
    expect(longWait.calls).toHaveLength(1);

    const never = stubbed(
      () => ({ status: 503, body: problem(503, 'service_unavailable'), headers: { 'Retry-After': '0' } }),
      { apiKey: 'k', retry: false },
    );
    await expect(never.client.datasets.listDatasets()).rejects.toBeInstanceOf(EwsApiError);
    expect(never.calls).toHaveLength(1);
  });

  it('throws EwsApiError carrying the problem for every answer outside 2xx', async () => {
    const { client } = stubbed((call) => {
      if (call.url.includes('/datasets/'))
        return {
          status: 404,
          body: problem(404, 'not_found', { request_id: undefined }),
          headers: { 'X-Request-Id': 'hdr-7' },
        };
      if (call.url.includes('page_size=1000'))
        return {
          status: 400,
          body: problem(400, 'validation_failed', {
            errors: [{ field: 'page_size', message: 'page_size must not be greater than 200' }],
          }),
        };
      return { status: 502, body: '<html>Bad gateway</html>' };
    });
    const missing = (await client.datasets.getDataset({ datasetId: WS }).catch((err: unknown) => err)) as EwsApiError;
    expect(missing).toEqual(
      expect.objectContaining({
        name: 'EwsApiError',
        status: 404,
        errorCode: 'not_found',
        requestId: 'hdr-7',
        request: `GET /datasets/${WS}`,
      }),
    );
    expect(missing.problem).toEqual(
      expect.objectContaining({ detail: 'not_found happened', type: '/problems/not_found' }),
    );
    expect(missing.message).toBe(`GET /datasets/${WS} answered 404 not_found: not_found happened`);

    const invalid = (await client.datasets
      .listDatasets({ page_size: 1000 })
      .catch((err: unknown) => err)) as EwsApiError;
    expect(invalid.errors).toEqual([{ field: 'page_size', message: 'page_size must not be greater than 200' }]);
    expect(invalid.problems).toEqual([]);
    expect(invalid.requestId).toBe('req-1');

    // An `…_invalid` error lists its problems one line each: `problems`, not field errors.
    const dimensions = new EwsApiError(
      problem(400, 'project_dimensions_invalid', { errors: ['dimensions[1].name: "topic" appears twice'] }) as Problem,
      { request: 'POST /projects' },
    );
    expect(dimensions.errors).toEqual([]);
    expect(dimensions.problems).toEqual(['dimensions[1].name: "topic" appears twice']);

    const gateway = (await client.live.getLiveness().catch((err: unknown) => err)) as EwsApiError;
    expect(gateway).toEqual(expect.objectContaining({ status: 502, errorCode: 'http_502' }));
    expect(gateway.problem.detail).toBe('<html>Bad gateway</html>');

    // The other build's class (ESM beside CommonJS) is recognised by its brand.
    expect(isEwsApiError(missing)).toBe(true);
    expect(isEwsApiError({ ...missing, [Symbol.for('@ews/sdk/EwsApiError')]: true })).toBe(true);
    expect(isEwsApiError(new Error('x'))).toBe(false);
  });

  it('pages through a list operation until the total, one request a page', async () => {
    const all = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name }));
    const { client, calls } = stubbed((call) => {
      const query = new URL(call.url).searchParams;
      const page = Number(query.get('page'));
      const size = Number(query.get('page_size'));
      return { body: { items: all.slice((page - 1) * size, page * size), total: all.length, page, page_size: size } };
    });
    const names: string[] = [];
    for await (const dataset of paginate(client.datasets.listDatasets, { workspace_id: WS, page_size: 2 }))
      names.push(dataset.name);
    expect(names).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(calls.map((c) => new URL(c.url).search)).toEqual(
      [1, 2, 3].map((p) => `?workspace_id=${WS}&page_size=2&page=${p}`),
    );

    const sizes: number[] = [];
    for await (const page of pages(client.datasets.listDatasets, { page: 2, page_size: 4 }))
      sizes.push(page.items.length);
    expect(sizes).toEqual([1]);
  });

  it('uploads multipart bodies: a path read from disk, bytes retried, a stream sent as it is read and never retried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-upload-'));
    try {
      const path = join(dir, 'questions.csv');
      writeFileSync(path, 'question,answer\nWhat is 2+2?,4\n');
      let failFirst = true;
      const { client, calls } = stubbed(() =>
        failFirst && !(failFirst = false)
          ? { status: 503, body: problem(503, 'service_unavailable'), headers: { 'Retry-After': '0' } }
          : { status: 201, body: { id: 'd1' } },
      );

      await expect(
        client.uploadDataset({
          workspaceId: WS,
          file: path,
          fields: { name: 'qa', tags: ['x', 'y'], description: undefined },
        }),
      ).resolves.toEqual({ id: 'd1' });
      expect(calls).toHaveLength(2); // a file is sent again after 503
      const [first, second] = calls;
      expect(first.body).toBe(second.body);
      expect(first.url).toBe(`${BASE}/datasets/upload?workspace_id=${WS}`);
      const boundary = first.headers.get('content-type')!.match(/^multipart\/form-data; boundary=(.+)$/)![1];
      expect(first.body).toBe(
        `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nqa\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n["x","y"]\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="questions.csv"\r\nContent-Type: application/octet-stream\r\n\r\n` +
          `question,answer\nWhat is 2+2?,4\n\r\n--${boundary}--\r\n`,
      );
      expect(first.headers.get('authorization')).toBe('Bearer ews_key');
      // Following a redirect, Node's fetch would keep the whole body sent in memory.
      expect(first.redirect).toBe('error');

      await client.uploadTraceFile({
        workspaceId: WS,
        file: new TextEncoder().encode('{"resourceSpans":[]}'),
        filename: 'spans "a".json',
        contentType: 'application/json',
      });
      expect(calls.at(-1)!.body).toContain(
        'name="file"; filename="spans %22a%22.json"\r\nContent-Type: application/json\r\n\r\n{"resourceSpans":[]}\r\n',
      );
      await expect(client.uploadDataset({ workspaceId: WS, file: new Uint8Array([1]) })).rejects.toThrow(
        /pass `filename`/,
      );

      // A stream: nothing is read from it before the request leaves, and a 503 is thrown, not retried.
      let pulled = 0;
      async function* rows() {
        for (const line of ['q,a\n', 'one,1\n', 'two,2\n']) {
          pulled++;
          yield line;
        }
      }
      const refusing = stubbed(
        () => ({ status: 503, body: problem(503, 'service_unavailable'), headers: { 'Retry-After': '0' } }),
        { apiKey: 'k' },
        () => pulled,
      );
      await expect(
        refusing.client.uploadDataset({ workspaceId: WS, file: rows(), filename: 'rows.csv' }),
      ).rejects.toEqual(expect.objectContaining({ status: 503 }));
      expect(refusing.calls.map((c) => c.probe)).toEqual([0]);
      expect(refusing.calls[0].body).toContain(
        'filename="rows.csv"\r\nContent-Type: application/octet-stream\r\n\r\nq,a\none,1\ntwo,2\n\r\n--',
      );

      const web = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('q,a\n'));
          controller.close();
        },
      });
      await client.uploadDataset({ workspaceId: WS, file: web, filename: 'web.csv' });
      expect(calls.at(-1)!.body).toContain(
        'filename="web.csv"\r\nContent-Type: application/octet-stream\r\n\r\nq,a\n\r\n--',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
