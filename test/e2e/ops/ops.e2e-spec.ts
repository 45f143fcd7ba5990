import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** Polls the custom op until its health check has settled. */
async function settled(
  t: TestApp,
  ws: string,
  name: string,
  auth: Record<string, string>,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const res = await t.http.get(`/workspaces/${ws}/custom_ops/${name}`).set(auth).expect(200);
    if (res.body.state !== 'deploying') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`custom op ${name} is still deploying`);
}

describe('operation registry and custom ops', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let service: FakeUpstream;
  const TOKEN = 'op-token-9f8e7d';
  const schema = {
    type: 'object',
    properties: { min_words: { type: 'integer', minimum: 1 } },
    required: ['min_words'],
    additionalProperties: false,
  };

  beforeAll(async () => {
    t = await startTestApp();
    service = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await service?.close();
    await t?.close();
  });

  it('catalogues the built-in ops with their parameter schemas', async () => {
    const catalogue = await t.http.get('/ops').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(catalogue.body.kinds.metric.map((o: { name: string }) => o.name)).toEqual(
      expect.arrayContaining(['exact_match', 'bleu', 'rouge_l', 'llm_judge', 'faithfulness']),
    );
    expect(catalogue.body.kinds.check.map((o: { name: string }) => o.name)).toEqual(
      expect.arrayContaining(['exact_duplicates', 'near_duplicates', 'pii']),
    );
    expect(catalogue.body.total).toBe(catalogue.body.kinds.metric.length + catalogue.body.kinds.check.length);
    const regex = await t.http.get('/ops/regex/schema').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(regex.body).toEqual({
      name: 'regex',
      kind: 'metric',
      version: 1,
      dialect: 'http://json-schema.org/draft-07/schema#',
      schema: expect.objectContaining({ required: ['pattern'] }),
    });
    const pii = await t.http.get('/ops/registry/pii').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(pii.body).toEqual(
      expect.objectContaining({
        kind: 'check',
        source: 'builtin',
        available: true,
        custom_op: null,
        params_schema: expect.objectContaining({
          properties: expect.objectContaining({ fail_ratio: expect.objectContaining({ type: 'number' }) }),
        }),
      }),
    );
  });

  it('publishes a custom op, health checks it through the queue, and makes its op usable in metric configs', async () => {
    service.on('POST', '/score', (req) =>
      req.headers.authorization === `Bearer ${TOKEN}`
        ? { json: { results: [] } }
        : { status: 401, json: { error: 'no token' } },
    );
    const secretId = (
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'OP_TOKEN', value: TOKEN })
        .expect(201)
    ).body.id;
    const published = await t.http
      .post(`/workspaces/${ws}/custom_ops`)
      .set(r.admin.auth)
      .send({
        name: 'wordiness',
        kind: 'metric',
        description: 'Counts filler words',
        endpoint_url: service.url('/score'),
        params_schema: schema,
        secret_id: secretId,
        timeout_ms: 2000,
      })
      .expect(201);
    expect(published.body).toEqual(
      expect.objectContaining({
        job_id: expect.any(String),
        custom_op: expect.objectContaining({ name: 'wordiness', state: 'deploying', revision: 1 }),
        op: expect.objectContaining({
          name: 'wordiness',
          kind: 'metric',
          source: 'workspace',
          version: 1,
          available: false,
        }),
      }),
    );

    const active = await settled(t, ws, 'wordiness', r.viewer.auth);
    expect(active).toEqual(
      expect.objectContaining({
        state: 'active',
        state_reason: 'revision 1 passed its health check',
        revisions: [
          expect.objectContaining({
            revision: 1,
            outcome: 'active',
            health: expect.objectContaining({ status_code: 200, method: 'POST' }),
          }),
        ],
      }),
    );
    const probe = service.received('POST', '/score').at(-1)!;
    expect(probe.body).toEqual({ op: 'wordiness', params: {}, items: [] });
    expect(JSON.stringify(active)).not.toContain(TOKEN);

    expect(
      (await t.http.get('/ops').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body.kinds.metric,
    ).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'wordiness', source: 'workspace' })]));
    const metrics = (await t.http.get(`/workspaces/${ws}/metrics`).set(r.viewer.auth).expect(200)).body.metrics;
    expect(metrics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'wordiness',
          kind: 'custom',
          source: 'custom_op',
          available: true,
          params_schema: schema,
        }),
      ]),
    );
    expect(
      (await t.http.get('/ops/wordiness/schema').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body
        .schema,
    ).toEqual(schema);

    const config = await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'concise',
        kind: 'custom',
        metric: 'wordiness',
        params: { min_words: 3 },
        threshold: 0.5,
      })
      .expect(201);
    expect(config.body).toEqual(
      expect.objectContaining({ kind: 'custom', metric: 'wordiness', params: { min_words: 3 } }),
    );
    const invalid = await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'x',
        kind: 'custom',
        metric: 'wordiness',
        params: { min_words: 0, extra: true },
      });
    expectProblem(invalid, 400, 'metric_params_invalid');
    expect(invalid.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['params', 'params.min_words']);
  });

  it('registers more ops served by a custom op, versioned, through both registration paths', async () => {
    const viaBody = await t.http
      .post('/ops')
      .set(r.admin.auth)
      .send({
        workspace_id: ws,
        name: 'filler_ratio',
        kind: 'metric',
        custom_op: 'wordiness',
        description: 'Share of filler words',
      })
      .expect(201);
    expect(viaBody.body).toEqual(
      expect.objectContaining({
        name: 'filler_ratio',
        version: 1,
        version_count: 1,
        source: 'workspace',
        custom_op: { name: 'wordiness', state: 'active' },
        available: true,
        params_schema: { type: 'object', properties: {}, additionalProperties: false },
      }),
    );
    const viaPath = await t.http
      .post(`/workspaces/${ws}/ops`)
      .set(r.admin.auth)
      .send({
        name: 'filler_ratio',
        kind: 'metric',
        custom_op: 'wordiness',
        params_schema: { type: 'object', properties: { language: { type: 'string' } } },
      })
      .expect(201);
    expect(viaPath.body).toEqual(
      expect.objectContaining({ version: 2, version_count: 2, description: 'Share of filler words' }),
    );
    expect(
      (
        await t.http
          .get('/ops/filler_ratio/schema')
          .query({ workspace_id: ws, version: 1 })
          .set(r.viewer.auth)
          .expect(200)
      ).body.version,
    ).toBe(1);
    const registry = await t.http
      .get('/ops/registry')
      .query({ workspace_id: ws, source: 'workspace' })
      .set(r.viewer.auth)
      .expect(200);
    expect(registry.body.items.map((o: { name: string }) => o.name)).toEqual(['filler_ratio', 'wordiness']);

    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({ workspace_id: ws, name: 'bleu', kind: 'metric', custom_op: 'wordiness' }),
      409,
      'op_name_reserved',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({ workspace_id: ws, name: 'filler_ratio', kind: 'check', custom_op: 'wordiness' }),
      409,
      'op_kind_change',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({ workspace_id: ws, name: 'other', kind: 'metric', custom_op: 'missing' }),
      400,
      'unknown_custom_op',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({
          workspace_id: ws,
          name: 'other',
          kind: 'metric',
          custom_op: 'wordiness',
          params_schema: { type: 'array' },
        }),
      400,
      'op_schema_invalid',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({
          workspace_id: ws,
          name: 'other',
          kind: 'metric',
          custom_op: 'wordiness',
          params_schema: { type: 'object', properties: { a: { type: 'nonsense' } } },
        }),
      400,
      'op_schema_invalid',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.admin.auth)
        .send({ workspace_id: ws, name: 'Bad Name', kind: 'metric', custom_op: 'wordiness' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/ops')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'other', kind: 'metric', custom_op: 'wordiness' }),
      403,
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/ops`)
        .set(r.member.auth)
        .send({ name: 'other', kind: 'metric', custom_op: 'wordiness' }),
      403,
    );
  });

  it('redeploys to a failing endpoint (failed, reason kept), back to a healthy one, then stops and deletes', async () => {
    service.on('POST', '/v2/score', { status: 500, text: 'model not loaded' });
    const redeployed = await t.http
      .patch(`/workspaces/${ws}/custom_ops/wordiness`)
      .set(r.admin.auth)
      .send({ endpoint_url: service.url('/v2/score') })
      .expect(200);
    expect(redeployed.body).toEqual(
      expect.objectContaining({
        revision: 2,
        job_id: expect.any(String),
        custom_op: expect.objectContaining({ state: 'deploying' }),
      }),
    );
    const failed = await settled(t, ws, 'wordiness', r.viewer.auth);
    expect(failed).toEqual(
      expect.objectContaining({
        state: 'failed',
        state_reason: expect.stringContaining('answered 500: model not loaded'),
      }),
    );
    expect(
      (failed.revisions as Array<{ revision: number; outcome: string }>).map((x) => [x.revision, x.outcome]),
    ).toEqual([
      [2, 'failed'],
      [1, 'active'],
    ]);
    expect(
      (await t.http.get('/ops/registry/filler_ratio').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body,
    ).toEqual(expect.objectContaining({ available: false, unavailable_reason: expect.stringContaining('failed') }));

    service.on('GET', '/healthz', { json: { ok: true } });
    await t.http
      .patch(`/workspaces/${ws}/custom_ops/wordiness`)
      .set(r.admin.auth)
      .send({ endpoint_url: service.url('/score'), health_url: service.url('/healthz') })
      .expect(200);
    const healthy = await settled(t, ws, 'wordiness', r.viewer.auth);
    expect(healthy).toEqual(
      expect.objectContaining({ state: 'active', revision: 3, health_url: service.url('/healthz') }),
    );
    expect((healthy.revisions as Array<{ outcome: string }>).map((x) => x.outcome)).toEqual([
      'active',
      'failed',
      'superseded',
    ]);

    expectProblem(
      await t.http.delete(`/workspaces/${ws}/custom_ops/wordiness`).set(r.admin.auth),
      409,
      'custom_op_not_stopped',
    );
    const stopped = await t.http
      .patch(`/workspaces/${ws}/custom_ops/wordiness/stop`)
      .set(r.admin.auth)
      .send({ reason: 'replaced by v2 service' })
      .expect(200);
    expect(stopped.body).toEqual({
      previous_state: 'active',
      custom_op: expect.objectContaining({
        state: 'stopped',
        state_reason: `stopped by ${r.admin.email}: replaced by v2 service`,
      }),
    });
    expect(
      (await t.http.patch(`/workspaces/${ws}/custom_ops/wordiness/stop`).set(r.admin.auth).send({}).expect(200)).body
        .previous_state,
    ).toBe('stopped');
    expect(
      (await t.http.get('/ops').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body.kinds.metric.map(
        (o: { name: string }) => o.name,
      ),
    ).not.toContain('wordiness');

    expectProblem(
      await t.http.delete(`/workspaces/${ws}/custom_ops/wordiness`).set(r.admin.auth),
      409,
      'custom_op_in_use',
    );
    await t.http.delete('/metric-configs/concise/1').query({ workspace_id: ws }).set(r.member.auth).expect(204);
    await t.http.delete(`/workspaces/${ws}/custom_ops/wordiness`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/workspaces/${ws}/custom_ops/wordiness`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/ops/registry/filler_ratio').query({ workspace_id: ws }).set(r.viewer.auth), 404);
  });

  it('lists custom ops and answers 400, 401, 403, 404 and 409', async () => {
    service.on('POST', '/ok', { json: { results: [] } });
    await t.http
      .post(`/workspaces/${ws}/custom_ops`)
      .set(r.admin.auth)
      .send({ name: 'sentiment', kind: 'enrichment', endpoint_url: service.url('/ok') })
      .expect(201);
    await settled(t, ws, 'sentiment', r.viewer.auth);
    const list = await t.http
      .get(`/workspaces/${ws}/custom_ops`)
      .query({ state: 'active' })
      .set(r.viewer.auth)
      .expect(200);
    expect(list.body).toEqual(
      expect.objectContaining({
        total: 1,
        items: [expect.objectContaining({ name: 'sentiment', state: 'active', health_url: null })],
      }),
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.admin.auth)
        .send({ name: 'sentiment', kind: 'metric', endpoint_url: service.url('/ok') }),
      409,
      'custom_op_name_taken',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.admin.auth)
        .send({ name: 'rouge_l', kind: 'metric', endpoint_url: service.url('/ok') }),
      409,
      'op_name_reserved',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.admin.auth)
        .send({ name: 'x', kind: 'metric', endpoint_url: 'file:///etc/passwd' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.admin.auth)
        .send({ name: 'x', kind: 'model', endpoint_url: service.url('/ok') }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.admin.auth)
        .send({ name: 'x', kind: 'metric', endpoint_url: service.url('/ok'), secret_id: randomUUID() }),
      400,
      'unknown_secret',
    );
    expectProblem(
      await t.http
        .patch(`/workspaces/${ws}/custom_ops/sentiment/stop`)
        .set(r.admin.auth)
        .send({ reason: 'x'.repeat(501) }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/custom_ops`)
        .set(r.member.auth)
        .send({ name: 'x', kind: 'metric', endpoint_url: service.url('/ok') }),
      403,
    );
    expectProblem(await t.http.patch(`/workspaces/${ws}/custom_ops/sentiment/stop`).set(r.member.auth).send({}), 403);
    expectProblem(await t.http.delete(`/workspaces/${ws}/custom_ops/sentiment`).set(r.member.auth), 403);
    expectProblem(await t.http.get(`/workspaces/${ws}/custom_ops`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get('/ops/registry').query({ workspace_id: ws }).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/workspaces/${ws}/custom_ops`), 401);
    expectProblem(await t.http.get('/ops').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.get('/ops').set(r.viewer.auth), 400, 'validation_failed');
    expectProblem(await t.http.get(`/workspaces/${ws}/custom_ops/nope`).set(r.viewer.auth), 404);
    expectProblem(await t.http.patch(`/workspaces/${ws}/custom_ops/nope`).set(r.admin.auth).send({}), 404);
    expectProblem(await t.http.get('/ops/registry/nope').query({ workspace_id: ws }).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/ops/nope/schema').query({ workspace_id: ws }).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/ops/bleu/schema').query({ workspace_id: ws, version: 2 }).set(r.viewer.auth), 404);
  });
});
