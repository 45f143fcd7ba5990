import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('systems under test', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => t?.close());

  it('creates, lists, reads, renames with If-Match and deletes a SUT, with an audit trail', async () => {
    const created = await t.http
      .post('/suts')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: ' support-bot ', description: 'Tier-1 support', tags: ['rag', 'rag', 'prod'] })
      .expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        name: 'support-bot',
        description: 'Tier-1 support',
        tags: ['rag', 'prod'],
        connection_count: 0,
        created_by: r.member.id,
      }),
    );
    await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'summariser' }).expect(201);

    const page = await t.http.get('/suts').query({ workspace_id: ws, page_size: 1 }).set(r.viewer.auth).expect(200);
    expect(page.body).toEqual({
      items: [expect.objectContaining({ name: 'summariser' })],
      total: 2,
      page: 1,
      page_size: 1,
    });
    const search = await t.http
      .get('/suts')
      .query({ workspace_id: ws, q: 'SUPPORT', tag: 'prod' })
      .set(r.viewer.auth)
      .expect(200);
    expect(search.body.items.map((s: { name: string }) => s.name)).toEqual(['support-bot']);

    const read = await t.http.get(`/suts/${created.body.id}`).set(r.viewer.auth).expect(200);
    const etag = read.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const renamed = await t.http
      .patch(`/suts/${created.body.id}`)
      .set(r.member.auth)
      .set('If-Match', etag)
      .send({ name: 'support-assistant', tags: ['rag'] })
      .expect(200);
    expect(renamed.body).toEqual(expect.objectContaining({ name: 'support-assistant', tags: ['rag'] }));
    expectProblem(
      await t.http.patch(`/suts/${created.body.id}`).set(r.member.auth).set('If-Match', etag).send({ name: 'again' }),
      412,
      'precondition_failed',
    );

    await t.http.delete(`/suts/${created.body.id}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/suts/${created.body.id}`).set(r.viewer.auth), 404);
    const audit = await t.dataSource.query(`SELECT action FROM audit_events WHERE target_id = $1 ORDER BY created_at`, [
      created.body.id,
    ]);
    expect(audit.map((a: { action: string }) => a.action)).toEqual(['sut.created', 'sut.updated', 'sut.deleted']);
  });

  it('lists the ready templates to any signed-in user', async () => {
    const res = await t.http.get('/suts/templates').set(r.outsider.auth).expect(200);
    expect(res.body.total).toBe(5);
    expect(res.body.items.map((x: { id: string }) => x.id).sort()).toEqual([
      'anthropic_messages',
      'azure_openai',
      'http_json',
      'openai_chat',
      'rag_endpoint',
    ]);
    const rag = res.body.items.find((x: { id: string }) => x.id === 'rag_endpoint');
    expect(rag.adapter.response.extras).toEqual(expect.objectContaining({ contexts: expect.any(String) }));
    expectProblem(await t.http.get('/suts/templates'), 401);
  });

  it('answers 400, 401, 403, 404 and 409', async () => {
    const sut = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'checker' }).expect(201))
      .body;
    expectProblem(
      await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'CHECKER' }),
      409,
      'sut_name_taken',
    );
    expectProblem(
      await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: '' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/suts')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', tags: ['bad tag!'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'x', id: randomUUID() }),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get('/suts').set(r.viewer.auth), 400, 'validation_failed');
    expectProblem(await t.http.post('/suts').send({ workspace_id: ws, name: 'x' }), 401);
    expectProblem(await t.http.get('/suts').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.post('/suts').set(r.viewer.auth).send({ workspace_id: ws, name: 'x' }), 403);
    expectProblem(await t.http.get('/suts').query({ workspace_id: ws }).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/suts/${sut.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.patch(`/suts/${sut.id}`).set(r.viewer.auth).send({ name: 'y' }), 403);
    expectProblem(await t.http.delete(`/suts/${sut.id}`).set(r.member.auth), 403);
    expectProblem(await t.http.get(`/suts/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/suts/not-a-uuid').set(r.viewer.auth), 400, 'invalid_identifier');
    expectProblem(
      await t.http.patch(`/suts/${sut.id}`).set(r.member.auth).send({ workspace_id: randomUUID() }),
      400,
      'validation_failed',
    );
  });
});
