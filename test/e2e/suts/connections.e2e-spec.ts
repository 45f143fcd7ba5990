import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chatCompletion, FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('SUT connections, adapters, validate and test', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: string;
  let secretId: string;
  let upstream: FakeUpstream;
  const SECRET = 'sk-test-0123456789';

  beforeAll(async () => {
    t = await startTestApp();
    upstream = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    sut = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'assistant' }).expect(201)).body
      .id;
    secretId = (
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'OPENAI_KEY', value: SECRET })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await upstream?.close();
    await t?.close();
  });

  const connections = (id = sut) => `/suts/${id}/connections`;

  it('creates connections of each kind with defaults, lists them, and keeps secrets by reference', async () => {
    const chat = await t.http
      .post(connections())
      .set(r.admin.auth)
      .send({
        name: 'chat',
        kind: 'openai_chat',
        openai_chat: { base_url: `${upstream.url('/v1')}/`, model: 'gpt-test', parameters: { temperature: 0 } },
        auth: { secret_id: secretId, scheme: 'bearer' },
        timeout_ms: 2000,
        retry: { max_attempts: 2, initial_backoff_ms: 1 },
      })
      .expect(201);
    expect(chat.body).toEqual(
      expect.objectContaining({
        sut_id: sut,
        kind: 'openai_chat',
        http: null,
        openai_chat: { base_url: upstream.url('/v1'), model: 'gpt-test', parameters: { temperature: 0 }, headers: {} },
        auth: { secret_id: secretId, scheme: 'bearer' },
        timeout_ms: 2000,
        max_concurrency: 8,
        requests_per_second: null,
        retry: {
          max_attempts: 2,
          initial_backoff_ms: 1,
          max_backoff_ms: 10000,
          retry_on_status: [408, 409, 425, 429, 500, 502, 503, 504],
          retry_on_timeout: true,
        },
        adapter_revision: 0,
      }),
    );
    expect(JSON.stringify(chat.body)).not.toContain(SECRET);
    await t.http
      .post(connections())
      .set(r.member.auth)
      .send({
        name: 'rest',
        kind: 'http',
        http: { url: upstream.url('/answer'), headers: { 'X-Team': 'qa' } },
        max_concurrency: 4,
        requests_per_second: 5,
      })
      .expect(201);
    await t.http.post(connections()).set(r.member.auth).send({ name: 'uploads', kind: 'offline' }).expect(201);
    const list = await t.http.get(connections()).set(r.viewer.auth).expect(200);
    expect(list.body.map((c: { name: string; kind: string }) => `${c.name}:${c.kind}`)).toEqual([
      'chat:openai_chat',
      'rest:http',
      'uploads:offline',
    ]);
    expect(list.body[1].http).toEqual({ url: upstream.url('/answer'), method: 'POST', headers: { 'x-team': 'qa' } });
    expect((await t.http.get(`/suts/${sut}`).set(r.viewer.auth).expect(200)).body.connection_count).toBe(3);
  });

  it('keeps the choice of where a secret goes with admins', async () => {
    expectProblem(
      await t.http
        .post(connections())
        .set(r.member.auth)
        .send({
          name: 'x',
          kind: 'http',
          http: { url: 'https://attacker.example/collect' },
          auth: { secret_id: secretId, scheme: 'bearer' },
        }),
      403,
      'secret_use_requires_admin',
    );
    const chat = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'chat',
    );
    expectProblem(
      await t.http
        .patch(`${connections()}/${chat.id}`)
        .set(r.member.auth)
        .send({ openai_chat: { base_url: 'https://attacker.example/v1', model: 'gpt-test' } }),
      403,
      'secret_use_requires_admin',
    );
    const limits = await t.http
      .patch(`${connections()}/${chat.id}`)
      .set(r.member.auth)
      .send({ max_concurrency: 16, retry: { max_attempts: 3 } })
      .expect(200);
    expect(limits.body).toEqual(
      expect.objectContaining({
        max_concurrency: 16,
        retry: expect.objectContaining({ max_attempts: 3, initial_backoff_ms: 1 }),
        openai_chat: expect.objectContaining({ base_url: upstream.url('/v1') }),
      }),
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.admin.auth)
        .send({
          name: 'x',
          kind: 'http',
          http: { url: upstream.url('/a') },
          auth: { secret_id: randomUUID(), scheme: 'bearer' },
        }),
      400,
      'unknown_secret',
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.admin.auth)
        .send({
          name: 'x',
          kind: 'http',
          http: { url: upstream.url('/a') },
          auth: { secret_id: secretId, scheme: 'header' },
        }),
      400,
      'auth_incomplete',
    );
    expectProblem(await t.http.delete(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth), 409);
  });

  it('serves the default adapter, refuses broken templates and paths with pointers, and adds revisions', async () => {
    const rest = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'rest',
    );
    const adapterUrl = `${connections()}/${rest.id}/adapter`;
    const initial = await t.http.get(adapterUrl).set(r.viewer.auth).expect(200);
    expect(initial.body).toEqual(
      expect.objectContaining({
        id: null,
        revision: 0,
        source: 'default',
        response: expect.objectContaining({ language: 'jsonpath', output: '$.output' }),
      }),
    );

    const badPath = await t.http
      .post(adapterUrl)
      .set(r.member.auth)
      .send({ request: { body: { q: '{{input}}' } }, response: { language: 'jsonpath', output: '$.answer[' } });
    expectProblem(badPath, 400, 'adapter_invalid');
    expect(badPath.body.issues).toEqual([
      expect.objectContaining({ pointer: '/response/output', code: 'path_syntax' }),
    ]);
    const badTemplate = await t.http
      .post(adapterUrl)
      .set(r.member.auth)
      .send({
        request: { body: { q: '{{input', 'a/b': '{{nope}}' } },
        response: { language: 'jmespath', output: 'answer' },
      });
    expectProblem(badTemplate, 400, 'adapter_invalid');
    expect(
      badTemplate.body.issues.map((i: { pointer: string; code: string }) => `${i.pointer} ${i.code}`).sort(),
    ).toEqual(['/request/body/a~1b unknown_placeholder', '/request/body/q template_syntax']);
    expectProblem(
      await t.http
        .post(adapterUrl)
        .set(r.member.auth)
        .send({ request: {}, response: { language: 'xpath', output: '/a' } }),
      400,
      'validation_failed',
    );
    // A required enum left out is called required, not "must be one of".
    const noLanguage = await t.http
      .post(adapterUrl)
      .set(r.member.auth)
      .send({ request: {}, response: { output: 'answer' } });
    expectProblem(noLanguage, 400, 'validation_failed');
    expect(noLanguage.body.errors).toEqual([{ field: 'response.language', message: 'response.language is required' }]);
    expect(noLanguage.body.detail).toBe('response.language is required');

    const adapter = {
      request: {
        body: { question: '{{input}}', history: '{{history}}', meta: { lang: '{{row.meta.lang | default("en")}}' } },
        headers: { 'X-Row': '{{row_id}}' },
      },
      response: {
        language: 'jmespath',
        output: 'answer',
        usage: { prompt_tokens: 'usage.in', completion_tokens: 'usage.out' },
        extras: { sources: 'sources[].title' },
      },
    };
    const posted = await t.http.post(adapterUrl).set(r.member.auth).send(adapter).expect(201);
    expect(posted.body).toEqual(expect.objectContaining({ revision: 1, source: 'custom', created_by: r.member.id }));
    expect((await t.http.post(adapterUrl).set(r.member.auth).send(adapter).expect(201)).body.revision).toBe(2);
    expect(
      (await t.http.get(connections()).set(r.viewer.auth)).body.find((c: { name: string }) => c.name === 'rest')
        .adapter_revision,
    ).toBe(2);
  });

  it('validates an adapter on a sample without calling anything', async () => {
    const rest = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'rest',
    );
    const validate = `${connections()}/${rest.id}/adapter/validate`;
    const before = upstream.requests.length;
    const ok = await t.http
      .post(validate)
      .set(r.member.auth)
      .send({
        row: { question: 'Where is my order?', meta: { lang: 'de' } },
        mapping: { input: 'question' },
        history: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
        ],
        response: { answer: 'Tomorrow', usage: { in: 10, out: 2 }, sources: [{ title: 'FAQ' }, { title: 'Policy' }] },
      })
      .expect(200);
    expect(ok.body).toEqual({
      valid: true,
      issues: [],
      adapter_revision: 2,
      request: {
        method: 'POST',
        url: upstream.url('/answer'),
        headers: expect.objectContaining({ 'x-team': 'qa', 'content-type': 'application/json', 'x-row': 'sample' }),
        body: {
          question: 'Where is my order?',
          history: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello!' },
          ],
          meta: { lang: 'de' },
        },
      },
      extracted: {
        output: 'Tomorrow',
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: null },
        cost_usd: null,
        extras: { sources: ['FAQ', 'Policy'] },
        trajectory: null,
      },
    });
    const wrong = await t.http
      .post(validate)
      .set(r.member.auth)
      .send({ row: { text: 'no input column' }, response: { reply: 'x' } })
      .expect(200);
    expect(wrong.body.valid).toBe(false);
    expect(wrong.body.request).toBeNull();
    expect(wrong.body.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          pointer: '/request/body/question',
          code: 'missing_value',
          message: expect.stringContaining('text'),
        }),
        expect.objectContaining({ pointer: '/response/output', code: 'path_no_match' }),
      ]),
    );
    const text = await t.http
      .post(validate)
      .set(r.member.auth)
      .send({ row: { input: 'x' }, response: 'not json' })
      .expect(200);
    expect(text.body.issues).toEqual([expect.objectContaining({ code: 'response_not_json' })]);
    const adHoc = await t.http
      .post(validate)
      .set(r.member.auth)
      .send({
        row: { input: 'x' },
        adapter: { request: { body: { q: '{{input}}' } }, response: { language: 'jsonpath', output: '$.a' } },
        response: { a: 1 },
      })
      .expect(200);
    expect(adHoc.body).toEqual(
      expect.objectContaining({
        valid: true,
        adapter_revision: null,
        extracted: expect.objectContaining({ output: '1' }),
      }),
    );
    expect(upstream.requests.length).toBe(before);
    const chat = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'chat',
    );
    const shown = await t.http
      .post(`${connections()}/${chat.id}/adapter/validate`)
      .set(r.member.auth)
      .send({ row: { input: 'Hi' } })
      .expect(200);
    expect(shown.body.request.headers.authorization).toBe('Bearer ***');
    expect(shown.body.request.body).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0,
    });
    const offline = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'uploads',
    );
    const parsed = await t.http
      .post(`${connections()}/${offline.id}/adapter/validate`)
      .set(r.member.auth)
      .send({ response: { output: 'uploaded answer' } })
      .expect(200);
    expect(parsed.body).toEqual(
      expect.objectContaining({
        valid: true,
        request: null,
        extracted: expect.objectContaining({ output: 'uploaded answer' }),
      }),
    );
  });

  it('tests a connection with one real call: success, retry, timeout, malformed answers, missing output', async () => {
    const chat = (await t.http.get(connections()).set(r.viewer.auth)).body.find(
      (c: { name: string }) => c.name === 'chat',
    );
    const test = () =>
      t.http
        .post(`${connections()}/${chat.id}/test`)
        .set(r.member.auth)
        .send({ row: { input: 'Say hi' } });

    upstream.on('POST', '/v1/chat/completions', { json: chatCompletion('Hi there!') });
    const ok = await test().expect(200);
    expect(ok.body).toEqual(
      expect.objectContaining({
        ok: true,
        status_code: 200,
        attempts: 1,
        output: 'Hi there!',
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
        error: null,
        adapter_revision: 0,
      }),
    );
    expect(ok.body.latency_ms).toBeGreaterThan(0);
    const sent = upstream.received('POST', '/v1/chat/completions').at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(sent.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'Say hi' }], temperature: 0 });
    expect(JSON.stringify(ok.body)).not.toContain(SECRET);

    upstream.on('POST', '/v1/chat/completions', (_req, n) =>
      n === 0 ? { status: 503, json: { error: 'overloaded' } } : { json: chatCompletion('Recovered') },
    );
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({ ok: true, attempts: 2, output: 'Recovered' }),
    );

    upstream.on('POST', '/v1/chat/completions', { status: 500, text: 'internal error in model server' });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({
        ok: false,
        status_code: 500,
        attempts: 3,
        error: expect.objectContaining({ code: 'http_status' }),
        response_excerpt: 'internal error in model server',
      }),
    );

    upstream.on('POST', '/v1/chat/completions', { text: '<html>gateway</html>' });
    expect((await test().expect(200)).body.error).toEqual(expect.objectContaining({ code: 'response_not_json' }));

    upstream.on('POST', '/v1/chat/completions', { json: { result: 'no choices here' } });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({
        ok: false,
        output: null,
        error: expect.objectContaining({ code: 'extraction_failed' }),
      }),
    );

    await t.http
      .patch(`${connections()}/${chat.id}`)
      .set(r.member.auth)
      .send({ timeout_ms: 200, retry: { max_attempts: 1 } })
      .expect(200);
    upstream.on('POST', '/v1/chat/completions', { json: chatCompletion('late'), delayMs: 1500 });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({ ok: false, status_code: null, error: expect.objectContaining({ code: 'timeout' }) }),
    );
  });

  it('answers 400, 401, 403 and 404 on connection operations', async () => {
    const list = (await t.http.get(connections()).set(r.viewer.auth)).body;
    const rest = list.find((c: { name: string }) => c.name === 'rest');
    const offline = list.find((c: { name: string }) => c.name === 'uploads');
    expectProblem(
      await t.http.post(connections()).set(r.member.auth).send({ name: 'x', kind: 'http' }),
      400,
      'connection_transport_invalid',
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.member.auth)
        .send({ name: 'x', kind: 'http', openai_chat: { base_url: upstream.url(), model: 'm' } }),
      400,
      'connection_transport_invalid',
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.member.auth)
        .send({ name: 'x', kind: 'offline', http: { url: upstream.url() } }),
      400,
      'connection_transport_invalid',
    );
    expectProblem(
      await t.http.post(connections()).set(r.member.auth).send({ name: 'x', kind: 'grpc' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.member.auth)
        .send({ name: 'x', kind: 'http', http: { url: 'ftp://files' } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(connections())
        .set(r.member.auth)
        .send({ name: 'x', kind: 'http', http: { url: upstream.url() }, timeout_ms: 5 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(connections()).set(r.member.auth).send({ name: 'REST', kind: 'offline' }),
      409,
      'connection_name_taken',
    );
    expectProblem(
      await t.http.post(`${connections()}/${offline.id}/test`).set(r.member.auth).send({}),
      400,
      'connection_not_callable',
    );
    expectProblem(
      await t.http
        .post(`${connections()}/${rest.id}/adapter/validate`)
        .set(r.member.auth)
        .send({ row: 'not an object' }),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.post(connections()).set(r.viewer.auth).send({ name: 'x', kind: 'offline' }), 403);
    expectProblem(await t.http.get(connections()).set(r.outsider.auth), 403);
    expectProblem(await t.http.post(`${connections()}/${rest.id}/test`).set(r.viewer.auth).send({}), 403);
    expectProblem(await t.http.post(`${connections()}/${rest.id}/adapter`).set(r.viewer.auth).send({}), 403);
    expectProblem(await t.http.get(`${connections()}/${rest.id}/adapter`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(connections()), 401);
    expectProblem(await t.http.post(`${connections()}/${rest.id}/test`).send({}), 401);
    expectProblem(await t.http.get(connections(randomUUID())).set(r.viewer.auth), 404);
    expectProblem(await t.http.get(`${connections()}/${randomUUID()}/adapter`).set(r.viewer.auth), 404);
    expectProblem(await t.http.patch(`${connections()}/${randomUUID()}`).set(r.member.auth).send({ name: 'y' }), 404);
    const other = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'other' }).expect(201))
      .body.id;
    expectProblem(await t.http.get(`${connections(other)}/${rest.id}/adapter`).set(r.viewer.auth), 404);
    await t.http.delete(`${connections()}/${offline.id}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.delete(`${connections()}/${offline.id}`).set(r.member.auth), 404);
  });
});
