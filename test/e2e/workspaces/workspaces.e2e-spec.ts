import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('workspaces', () => {
  let t: TestApp;
  let roles: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let sysadmin: Actor;
  let ws: string;

  beforeAll(async () => {
    t = await startTestApp();
    roles = await t.factory.workspaceWithRoles();
    sysadmin = await t.factory.actor({ systemRole: 'admin' });
    ws = roles.workspace.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /workspaces', () => {
    it('creates a workspace whose creator is its owner, with the local embedder', async () => {
      const creator = await t.factory.actor();
      const res = await t.http.post('/workspaces').set(creator.auth).send({ name: '  Support bot ', description: 'CI evals' }).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({ name: 'Support bot', description: 'CI evals', role: 'owner', member_count: 1, created_by: creator.id, embedding_config: { provider: 'local' }, version: 1 }),
      );
      const members = await t.http.get(`/workspaces/${res.body.id}/members`).set(creator.auth).expect(200);
      expect(members.body).toEqual([expect.objectContaining({ user_id: creator.id, role: 'owner' })]);
    });

    it('is 400 for an empty or overlong name and for server-owned fields, 401 without a token', async () => {
      expectProblem(await t.http.post('/workspaces').set(roles.member.auth).send({ name: '   ' }), 400);
      expectProblem(await t.http.post('/workspaces').set(roles.member.auth).send({ name: 'x'.repeat(101) }), 400);
      expectProblem(await t.http.post('/workspaces').set(roles.member.auth).send({ name: 'x', id: randomUUID(), version: 7 }), 400);
      expectProblem(await t.http.post('/workspaces').send({ name: 'x' }), 401);
    });
  });

  describe('GET /workspaces', () => {
    it('lists only the caller workspaces with their role; a system admin sees all or only theirs with mine=true', async () => {
      const mine = await t.http.get('/workspaces').set(roles.viewer.auth).expect(200);
      expect(mine.body.items).toEqual([expect.objectContaining({ id: ws, role: 'viewer', member_count: 4 })]);
      const none = await t.http.get('/workspaces').set(roles.outsider.auth).expect(200);
      expect(none.body).toEqual({ items: [], total: 0, page: 1, page_size: 50 });
      const all = await t.http.get('/workspaces').set(sysadmin.auth).query({ page_size: 200 }).expect(200);
      expect(all.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ id: ws, role: null })]));
      const adminsOwn = await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'true' }).expect(200);
      expect(adminsOwn.body.total).toBe(0);
    });

    it('filters by name and sorts', async () => {
      const u = await t.factory.actor();
      for (const name of ['Beta eval', 'alpha eval', 'Gamma']) await t.http.post('/workspaces').set(u.auth).send({ name }).expect(201);
      const res = await t.http.get('/workspaces').set(u.auth).query({ q: 'EVAL', sort: '-name' }).expect(200);
      expect(res.body.items.map((w: { name: string }) => w.name)).toEqual(['Beta eval', 'alpha eval']);
      expectProblem(await t.http.get('/workspaces').set(u.auth).query({ sort: 'secret' }), 400);
    });

    it('is 401 without a token', async () => {
      expectProblem(await t.http.get('/workspaces'), 401);
    });
  });

  describe('GET, PATCH, DELETE /workspaces/{workspace_id}', () => {
    it('reads with an ETag for members, 403 for outsiders, 404 unknown, 400 malformed', async () => {
      const res = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ id: ws, role: 'viewer', member_count: 4 }));
      expect(res.headers.etag).toBeDefined();
      expectProblem(await t.http.get(`/workspaces/${ws}`).set(roles.outsider.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}`).set(roles.owner.auth), 404, 'not_found');
      expectProblem(await t.http.get('/workspaces/123').set(roles.owner.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/workspaces/${ws}`), 401);
      const asAdmin = await t.http.get(`/workspaces/${ws}`).set(sysadmin.auth).expect(200);
      expect(asAdmin.body.role).toBeNull();
    });

    it('renames with If-Match (admins), refuses stale ETags with 412 and members with 403', async () => {
      const read = await t.http.get(`/workspaces/${ws}`).set(roles.admin.auth).expect(200);
      const res = await t.http.patch(`/workspaces/${ws}`).set(roles.admin.auth).set('If-Match', read.headers.etag).send({ name: 'Renamed' }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ name: 'Renamed', version: read.body.version + 1 }));
      expectProblem(await t.http.patch(`/workspaces/${ws}`).set(roles.admin.auth).set('If-Match', read.headers.etag).send({ name: 'Lost' }), 412);
      expectProblem(await t.http.patch(`/workspaces/${ws}`).set(roles.member.auth).send({ name: 'No' }), 403);
      expectProblem(await t.http.patch(`/workspaces/${ws}`).set(roles.admin.auth).send({ embedding_config: {} }), 400);
      expect((await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth)).body.name).toBe('Renamed');
      const audit = await t.dataSource.query(`SELECT details FROM audit_events WHERE action = 'workspace.updated' AND target_id = $1`, [ws]);
      expect(audit[0].details.name).toEqual({ from: read.body.name, to: 'Renamed' });
    });

    it('deletes (owners only) with everything in it', async () => {
      const owner = await t.factory.actor();
      const created = await t.http.post('/workspaces').set(owner.auth).send({ name: 'doomed' }).expect(201);
      const id = created.body.id;
      const admin = await t.factory.actor();
      await t.factory.addMember(id, admin.id, 'admin');
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(admin.auth), 403);
      await t.http.delete(`/workspaces/${id}`).set(owner.auth).expect(204);
      expectProblem(await t.http.get(`/workspaces/${id}`).set(owner.auth), 404);
      expect(await t.dataSource.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1', [id])).toHaveLength(0);
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(owner.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${ws}`), 401);
    });
  });

  describe('PUT /workspaces/{workspace_id}/embedding-config', () => {
    it('switches to a remote config and back to local (admins), audited', async () => {
      const res = await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.admin.auth).send({ provider: 'remote', config_ref: 'openai-small', model: 'text-embedding-3-small', dimensions: 1536 }).expect(200);
      expect(res.body.embedding_config).toEqual({ provider: 'remote', config_ref: 'openai-small', model: 'text-embedding-3-small', dimensions: 1536 });
      const back = await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.owner.auth).send({ provider: 'local' }).expect(200);
      expect(back.body.embedding_config).toEqual({ provider: 'local' });
      const audit = await t.dataSource.query(`SELECT 1 FROM audit_events WHERE action = 'workspace.embedding_config_changed' AND target_id = $1`, [ws]);
      expect(audit).toHaveLength(2);
    });

    it('is 400 for remote without config_ref or a bad provider, 403 for members, 404 unknown, 401 without token', async () => {
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.admin.auth).send({ provider: 'remote' }), 400);
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.admin.auth).send({ provider: 'magic' }), 400);
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.admin.auth).send({ provider: 'local', dimensions: 0 }), 400);
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.member.auth).send({ provider: 'local' }), 403);
      expectProblem(await t.http.put(`/workspaces/${randomUUID()}/embedding-config`).set(roles.admin.auth).send({ provider: 'local' }), 404);
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).send({ provider: 'local' }), 401);
    });
  });
});
