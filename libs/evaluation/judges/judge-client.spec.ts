import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { grade, PROBE, probeJudge } from './grade.js';
import { backoffMs, callJudge, parseRetryAfter } from './judge-client.js';
import type { JudgeConnection } from './judge.types.js';
import type { JudgeMessage } from './providers.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Reply = (req: Received, res: ServerResponse, index: number) => void;

const KEY = 'sk-test-SECRET-0123456789';
const noSleep = async () => {};
const messages: JudgeMessage[] = [
  { role: 'system', content: 'You are a judge.' },
  { role: 'user', content: 'Grade this.' },
];

let server: Server;
let base: string;
let received: Received[] = [];
let reply: Reply = (_req, res) => res.end();

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const openAiAnswer = (content: string) => ({
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 42, completion_tokens: 7 },
});

function conn(overrides: Partial<JudgeConnection> = {}): JudgeConnection {
  return {
    provider: 'openai_compatible',
    base_url: `${base}/v1/`,
    model: 'judge-model',
    parameters: { temperature: 0 },
    json_mode: true,
    timeout_ms: 2000,
    max_attempts: 3,
    ...overrides,
  };
}

const bodyOf = (r: Received): Record<string, unknown> => JSON.parse(r.body);

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      reply(r, res, received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
});

describe('openai_compatible', () => {
  it('posts to /chat/completions with a bearer key, passed-through parameters and json_object', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('{"score": 4}'));
    const result = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(result).toMatchObject({
      ok: true,
      status_code: 200,
      attempts: 1,
      text: '{"score": 4}',
      usage: { prompt_tokens: 42, completion_tokens: 7 },
      error: null,
      response_excerpt: null,
    });
    expect(result.latency_ms).toBeGreaterThan(0);
    expect(Math.round(result.latency_ms * 10) / 10).toBe(result.latency_ms);
    expect(received).toHaveLength(1);
    expect(received[0].method).toBe('POST');
    expect(received[0].url).toBe('/v1/chat/completions');
    expect(received[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(received[0].headers['content-type']).toBe('application/json');
    expect(bodyOf(received[0])).toEqual({
      model: 'judge-model',
      messages,
      temperature: 0,
      max_tokens: 512,
      response_format: { type: 'json_object' },
    });
  });

  it('sends no authorization without a key, no response_format without json_mode, and a configured max_tokens', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('ok'));
    const result = await callJudge(conn({ json_mode: false, parameters: { max_tokens: 64 } }), null, messages);
    expect(result.ok).toBe(true);
    expect(received[0].headers.authorization).toBeUndefined();
    expect(bodyOf(received[0])).toEqual({ model: 'judge-model', messages, max_tokens: 64 });
  });
});

describe('azure_openai', () => {
  it('posts to the deployment with api-key and api-version, without a model in the body', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('{"score": 5}'));
    const result = await callJudge(
      conn({ provider: 'azure_openai', base_url: `${base}/`, model: 'gpt 4o judge', api_version: null }),
      KEY,
      messages,
    );
    expect(result).toMatchObject({
      ok: true,
      text: '{"score": 5}',
      usage: { prompt_tokens: 42, completion_tokens: 7 },
    });
    expect(received[0].url).toBe('/openai/deployments/gpt%204o%20judge/chat/completions?api-version=2024-10-21');
    expect(received[0].headers['api-key']).toBe(KEY);
    expect(received[0].headers.authorization).toBeUndefined();
    expect(bodyOf(received[0])).toEqual({
      messages,
      temperature: 0,
      max_tokens: 512,
      response_format: { type: 'json_object' },
    });
  });

  it('uses a configured api_version', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('x'));
    await callJudge(
      conn({ provider: 'azure_openai', base_url: base, model: 'd', api_version: '2025-01-01-preview' }),
      KEY,
      messages,
    );
    expect(received[0].url).toBe('/openai/deployments/d/chat/completions?api-version=2025-01-01-preview');
  });
});

