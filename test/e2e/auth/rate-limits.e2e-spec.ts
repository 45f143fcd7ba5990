import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Response } from 'supertest';
import { OtlpGrpcReceiver } from '#src/modules/traces/otlp-grpc.receiver.js';
import { describeOn } from '../../utils/database-mode.js';
import {
  agentTrace,
  binary,
  grpcExport,
  otlpJson,
  otlpProtobuf,
  readRpcStatus,
  recordTraces,
  retryDelayOf,
} from '../../utils/otel-traces.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { deleteQueueKeys, TEST_REDIS_URL, uniqueQueuePrefix } from '../queue/support/worker-context.js';

type Auth = Record<string, string>;

/** The `RateLimit` field's remaining requests and reset seconds, checked against its policy's name. */
function remaining(res: Response, policy: string): { r: number; t: number } {
  const match = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(res.headers['ratelimit'] ?? '');
  if (!match) throw new Error(`RateLimit of ${res.status} is ${res.headers['ratelimit']}, not of policy ${policy}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

/** A 429 of the limiter: the problem, its Retry-After equal to the window's reset, the headers at zero. */
function expectLimited(res: Response, policy: string, quota: number): void {
  expectProblem(res, 429, 'rate_limit_exceeded');
  const { r, t } = remaining(res, policy);
  expect(r).toBe(0);
  expect(t).toBeGreaterThanOrEqual(1);
  expect(t).toBeLessThanOrEqual(60);
  expect(res.headers['retry-after']).toBe(String(t));
  expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${quota};w=60`);
  expect(res.body).toEqual(
    expect.objectContaining({ policy, quota, window_seconds: 60, retry_after_seconds: t, detail: expect.any(String) }),
  );
  expect(res.body.detail).toMatch(new RegExp(`^Too many ${policy} requests: .* may send ${quota} in 60 s; retry in`));
}

