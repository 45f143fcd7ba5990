import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The HTTP contract of the workspaces routes: status, body and ETag on success, each problem
 * answer, the request validation, and which callers the guard lets through. The rules themselves
 * (listing filters, sort and pages, system admins' and API keys' view, updates and what they touch,
 * deletion and what goes with it, the embedding choice, audit rows) are
 * test/medium/workspaces.medium-spec.ts's, on both databases.
 */
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
    it('is 201 with the workspace (name trimmed) and the ETag a GET answers', async () => {
      const creator = await t.factory.actor();
      const res = await t.http
        .post('/workspaces')
        .set(creator.auth)
        .send({ name: '  Support bot ', description: 'CI evals' })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'Support bot',
        description: 'CI evals',
        embedding_config: { provider: 'local' },
        role: 'owner',
        member_count: 1,
        created_by: creator.id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        version: 1,
      });
      const read = await t.http.get(`/workspaces/${res.body.id}`).set(creator.auth).expect(200);
      expect(read.body).toEqual(res.body);
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expect(res.headers.etag).toBe(read.headers.etag);
    });

    it('accepts a description of 2000 characters and a name of 100', async () => {
      const res = await t.http
        .post('/workspaces')
        .set(roles.member.auth)
        .send({ name: 'long', description: 'd'.repeat(2000) })
        .expect(201);
      expect(res.body.description).toHaveLength(2000);
      const longest = await t.http
        .post('/workspaces')
        .set(roles.member.auth)
        .send({ name: 'x'.repeat(100) })
        .expect(201);
      expect(longest.body.name).toHaveLength(100);
    });

    it('is 400 for an empty, overlong or missing name, an overlong description and server-owned fields; 401 without a token', async () => {
      expectProblem(
        await t.http.post('/workspaces').set(roles.member.auth).send({ name: '   ' }),
        400,
        'validation_failed',
      );
      expectProblem(
        await t.http
          .post('/workspaces')
          .set(roles.member.auth)
          .send({ name: 'x'.repeat(101) }),
        400,
      );
      expectProblem(await t.http.post('/workspaces').set(roles.member.auth).send({ description: 'no name' }), 400);
      expectProblem(await t.http.post('/workspaces').set(roles.member.auth).send({ name: null }), 400);
      expectProblem(
        await t.http
          .post('/workspaces')
          .set(roles.member.auth)
          .send({ name: 'x', description: 'd'.repeat(2001) }),
        400,
      );
      expectProblem(
        await t.http.post('/workspaces').set(roles.member.auth).send({ name: 'x', id: randomUUID(), version: 7 }),
        400,
      );
      expectProblem(
        await t.http
          .post('/workspaces')
          .set(roles.member.auth)
          .send({ name: 'x', embedding_config: { provider: 'remote' } }),
        400,
      );
      expectProblem(await t.http.post('/workspaces').send({ name: 'x' }), 401, 'unauthenticated');
    });
  });

  describe('GET /workspaces', () => {
    it('is 200 with a page of list items carrying the caller role', async () => {
      const mine = await t.http.get('/workspaces').set(roles.viewer.auth).expect(200);
      expect(mine.body).toEqual({
        items: [expect.objectContaining({ id: ws, role: 'viewer', member_count: 4 })],
        total: 1,
        page: 1,
        page_size: 50,
      });
      expect(Object.keys(mine.body.items[0]).sort()).toEqual([
        'created_at',
        'description',
        'id',
        'member_count',
        'name',
        'role',
        'updated_at',
      ]);
      const admins = await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'true' }).expect(200);
      expect(admins.body).toEqual({ items: [], total: 0, page: 1, page_size: 50 });
    });

    it('is 400 for an unknown sort, a page size over 200 or a mine that is not a boolean, 401 without a token', async () => {
      expectProblem(await t.http.get('/workspaces').set(roles.owner.auth).query({ sort: 'secret' }), 400);
      expectProblem(await t.http.get('/workspaces').set(roles.owner.auth).query({ page_size: 201 }), 400);
      expectProblem(await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'yes' }), 400);
      expectProblem(await t.http.get('/workspaces'), 401);
    });
  });

  describe('GET /workspaces/{workspace_id}', () => {
    it('reads with an ETag for any member and a system admin; 403 for outsiders, 404 unknown, 400 malformed, 401 anonymous', async () => {
      const res = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id: ws, role: 'viewer', member_count: 4, embedding_config: { provider: 'local' } }),
      );
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expectProblem(await t.http.get(`/workspaces/${ws}`).set(roles.outsider.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}`).set(roles.owner.auth), 404, 'not_found');
      expectProblem(await t.http.get('/workspaces/123').set(roles.owner.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/workspaces/${ws}`), 401);
      await t.http.get(`/workspaces/${ws}`).set(sysadmin.auth).expect(200);
    });
  });

  describe('PATCH /workspaces/{workspace_id}', () => {
    it('is 200 with the workspace (name trimmed) and a new ETag for an admin with If-Match; 412 for a stale one', async () => {
      const read = await t.http.get(`/workspaces/${ws}`).set(roles.admin.auth).expect(200);
      const res = await t.http
        .patch(`/workspaces/${ws}`)
        .set(roles.admin.auth)
        .set('If-Match', read.headers.etag)
        .send({ name: ' Renamed ' })
        .expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          name: 'Renamed',
          description: read.body.description,
          version: read.body.version + 1,
          role: 'admin',
        }),
      );
      expect(res.headers.etag).not.toBe(read.headers.etag);
      const stale = await t.http
        .patch(`/workspaces/${ws}`)
        .set(roles.owner.auth)
        .set('If-Match', read.headers.etag)
        .send({ name: 'Lost' });
      expectProblem(stale, 412, 'precondition_failed');
      const after = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(after.headers.etag).toBe(res.headers.etag);
    });

    it('is 400 for null or invalid fields and server-owned ones, 403 for members and viewers, 404 unknown, 401 anonymous', async () => {
      for (const body of [
        { name: null },
        { description: null },
        { name: '' },
        { name: 'x'.repeat(101) },
        { description: 'd'.repeat(2001) },
        { embedding_config: {} },
        { version: 9 },
      ]) {
        expectProblem(
          await t.http.patch(`/workspaces/${ws}`).set(roles.admin.auth).send(body),
          400,
          'validation_failed',
        );
      }
      expectProblem(await t.http.patch(`/workspaces/${ws}`).set(roles.member.auth).send({ name: 'No' }), 403);
      expectProblem(await t.http.patch(`/workspaces/${ws}`).set(roles.viewer.auth).send({ name: 'No' }), 403);
      expectProblem(await t.http.patch(`/workspaces/${randomUUID()}`).set(roles.admin.auth).send({ name: 'No' }), 404);
      expectProblem(await t.http.patch(`/workspaces/${ws}`).send({ name: 'No' }), 401);
      expect((await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth)).body.name).toBe('Renamed');
    });
  });

  describe('DELETE /workspaces/{workspace_id}', () => {
    it('is 204 with no body for the owner; 403 for admins and outsiders, 404 once gone, 401 anonymous, 400 malformed', async () => {
      const owner = await t.factory.actor();
      const created = await t.http.post('/workspaces').set(owner.auth).send({ name: 'doomed' }).expect(201);
      const id = created.body.id;
      const admin = await t.factory.actor();
      await t.factory.addMember(id, admin.id, 'admin');
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(admin.auth), 403);
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(roles.outsider.auth), 403);
      await t.http.get(`/workspaces/${id}`).set(owner.auth).expect(200);

      const del = await t.http.delete(`/workspaces/${id}`).set(owner.auth).expect(204);
      expect(del.text).toBe('');
      expectProblem(await t.http.get(`/workspaces/${id}`).set(owner.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(owner.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${ws}`), 401);
      expectProblem(await t.http.delete('/workspaces/not-a-uuid').set(owner.auth), 400, 'invalid_identifier');
    });

    it('is 204 for a system admin who is not a member', async () => {
      const owner = await t.factory.actor();
      const created = await t.http.post('/workspaces').set(owner.auth).send({ name: 'abandoned' }).expect(201);
      await t.http.delete(`/workspaces/${created.body.id}`).set(sysadmin.auth).expect(204);
    });
  });

  describe('PUT /workspaces/{workspace_id}/embedding-config', () => {
    it('is 200 with the workspace and the ETag a GET answers for an admin with If-Match; 412 for a stale one', async () => {
      await t.http
        .post('/embedding-configs')
        .set(roles.admin.auth)
        .send({
          workspace_id: ws,
          name: 'openai-small',
          provider: 'openai_compatible',
          base_url: 'https://api.example.com/v1',
          model: 'text-embedding-3-small',
        })
        .expect(201);
      const before = await t.http.get(`/workspaces/${ws}`).set(roles.admin.auth).expect(200);
      const remote = {
        provider: 'remote',
        config_ref: 'openai-small',
        model: 'text-embedding-3-small',
        dimensions: 1536,
      };
      const res = await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.admin.auth)
        .set('If-Match', before.headers.etag)
        .send(remote)
        .expect(200);
      expect(res.body).toEqual({
        ...before.body,
        embedding_config: remote,
        version: before.body.version + 1,
        updated_at: expect.any(String),
      });
      const read = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(res.headers.etag).toBe(read.headers.etag);
      expectProblem(
        await t.http
          .put(`/workspaces/${ws}/embedding-config`)
          .set(roles.owner.auth)
          .set('If-Match', before.headers.etag)
          .send({ provider: 'local' }),
        412,
        'precondition_failed',
      );
    });

    it('is 400 for bad bodies, 403 for members and viewers, 404 unknown, 401 without a token', async () => {
      const bad = [
        { provider: 'remote' },
        { provider: 'remote', config_ref: '' },
        { provider: 'magic' },
        {},
        { provider: 'local', dimensions: 0 },
        { provider: 'local', dimensions: 8193 },
        { provider: 'local', dimensions: '384' },
        { provider: 'local', dimensions: 1.5 },
        { provider: 'local', model: 'has spaces' },
        { provider: 'local', model: null },
        { provider: 'local', api_key: 'sk-123' },
      ];
      for (const body of bad)
        expectProblem(
          await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.admin.auth).send(body),
          400,
          'validation_failed',
        );
      await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.admin.auth)
        .send({ provider: 'local', dimensions: 8192 })
        .expect(200);
      expectProblem(
        await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.member.auth).send({ provider: 'local' }),
        403,
      );
      expectProblem(
        await t.http.put(`/workspaces/${ws}/embedding-config`).set(roles.viewer.auth).send({ provider: 'local' }),
        403,
      );
      expectProblem(
        await t.http
          .put(`/workspaces/${randomUUID()}/embedding-config`)
          .set(roles.admin.auth)
          .send({ provider: 'local' }),
        404,
      );
      expectProblem(await t.http.put(`/workspaces/${ws}/embedding-config`).send({ provider: 'local' }), 401);
    });
  });

  describe('isolation between workspaces', () => {
    it('is 403 for a member of workspace A, whatever their role, reading, changing or deleting workspace B', async () => {
      const b = await t.factory.workspaceWithRoles();
      const before = await t.http.get(`/workspaces/${b.workspace.id}`).set(b.owner.auth).expect(200);
      for (const intruder of [roles.owner, roles.admin, roles.member, roles.viewer]) {
        expectProblem(await t.http.get(`/workspaces/${b.workspace.id}`).set(intruder.auth), 403);
        expectProblem(
          await t.http.patch(`/workspaces/${b.workspace.id}`).set(intruder.auth).send({ name: 'taken over' }),
          403,
        );
        expectProblem(
          await t.http
            .put(`/workspaces/${b.workspace.id}/embedding-config`)
            .set(intruder.auth)
            .send({ provider: 'remote', config_ref: 'evil' }),
          403,
        );
        expectProblem(await t.http.delete(`/workspaces/${b.workspace.id}`).set(intruder.auth), 403);
      }
      const after = await t.http.get(`/workspaces/${b.workspace.id}`).set(b.owner.auth).expect(200);
      expect(after.body).toEqual(before.body);
      expect(after.headers.etag).toBe(before.headers.etag);
    });
  });
});