describe('anthropic', () => {
  const anthropic = (overrides: Partial<JudgeConnection> = {}) =>
    conn({ provider: 'anthropic', base_url: base, model: 'claude-judge', ...overrides });

  it('posts to /v1/messages with x-api-key and anthropic-version, system split out, the turn prefilled with "{"', async () => {
    reply = (_r, res) =>
      json(res, 200, {
        content: [{ type: 'text', text: '"score": 4, "reason": "ok"}' }],
        usage: { input_tokens: 30, output_tokens: 9 },
      });
    const result = await callJudge(anthropic(), KEY, messages);
    expect(result).toMatchObject({
      ok: true,
      text: '{"score": 4, "reason": "ok"}',
      usage: { prompt_tokens: 30, completion_tokens: 9 },
    });
    expect(received[0].url).toBe('/v1/messages');
    expect(received[0].headers['x-api-key']).toBe(KEY);
    expect(received[0].headers['anthropic-version']).toBe('2023-06-01');
    expect(received[0].headers.authorization).toBeUndefined();
    expect(bodyOf(received[0])).toEqual({
      model: 'claude-judge',
      max_tokens: 512,
      temperature: 0,
      system: 'You are a judge.',
      messages: [
        { role: 'user', content: 'Grade this.' },
        { role: 'assistant', content: '{' },
      ],
    });
  });

  it('without json_mode: no prefill, no system when there is none, text blocks concatenated and others ignored', async () => {
    reply = (_r, res) =>
      json(res, 200, {
        content: [
          { type: 'text', text: 'Score: ' },
          { type: 'tool_use', id: 't', name: 'x', input: {} },
          { type: 'text', text: '4' },
        ],
        usage: { input_tokens: 3, output_tokens: 2 },
      });
    const result = await callJudge(anthropic({ json_mode: false }), KEY, [{ role: 'user', content: 'hi' }]);
    expect(result.text).toBe('Score: 4');
    expect(bodyOf(received[0])).toEqual({
      model: 'claude-judge',
      max_tokens: 512,
      temperature: 0,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('a reply without text blocks is malformed_response', async () => {
    reply = (_r, res) => json(res, 200, { content: [], usage: { input_tokens: 3, output_tokens: 0 } });
    const result = await callJudge(anthropic(), KEY, messages);
    expect(result).toMatchObject({
      ok: false,
      status_code: 200,
      error: { code: 'malformed_response' },
      response_excerpt: '{"content":[],"usage":{"input_tokens":3,"output_tokens":0}}',
      text: null,
    });
  });
});

describe('failures and retries', () => {
  it('retries a 503 and succeeds on the second attempt', async () => {
    reply = (_r, res, i) =>
      i === 0 ? json(res, 503, { error: 'overloaded' }) : json(res, 200, openAiAnswer('{"score": 3}'));
    const result = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(result).toMatchObject({
      ok: true,
      attempts: 2,
      status_code: 200,
      text: '{"score": 3}',
      error: null,
      response_excerpt: null,
    });
    expect(received).toHaveLength(2);
  });

  it('honours Retry-After: 0 on a 429', async () => {
    const sleeps: number[] = [];
    reply = (_r, res, i) =>
      i === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '0' }) : json(res, 200, openAiAnswer('ok'));
    const result = await callJudge(conn(), KEY, messages, { sleep: async (ms) => void sleeps.push(ms) });
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(sleeps).toEqual([0]);
  });

  it('gives up after max_attempts with the last status and body excerpt', async () => {
    const sleeps: number[] = [];
    reply = (_r, res) => json(res, 500, 'internal error');
    const result = await callJudge(conn({ max_attempts: 3 }), KEY, messages, {
      sleep: async (ms) => void sleeps.push(ms),
    });
    expect(result).toMatchObject({
      ok: false,
      attempts: 3,
      status_code: 500,
      text: null,
      error: { code: 'http_status', message: 'the judge answered HTTP 500' },
      response_excerpt: 'internal error',
    });
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeLessThanOrEqual(500);
    expect(sleeps[1]).toBeLessThanOrEqual(1000);
  });

  it('does not retry a 400, and caps the excerpt at 4096 characters', async () => {
    reply = (_r, res) => json(res, 400, 'x'.repeat(5000));
    const result = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(result).toMatchObject({ ok: false, attempts: 1, status_code: 400, error: { code: 'http_status' } });
    expect(result.response_excerpt).toHaveLength(4096);
  });

  it('a slow answer is a timeout, retried like any other', async () => {
    reply = (_r, res) => {
      const timer = setTimeout(() => json(res, 200, openAiAnswer('late')), 1000);
      res.on('close', () => clearTimeout(timer));
    };
    const once = await callJudge(conn({ timeout_ms: 100, max_attempts: 1 }), KEY, messages);
    expect(once).toMatchObject({
      ok: false,
      attempts: 1,
      status_code: null,
      error: { code: 'timeout' },
      response_excerpt: null,
    });
    expect(once.latency_ms).toBeGreaterThanOrEqual(90);
    expect(once.latency_ms).toBeLessThan(900);
    const twice = await callJudge(conn({ timeout_ms: 100, max_attempts: 2 }), KEY, messages, { sleep: noSleep });
    expect(twice).toMatchObject({ attempts: 2, error: { code: 'timeout' } });
  });

  it('an unreachable server is a network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await callJudge(conn({ base_url: `http://127.0.0.1:${port}`, max_attempts: 2 }), KEY, messages, {
      sleep: noSleep,
    });
    expect(result).toMatchObject({ ok: false, attempts: 2, status_code: null, error: { code: 'network' } });
    expect(result.error?.message).toContain('the judge could not be reached');
  });

  it('a body that is not JSON, or JSON without the answer, is malformed_response and not retried', async () => {
    reply = (_r, res) => json(res, 200, '<html>gateway</html>');
    const notJson = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(notJson).toMatchObject({
      ok: false,
      attempts: 1,
      status_code: 200,
      error: { code: 'malformed_response' },
      response_excerpt: '<html>gateway</html>',
    });
    reply = (_r, res) => json(res, 200, { choices: [{ message: { content: null, refusal: 'no' } }] });
    const noText = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(noText.error).toEqual({
      code: 'malformed_response',
      message: 'the judge answer has no text at choices[0].message.content',
    });
  });

  it('an aborted signal is cancelled, before the call, mid-flight and during backoff', async () => {
    const before = await callJudge(conn(), KEY, messages, { signal: AbortSignal.abort() });
    expect(before).toMatchObject({ ok: false, attempts: 0, error: { code: 'cancelled' } });
    expect(received).toHaveLength(0);

    reply = (_r, res) => {
      const timer = setTimeout(() => json(res, 200, openAiAnswer('late')), 1000);
      res.on('close', () => clearTimeout(timer));
    };
    const midFlight = await callJudge(conn(), KEY, messages, { signal: AbortSignal.timeout(50) });
    expect(midFlight).toMatchObject({ ok: false, attempts: 1, error: { code: 'cancelled' } });

    reply = (_r, res) => json(res, 503, 'busy');
    const controller = new AbortController();
    const duringBackoff = await callJudge(conn(), KEY, messages, {
      signal: controller.signal,
      sleep: async () => controller.abort(),
    });
    expect(duringBackoff).toMatchObject({ ok: false, attempts: 1, error: { code: 'cancelled' } });
  });

  it('never lets the key into the result, even when the provider echoes it', async () => {
    reply = (_r, res) => json(res, 401, { error: { message: `Incorrect API key provided: ${KEY}` } });
    const failed = await callJudge(conn(), KEY, messages, { sleep: noSleep });
    expect(failed.error?.code).toBe('http_status');
    expect(failed.response_excerpt).toContain('Incorrect API key provided: [redacted]');
    expect(JSON.stringify(failed)).not.toContain(KEY);
    reply = (_r, res) => json(res, 200, openAiAnswer('{"score": 4}'));
    for (const provider of ['openai_compatible', 'azure_openai', 'anthropic'] as const) {
      expect(JSON.stringify(await callJudge(conn({ provider }), KEY, messages))).not.toContain(KEY);
    }
  });
});

