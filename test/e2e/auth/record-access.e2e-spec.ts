import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * A route that names a record (`GET /datasets/{dataset_id}`) is authorized in one statement: the
 * session, the record's workspace and the membership together (libs/auth/access.guard.ts). Each
 * way of losing access takes effect on the very next request, for tokens and API keys alike, and
 * the answers keep their order: 401, then 400, then 404, then 403.
 */
describe('record routes: access decided with the session, revoked at once', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let ws: string;
  let datasetId: string;
  let versionId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const token = (await t.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }).expect(200))
      .body.access_token;
    admin = { Authorization: `Bearer ${token}` };
    ws = (await t.http.post('/workspaces').set(admin).send({ name: 'record-access' }).expect(201)).body.id;
    const dataset = await uploadRows(t, admin, ws, [{ q: 'a' }, { q: 'b' }]);
    datasetId = dataset.datasetId;
    versionId = dataset.versionId;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function member(role: 'viewer' | 'member' | 'admin') {
    const actor = await t.factory.actor();
    await t.factory.addMember(ws, actor.id, role);
    return actor;
  }

  it('answers the dataset with its latest version, its columns by name only', async () => {
    const viewer = await member('viewer');
    const res = await t.http.get(`/datasets/${datasetId}`).set(viewer.auth).expect(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        id: datasetId,
        workspace_id: ws,
        version_count: 1,
        staged_edits: 0,
        latest_version: expect.objectContaining({
          id: versionId,
          number: 1,
          row_count: 2,
          columns: ['q'],
          dataset_id: datasetId,
          workspace_id: ws,
        }),
      }),
    );
    expect(res.headers.etag).toBeDefined();
  });

  it('logout: the next GET of the record is 401', async () => {
    const viewer = await member('viewer');
    await t.http.get(`/datasets/${datasetId}`).set(viewer.auth).expect(200);
    await t.http.post('/auth/logout').set(viewer.auth).expect(204);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(viewer.auth), 401);
  });

  it('deactivation: the next GET is 401, for the token and for the API key', async () => {
    const owner = await member('admin');
    const key = (
      await t.http.post(`/workspaces/${ws}/api-keys`).set(owner.auth).send({ name: 'ci', role: 'viewer' }).expect(201)
    ).body.key;
    const byKey = { Authorization: `Bearer ${key}` };
    await t.http.get(`/datasets/${datasetId}`).set(owner.auth).expect(200);
    await t.http.get(`/datasets/${datasetId}`).set(byKey).expect(200);
    await t.http.post(`/users/${owner.id}/deactivate`).set(admin).expect(200);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(owner.auth), 401);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(byKey), 401);
  });

  it('removal from the workspace: the next GET is 403; a role lowered below the rule: 403 at once', async () => {
    const removed = await member('member');
    await t.http.get(`/datasets/${datasetId}`).set(removed.auth).expect(200);
    await t.http.delete(`/workspaces/${ws}/members/${removed.id}`).set(admin).expect(204);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(removed.auth), 403);

    const lowered = await member('member');
    await t.http.patch(`/datasets/${datasetId}`).set(lowered.auth).send({ description: 'by a member' }).expect(200);
    await t.http.patch(`/workspaces/${ws}/members/${lowered.id}`).set(admin).send({ role: 'viewer' }).expect(200);
    expectProblem(
      await t.http.patch(`/datasets/${datasetId}`).set(lowered.auth).send({ description: 'by a viewer' }),
      403,
    );
    await t.http.get(`/datasets/${datasetId}`).set(lowered.auth).expect(200);
  });

  it('a revoked API key: 401 on the next request', async () => {
    const owner = await member('member');
    const created = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(owner.auth)
        .send({ name: 'exporter', role: 'viewer' })
        .expect(201)
    ).body;
    const byKey = { Authorization: `Bearer ${created.key}` };
    await t.http.get(`/datasets/${datasetId}`).set(byKey).expect(200);
    await t.http.delete(`/workspaces/${ws}/api-keys/${created.id}`).set(owner.auth).expect(204);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(byKey), 401);
  });

  it('the order of answers: 401 before a malformed id (400), 404 for no such record, 403 for an outsider, 404 to an outsider asking for a version (concealed)', async () => {
    const outsider = await t.factory.actor();
    const viewer = await member('viewer');
    expectProblem(await t.http.get('/datasets/not-a-uuid').set({ Authorization: 'Bearer forged.token.here' }), 401);
    await t.http.post('/auth/logout').set(viewer.auth).expect(204);
    expectProblem(await t.http.get('/datasets/not-a-uuid').set(viewer.auth), 401);
    expectProblem(await t.http.get('/datasets/not-a-uuid').set(outsider.auth), 400, 'invalid_identifier');
    expectProblem(await t.http.get('/datasets/00000000-0000-4000-8000-000000000000').set(outsider.auth), 404);
    expectProblem(await t.http.get(`/datasets/${datasetId}`).set(outsider.auth), 403);
    expectProblem(await t.http.get(`/dataset-versions/${versionId}`).set(outsider.auth), 404);
  });

  it('many record requests at once, from members and outsiders, each answered by its own standing', async () => {
    const viewer = await member('viewer');
    const outsider = await t.factory.actor();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.http.get(`/datasets/${datasetId}`).set(i % 2 ? viewer.auth : outsider.auth),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 ? 200 : 403)));
  });
});
