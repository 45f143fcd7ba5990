import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('embedding configs', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let secretId: string;
  const body = (extra: Record<string, unknown> = {}) => ({
    workspace_id: ws,
    name: 'openai-small',
    provider: 'openai_compatible',
    base_url: 'https://api.example.com/v1/',
    model: 'text-embedding-3-small',
    ...extra,
  });

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    secretId = (
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'OPENAI_API_KEY', value: 'sk-embed-test' })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => t?.close());

  it('lists the built-in local embedder for every workspace, in use by default', async () => {
    const list = await t.http.get('/embedding-configs').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(list.body).toEqual({
      items: [
        expect.objectContaining({
          id: null,
          name: 'local',
          provider: 'local',
          builtin: true,
          model: 'local-char-ngram',
          dimensions: 512,
          in_use: true,
        }),
      ],
      total: 1,
      page: 1,
      page_size: 50,
    });
    const local = await t.http
      .get('/embedding-configs/local')
      .query({ workspace_id: ws })
      .set(r.viewer.auth)
      .expect(200);
    expect(local.body).toEqual(list.body.items[0]);
  });

  it('creates a remote config whose key is a workspace secret, readable by id or name; the workspace can choose it', async () => {
    const created = await t.http
      .post('/embedding-configs')
      .set(r.admin.auth)
      .send(body({ secret_id: secretId, dimensions: 256, description: 'small and cheap' }))
      .expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        workspace_id: ws,
        name: 'openai-small',
        provider: 'openai_compatible',
        builtin: false,
        base_url: 'https://api.example.com/v1',
        model: 'text-embedding-3-small',
        dimensions: 256,
        batch_size: 64,
        secret_id: secretId,
        in_use: false,
        created_by: r.admin.id,
      }),
    );
    expect(JSON.stringify(created.body)).not.toContain('sk-embed-test');
    const byName = await t.http
      .get('/embedding-configs/OPENAI-SMALL')
      .query({ workspace_id: ws })
      .set(r.viewer.auth)
      .expect(200);
    expect(byName.body.id).toBe(created.body.id);
    await t.http
      .put(`/workspaces/${ws}/embedding-config`)
      .set(r.admin.auth)
      .send({ provider: 'remote', config_ref: created.body.id })
      .expect(200);
    const list = await t.http.get('/embedding-configs').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(list.body.items.map((c: { name: string; in_use: boolean }) => [c.name, c.in_use])).toEqual([
      ['local', false],
      ['openai-small', true],
    ]);
    const page2 = await t.http
      .get('/embedding-configs')
      .query({ workspace_id: ws, page: 2, page_size: 1 })
      .set(r.viewer.auth)
      .expect(200);
    expect(page2.body).toEqual(
      expect.objectContaining({ total: 2, items: [expect.objectContaining({ name: 'openai-small' })] }),
    );
    // A secret a config uses cannot be deleted from under it.
    expectProblem(await t.http.delete(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth), 409);
    const audit = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = 'embedding_config.created'`,
    );
    expect(audit).toEqual([
      {
        actor_id: r.admin.id,
        details: { name: 'openai-small', provider: 'openai_compatible', model: 'text-embedding-3-small' },
      },
    ]);
  });

  it('answers 400, 401, 403, 404 and 409', async () => {
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'Openai-Small' })),
      409,
      'embedding_config_name_taken',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'local' })),
      409,
      'embedding_config_name_taken',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'x', base_url: 'ftp://x' })),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'x', provider: 'cohere' })),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'x', dimensions: 0 })),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'x', api_key: 'sk-inline' })),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send(body({ name: 'x', secret_id: randomUUID() })),
      400,
      'unknown_secret',
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.admin.auth)
        .send({ ...body({ name: 'x' }), workspace_id: undefined }),
      400,
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.member.auth)
        .send(body({ name: 'x' })),
      403,
    );
    expectProblem(
      await t.http
        .post('/embedding-configs')
        .set(r.outsider.auth)
        .send(body({ name: 'x' })),
      403,
    );
    expectProblem(await t.http.post('/embedding-configs').send(body({ name: 'x' })), 401);
    const missing = await t.http.get('/embedding-configs/nope').query({ workspace_id: ws }).set(r.viewer.auth);
    expectProblem(missing, 404, 'embedding_config_not_found');
    expect(missing.body.available).toEqual(['local', 'openai-small']);
    expectProblem(
      await t.http.get('/embedding-configs/local').query({ workspace_id: randomUUID() }).set(r.viewer.auth),
      404,
    );
    expectProblem(await t.http.get('/embedding-configs').set(r.viewer.auth), 400);
    expectProblem(await t.http.get('/embedding-configs').query({ workspace_id: ws }).set(r.outsider.auth), 403);
    expectProblem(await t.http.get('/embedding-configs/local').query({ workspace_id: ws }), 401);
  });
});

describe('the workspace metric catalogue', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
  });
  afterAll(async () => t?.close());

  it('lists the built-in metrics with what they need and their parameter schemas (viewers)', async () => {
    const res = await t.http.get(`/workspaces/${r.workspace.id}/metrics`).set(r.viewer.auth).expect(200);
    const byName = Object.fromEntries(res.body.metrics.map((m: { name: string }) => [m.name, m]));
    expect(res.body.workspace_id).toBe(r.workspace.id);
    expect(byName.rouge_l).toEqual(
      expect.objectContaining({
        kind: 'deterministic',
        source: 'builtin',
        requires: ['expected_output'],
        better: 'higher',
        params_schema: expect.objectContaining({ type: 'object' }),
      }),
    );
    expect(byName.regex.params_schema.required).toEqual(['pattern']);
    expect(byName.latency).toEqual(expect.objectContaining({ better: 'lower', requires: [] }));
    expect(byName.faithfulness).toEqual(
      expect.objectContaining({ kind: 'judged', requires: ['context'], better: null, params_schema: null }),
    );
    expectProblem(await t.http.get(`/workspaces/${r.workspace.id}/metrics`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/workspaces/${randomUUID()}/metrics`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/workspaces/nope/metrics').set(r.viewer.auth), 400);
    expectProblem(await t.http.get(`/workspaces/${r.workspace.id}/metrics`), 401);
  });
});