describe('backoff', () => {
  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter(' 7 ')).toBe(7000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it('draws full jitter under a doubling ceiling capped at 10 s, and caps Retry-After too', () => {
    for (let i = 0; i < 50; i++) {
      expect(backoffMs(1, null)).toBeLessThanOrEqual(500);
      expect(backoffMs(3, null)).toBeLessThanOrEqual(2000);
      expect(backoffMs(20, null)).toBeLessThanOrEqual(10_000);
    }
    expect(backoffMs(1, 3000)).toBe(3000);
    expect(backoffMs(1, 60_000)).toBe(10_000);
  });
});

describe('grade and probeJudge', () => {
  it('grades end to end: rubric rendered into the user turn, verdict parsed from a fenced answer', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('Sure.\n```json\n{"score": 4, "reason": "close"}\n```'));
    const result = await grade(
      conn(),
      KEY,
      'Is "{{output}}" right for {{input}}?',
      { type: 'numeric', min: 1, max: 5 },
      { input: 'Q', output: 'A' },
    );
    expect(result.error).toBeNull();
    expect(result.verdict).toEqual({ score: 4, label: null, reason: 'close', normalized: 0.75 });
    const sent = bodyOf(received[0]).messages as JudgeMessage[];
    expect(sent[1]).toEqual({ role: 'user', content: 'Is "A" right for Q?' });
    expect(sent[0].content).toContain('"score": <number between 1 and 5>');
  });

  it('reports an unparseable or off-scale answer with the call kept', async () => {
    reply = (_r, res) => json(res, 200, openAiAnswer('I cannot grade this (error 500)'));
    const unparseable = await grade(conn(), KEY, 'x', { type: 'numeric', min: 1, max: 5 }, { output: 'o' });
    expect(unparseable).toMatchObject({ verdict: null, error: { code: 'unparseable_verdict' }, call: { ok: true } });
    reply = (_r, res) => json(res, 200, openAiAnswer('{"label": "maybe"}'));
    const offScale = await grade(conn(), KEY, 'x', { type: 'labels', labels: ['pass', 'fail'] }, { output: 'o' });
    expect(offScale).toMatchObject({ verdict: null, error: { code: 'off_scale' } });
  });

  it('a failed call gives no verdict and the call error code', async () => {
    reply = (_r, res) => json(res, 503, 'busy');
    const result = await grade(
      conn({ max_attempts: 2 }),
      KEY,
      'x',
      { type: 'numeric', min: 1, max: 5 },
      { output: 'o' },
      { sleep: noSleep },
    );
    expect(result).toMatchObject({
      verdict: null,
      error: { code: 'http_status', message: 'the judge answered HTTP 503' },
      call: { attempts: 2 },
    });
  });

  it('probeJudge sends the fixed probe and returns latency and the parsed answer', async () => {
    reply = (_r, res) =>
      json(res, 200, {
        content: [{ type: 'text', text: '"score": 5, "reason": "correct"}' }],
        usage: { input_tokens: 50, output_tokens: 8 },
      });
    const result = await probeJudge(conn({ provider: 'anthropic', base_url: base }), KEY);
    expect(result.verdict).toEqual({ score: 5, label: null, reason: 'correct', normalized: 1 });
    expect(result.call.latency_ms).toBeGreaterThan(0);
    const body = bodyOf(received[0]);
    expect((body.messages as JudgeMessage[])[0]).toEqual({ role: 'user', content: PROBE.rubric });
    expect(body.system).toContain('"score": <number between 1 and 5>');
  });
});
