import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chatCompletion, FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('judges', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let secretId: string;
  let llm: FakeUpstream;
  const KEY = 'sk-judge-key-42';

  beforeAll(async () => {
    t = await startTestApp();
    llm = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    secretId = (
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'JUDGE_KEY', value: KEY })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await llm?.close();
    await t?.close();
  });

  const create = (auth: Record<string, string>, body: Record<string, unknown>) =>
    t.http
      .post('/judges')
      .set(auth)
      .send({ workspace_id: ws, ...body });

  it('creates judges of the three providers, lists, reads, changes and deletes them', async () => {
    const openai = await create(r.admin.auth, {
      name: 'gpt-grader',
      provider: 'openai_compatible',
      base_url: `${llm.url('/v1')}/`,
      model: 'gpt-test',
      parameters: { temperature: 0 },
      secret_id: secretId,
      timeout_ms: 2000,
      max_attempts: 2,
    }).expect(201);
    expect(openai.body).toEqual(
      expect.objectContaining({
        provider: 'openai_compatible',
        base_url: llm.url('/v1'),
        model: 'gpt-test',
        api_version: null,
        json_mode: true,
        timeout_ms: 2000,
        max_attempts: 2,
        max_concurrency: 4,
        secret_id: secretId,
      }),
    );
    const azure = await create(r.member.auth, {
      name: 'azure-grader',
      provider: 'azure_openai',
      base_url: llm.url(),
      model: 'grader-deployment',
    }).expect(201);
    expect(azure.body.api_version).toBe('2024-10-21');
    await create(r.member.auth, {
      name: 'claude-grader',
      provider: 'anthropic',
      base_url: llm.url(),
      model: 'claude-test',
      json_mode: false,
    }).expect(201);

    const list = await t.http.get('/judges').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(list.body.items.map((j: { name: string }) => j.name)).toEqual([
      'azure-grader',
      'claude-grader',
      'gpt-grader',
    ]);
    expect(
      (await t.http.get('/judges').query({ workspace_id: ws, provider: 'anthropic' }).set(r.viewer.auth).expect(200))
        .body.total,
    ).toBe(1);
    expect((await t.http.get(`/judges/${openai.body.id}`).set(r.viewer.auth).expect(200)).body.name).toBe('gpt-grader');

    const changed = await t.http
      .patch(`/judges/${azure.body.id}`)
      .set(r.member.auth)
      .send({ api_version: '2025-01-01-preview', parameters: { temperature: 0.1 } })
      .expect(200);
    expect(changed.body).toEqual(
      expect.objectContaining({ api_version: '2025-01-01-preview', parameters: { temperature: 0.1 } }),
    );
    expectProblem(
      await t.http
        .patch(`/judges/${openai.body.id}`)
        .set(r.member.auth)
        .send({ base_url: 'https://attacker.example/v1' }),
      403,
      'secret_use_requires_admin',
    );
    expectProblem(
      await t.http.patch(`/judges/${azure.body.id}`).set(r.member.auth).send({ secret_id: secretId }),
      403,
      'secret_use_requires_admin',
    );
    await t.http.delete(`/judges/${azure.body.id}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/judges/${azure.body.id}`).set(r.viewer.auth), 404);
  });

  it('tests a judge against an OpenAI-compatible provider: verdict, retries, malformed and unparseable answers', async () => {
    const judge = (await t.http.get('/judges').query({ workspace_id: ws }).set(r.viewer.auth)).body.items.find(
      (j: { name: string }) => j.name === 'gpt-grader',
    );
    const test = (body: Record<string, unknown> = {}) =>
      t.http.post(`/judges/${judge.id}/test`).set(r.member.auth).send(body);

    llm.on('POST', '/v1/chat/completions', { json: chatCompletion('{"score": 5, "reason": "Correct and complete"}') });
    const ok = await test().expect(200);
    expect(ok.body).toEqual(
      expect.objectContaining({
        ok: true,
        status_code: 200,
        attempts: 1,
        verdict: { score: 5, label: null, reason: 'Correct and complete', normalized: 1 },
        error: null,
      }),
    );
    const sent = llm.received('POST', '/v1/chat/completions').at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toEqual(
      expect.objectContaining({ model: 'gpt-test', temperature: 0, response_format: { type: 'json_object' } }),
    );
    expect(JSON.stringify(ok.body)).not.toContain(KEY);

    llm.on('POST', '/v1/chat/completions', (_req, n) =>
      n === 0
        ? { status: 429, json: { error: 'rate' }, headers: { 'retry-after': '0' } }
        : { json: chatCompletion('Sure! ```json\n{"label": "PASS", "reasoning": "matches"}\n```') },
    );
    const labelled = await test({
      rubric: 'Is {{output}} a correct answer to {{input}}?',
      scale: { type: 'labels', labels: ['pass', 'fail'] },
      input: '2+2?',
      output: '4',
    }).expect(200);
    expect(labelled.body).toEqual(
      expect.objectContaining({
        ok: true,
        attempts: 2,
        verdict: { score: 1, label: 'pass', reason: 'matches', normalized: 1 },
      }),
    );
    expect(llm.received('POST', '/v1/chat/completions').at(-1)!.body).toEqual(
      expect.objectContaining({
        messages: expect.arrayContaining([
          expect.objectContaining({ role: 'user', content: 'Is 4 a correct answer to 2+2??' }),
        ]),
      }),
    );

    llm.on('POST', '/v1/chat/completions', { json: chatCompletion('I cannot grade this (error 500).') });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({
        ok: false,
        verdict: null,
        error: expect.objectContaining({ code: 'unparseable_verdict' }),
        answer: 'I cannot grade this (error 500).',
      }),
    );

    llm.on('POST', '/v1/chat/completions', { json: chatCompletion('{"score": 9}') });
    expect((await test().expect(200)).body.error).toEqual(expect.objectContaining({ code: 'off_scale' }));

    llm.on('POST', '/v1/chat/completions', { text: 'upstream proxy error' });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({
        ok: false,
        error: expect.objectContaining({ code: 'malformed_response' }),
        response_excerpt: 'upstream proxy error',
      }),
    );

    llm.on('POST', '/v1/chat/completions', { status: 503, json: { error: 'down' } });
    expect((await test().expect(200)).body).toEqual(
      expect.objectContaining({
        ok: false,
        status_code: 503,
        attempts: 2,
        error: expect.objectContaining({ code: 'http_status' }),
      }),
    );
  });

  it('speaks the Anthropic messages API and times out a slow provider', async () => {
    const judge = (await t.http.get('/judges').query({ workspace_id: ws, provider: 'anthropic' }).set(r.viewer.auth))
      .body.items[0];
    llm.on('POST', '/v1/messages', {
      json: {
        content: [{ type: 'text', text: 'Score: 4/5\nThe answer is mostly right.' }],
        usage: { input_tokens: 30, output_tokens: 8 },
      },
    });
    const ok = await t.http.post(`/judges/${judge.id}/test`).set(r.member.auth).send({}).expect(200);
    expect(ok.body).toEqual(
      expect.objectContaining({
        ok: true,
        verdict: expect.objectContaining({ score: 4, normalized: 0.75 }),
        usage: { prompt_tokens: 30, completion_tokens: 8 },
      }),
    );
    const sent = llm.received('POST', '/v1/messages').at(-1)!;
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toEqual(
      expect.objectContaining({ model: 'claude-test', max_tokens: 512, system: expect.any(String) }),
    );

    await t.http
      .patch(`/judges/${judge.id}`)
      .set(r.member.auth)
      .send({ timeout_ms: 1000, max_attempts: 1 })
      .expect(200);
    llm.on('POST', '/v1/messages', { json: { content: [{ type: 'text', text: '{"score":5}' }] }, delayMs: 3000 });
    expect((await t.http.post(`/judges/${judge.id}/test`).set(r.member.auth).send({}).expect(200)).body).toEqual(
      expect.objectContaining({ ok: false, status_code: null, error: expect.objectContaining({ code: 'timeout' }) }),
    );
  });

  it('answers 400, 401, 403, 404 and 409', async () => {
    const judge = (await t.http.get('/judges').query({ workspace_id: ws }).set(r.viewer.auth)).body.items[0];
    expectProblem(
      await create(r.member.auth, { name: 'GPT-GRADER', provider: 'anthropic', base_url: llm.url(), model: 'm' }),
      409,
      'judge_name_taken',
    );
    expectProblem(
      await create(r.member.auth, { name: 'x', provider: 'cohere', base_url: llm.url(), model: 'm' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await create(r.member.auth, { name: 'x', provider: 'anthropic', base_url: 'not a url', model: 'm' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await create(r.member.auth, {
        name: 'x',
        provider: 'anthropic',
        base_url: llm.url(),
        model: 'm',
        timeout_ms: 10,
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await create(r.admin.auth, {
        name: 'x',
        provider: 'anthropic',
        base_url: llm.url(),
        model: 'm',
        secret_id: randomUUID(),
      }),
      400,
      'unknown_secret',
    );
    expectProblem(
      await create(r.member.auth, {
        name: 'x',
        provider: 'anthropic',
        base_url: llm.url(),
        model: 'm',
        secret_id: secretId,
      }),
      403,
      'secret_use_requires_admin',
    );
    expectProblem(
      await t.http.post(`/judges/${judge.id}/test`).set(r.member.auth).send({ rubric: 'Grade {{answer}} now' }),
      400,
      'rubric_invalid',
    );
    expectProblem(
      await t.http
        .post(`/judges/${judge.id}/test`)
        .set(r.member.auth)
        .send({ rubric: 'Grade {{output}}', scale: { type: 'numeric', min: 5, max: 1 } }),
      400,
      'scale_invalid',
    );
    expectProblem(
      await create(r.viewer.auth, { name: 'x', provider: 'anthropic', base_url: llm.url(), model: 'm' }),
      403,
    );
    expectProblem(await t.http.get('/judges').query({ workspace_id: ws }).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/judges/${judge.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.post(`/judges/${judge.id}/test`).set(r.viewer.auth).send({}), 403);
    expectProblem(await t.http.delete(`/judges/${judge.id}`).set(r.member.auth), 403);
    expectProblem(await t.http.get('/judges').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.post(`/judges/${judge.id}/test`).send({}), 401);
    expectProblem(await t.http.get(`/judges/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.post(`/judges/${randomUUID()}/test`).set(r.member.auth).send({}), 404);
  });
});