describe('rate limits per caller and class (RateLimit headers, 429 with Retry-After)', () => {
  let t: TestApp;
  let user: { email: string; password: string };
  let owner: Auth;
  let key1: Auth;
  let key2: Auth;
  const limits = {
    TRUSTED_PROXIES: 'loopback',
    RATE_LIMIT_WINDOW_SECONDS: '60',
    RATE_LIMIT_READ: '5',
    RATE_LIMIT_WRITE: '5',
    RATE_LIMIT_INGESTION: '3',
    RATE_LIMIT_LOGIN: '3',
  };

  beforeAll(async () => {
    t = await startTestApp(limits);
    const actor = await t.factory.actor();
    user = actor;
    owner = actor.auth;
    const workspace = await t.factory.newWorkspace(actor);
    const newKey = async (name: string): Promise<Auth> => {
      const res = await t.http
        .post(`/workspaces/${workspace.id}/api-keys`)
        .set(owner)
        .send({ name, role: 'member' })
        .expect(201);
      return { Authorization: `Bearer ${res.body.key}` };
    };
    key1 = await newKey('ci-pipeline');
    key2 = await newKey('trace-exporter');
  });
  afterAll(async () => {
    await t?.close();
  });

  it("counts a key's reads down to 429; another key, the user and the key's other classes keep budgets of their own", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.http.get('/auth/me').set(key1).expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"read";q=5;w=60');
      expect(remaining(res, 'read').r).toBe(4 - i);
    }
    expectLimited(await t.http.get('/auth/me').set(key1), 'read', 5);
    // Still refused: a refusal does not reset the window.
    expectLimited(await t.http.get('/auth/me').set(key1), 'read', 5);

    expect(remaining(await t.http.get('/auth/me').set(key2).expect(200), 'read').r).toBe(4);
    expect(remaining(await t.http.get('/auth/me').set(owner).expect(200), 'read').r).toBe(4);
    const exported = await t.http
      .post('/v1/traces')
      .set({ ...key1, 'x-ews-dataset': 'rate-limited-traces' })
      .send(otlpJson(recordTraces([agentTrace('s-1', 'What is the refund window?')])))
      .expect(200);
    expect(remaining(exported, 'ingestion').r).toBe(2);
    // The owner made two writes (the keys); an error answer is counted and carries the headers too.
    const created = await t.http.post('/workspaces').set(owner).send({ name: 'Rate limited' }).expect(201);
    expect(remaining(created, 'write').r).toBe(2);
    const refused = await t.http.post('/workspaces').set(owner).send({ name: 'Rate limited', extra: 1 });
    expectProblem(refused, 400, 'validation_failed');
    expect(remaining(refused, 'write').r).toBe(1);
  });

  it('answers an OTLP export over the ingestion quota as the receiver answers overload: 429 with Retry-After, in the export’s own encoding, and UNAVAILABLE with RetryInfo over gRPC', async () => {
    const headers = { ...key2, 'x-ews-dataset': 'exporter-traces' };
    const batch = (i: number) => otlpProtobuf(recordTraces([agentTrace(`b-${i}`, `question ${i}`)]));
    for (let i = 0; i < 3; i++)
      await t.http
        .post('/v1/traces')
        .set({ ...headers, 'content-type': 'application/x-protobuf' })
        .send(batch(i))
        .expect(200);
    const protobuf = await t.http
      .post('/v1/traces')
      .set({ ...headers, 'content-type': 'application/x-protobuf' })
      .send(batch(3))
      .buffer(true)
      .parse(binary);
    expect(protobuf.status).toBe(429);
    expect(protobuf.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect(Number(protobuf.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(remaining(protobuf, 'ingestion').r).toBe(0);
    expect(readRpcStatus(protobuf.body)).toEqual({
      code: 8,
      message: expect.stringMatching(
        /^Too many ingestion requests: this API key may send 3 in 60 s.*\(rate_limit_exceeded\)$/,
      ),
    });
    const json = await t.http
      .post('/v1/traces')
      .set(headers)
      .send(otlpJson(recordTraces([agentTrace('j', 'json')])));
    expectLimited(json, 'ingestion', 3);
    expect(json.body).toEqual(expect.objectContaining({ code: 8, message: json.body.detail }));

    const port = await t.app.get(OtlpGrpcReceiver).listen(0, '127.0.0.1');
    const grpc = await grpcExport(`127.0.0.1:${port}`, batch(4), {
      authorization: key2.Authorization,
      'x-ews-dataset': 'exporter-traces',
    });
    expect(grpc).toEqual(
      expect.objectContaining({
        code: GrpcStatus.UNAVAILABLE,
        details: expect.stringMatching(/^rate_limit_exceeded: /),
      }),
    );
    const delay = retryDelayOf(grpc.statusDetails!);
    expect(delay).toBeGreaterThanOrEqual(1);
    expect(delay).toBeLessThanOrEqual(60);
  });

  it('limits routes without a token by client address (X-Forwarded-For from a trusted proxy), logins apart from reads', async () => {
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    for (let i = 0; i < 5; i++)
      expect(remaining(await t.http.get('/branding').set(from('203.0.113.10')).expect(200), 'read').r).toBe(4 - i);
    const limited = await t.http.get('/branding').set(from('203.0.113.10'));
    expectLimited(limited, 'read', 5);
    expect(limited.body.detail).toContain('this address');
    expect(remaining(await t.http.get('/branding').set(from('203.0.113.11')).expect(200), 'read').r).toBe(4);

    const login = (address: string) =>
      t.http.post('/auth/token').set(from(address)).send({ email: user.email, password: user.password });
    for (let i = 0; i < 3; i++) {
      const res = await login('198.51.100.20');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
      expect(remaining(res, 'login').r).toBe(2 - i);
    }
    // The right password too: the quota counts requests, the lockout (LOGIN_MAX_FAILURES) failures.
    expectLimited(await login('198.51.100.20'), 'login', 3);
    expect(remaining(await login('198.51.100.21').expect(200), 'login').r).toBe(2);
    // The address's reads are a budget of their own.
    expect(remaining(await t.http.get('/branding').set(from('198.51.100.20')).expect(200), 'read').r).toBe(4);
  });
});

describeOn(
  'postgres',
  'two API processes on one database share the Redis counters; the embedded database serves one process',
)('rate limits shared through Redis by two API processes', () => {
  const prefix = uniqueQueuePrefix();
  const env = { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, RUN_WORKERS: 'false', RATE_LIMIT_READ: '6' };
  let a: TestApp;
  let b: TestApp;
  let key: Auth;

  beforeAll(async () => {
    a = await startTestApp(env);
    b = await startTestApp(env, { database: a.db });
    // Each process signs tokens with a secret of its own; an API key is read from the shared database.
    const actor = await a.factory.actor();
    const workspace = await a.factory.newWorkspace(actor);
    const created = await a.http
      .post(`/workspaces/${workspace.id}/api-keys`)
      .set(actor.auth)
      .send({ name: 'shared-budget', role: 'viewer' })
      .expect(201);
    key = { Authorization: `Bearer ${created.body.key}` };
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await deleteQueueKeys(prefix);
  });

  it("spends one key's budget across both processes: each answer counts the other's requests, and both refuse once it is spent", async () => {
    for (let i = 0; i < 6; i++) {
      const res = await (i % 2 ? b : a).http.get('/auth/me').set(key).expect(200);
      expect(remaining(res, 'read').r).toBe(5 - i);
    }
    expectLimited(await a.http.get('/auth/me').set(key), 'read', 6);
    expectLimited(await b.http.get('/auth/me').set(key), 'read', 6);
  });
});
