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

  const auditOf = (
    action: string,
    targetId: string,
  ): Promise<Array<{ actor_id: string; workspace_id: string; details: Record<string, unknown> }>> =>
    t.dataSource.query(
      `SELECT actor_id, workspace_id, details FROM audit_events WHERE action = $1 AND target_id = $2 ORDER BY created_at`,
      [action, targetId],
    );

  describe('POST /workspaces', () => {
    it('creates a workspace whose creator is its owner, with the local embedder, in one go', async () => {
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
      expect(res.headers.etag).toBe(read.headers.etag);
      const members = await t.http.get(`/workspaces/${res.body.id}/members`).set(creator.auth).expect(200);
      expect(members.body).toEqual([
        expect.objectContaining({ user_id: creator.id, role: 'owner', added_by: creator.id }),
      ]);
      const audit = await auditOf('workspace.created', res.body.id);
      expect(audit).toEqual([
        expect.objectContaining({ actor_id: creator.id, workspace_id: res.body.id, details: { name: 'Support bot' } }),
      ]);
    });

    it('accepts a description of 2000 characters and no description at all', async () => {
      const res = await t.http
        .post('/workspaces')
        .set(roles.member.auth)
        .send({ name: 'long', description: 'd'.repeat(2000) })
        .expect(201);
      expect(res.body.description).toHaveLength(2000);
      const bare = await t.http
        .post('/workspaces')
        .set(roles.member.auth)
        .send({ name: 'x'.repeat(100) })
        .expect(201);
      expect(bare.body.description).toBe('');
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
    it('lists only the caller workspaces with their role; a system admin sees all, or only theirs with mine=true', async () => {
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
      const none = await t.http.get('/workspaces').set(roles.outsider.auth).expect(200);
      expect(none.body).toEqual({ items: [], total: 0, page: 1, page_size: 50 });

      const all = await t.http.get('/workspaces').set(sysadmin.auth).query({ page_size: 200 }).expect(200);
      expect(all.body.items).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: ws, role: null, member_count: 4 })]),
      );
      const [{ count }] = await t.dataSource.query('SELECT count(*)::int AS count FROM workspaces');
      expect(all.body.total).toBe(count);
      expect((await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'true' }).expect(200)).body.total).toBe(
        0,
      );
      const own = await t.http.post('/workspaces').set(sysadmin.auth).send({ name: 'admin own' }).expect(201);
      const adminsOwn = await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'true' }).expect(200);
      expect(adminsOwn.body.items).toEqual([expect.objectContaining({ id: own.body.id, role: 'owner' })]);
      expect(
        (await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'false', page_size: 200 }).expect(200)).body
          .total,
      ).toBe(count + 1);
      expectProblem(await t.http.get('/workspaces').set(sysadmin.auth).query({ mine: 'yes' }), 400);
    });

    it('filters by a name substring (case-insensitive, wildcards literal), sorts and pages', async () => {
      const u = await t.factory.actor();
      for (const name of ['Beta eval', 'alpha eval', 'Gamma', '100% eval'])
        await t.http.post('/workspaces').set(u.auth).send({ name }).expect(201);
      const byName = await t.http.get('/workspaces').set(u.auth).query({ q: 'EVAL', sort: '-name' }).expect(200);
      expect(byName.body.items.map((w: { name: string }) => w.name)).toEqual(['Beta eval', 'alpha eval', '100% eval']);
      const literal = await t.http.get('/workspaces').set(u.auth).query({ q: '%' }).expect(200);
      expect(literal.body.items.map((w: { name: string }) => w.name)).toEqual(['100% eval']);
      const ascending = await t.http.get('/workspaces').set(u.auth).expect(200);
      expect(ascending.body.items.map((w: { name: string }) => w.name)).toEqual([
        '100% eval',
        'alpha eval',
        'Beta eval',
        'Gamma',
      ]);
      const newest = await t.http.get('/workspaces').set(u.auth).query({ sort: '-created_at' }).expect(200);
      expect(newest.body.items.map((w: { name: string }) => w.name)).toEqual([
        '100% eval',
        'Gamma',
        'alpha eval',
        'Beta eval',
      ]);
      const oldest = await t.http
        .get('/workspaces')
        .set(u.auth)
        .query({ sort: 'created_at', page: 2, page_size: 3 })
        .expect(200);
      expect(oldest.body).toEqual({
        items: [expect.objectContaining({ name: '100% eval' })],
        total: 4,
        page: 2,
        page_size: 3,
      });
    });

    it('is 400 for an unknown sort or a page size over 200, 401 without a token', async () => {
      expectProblem(await t.http.get('/workspaces').set(roles.owner.auth).query({ sort: 'secret' }), 400);
      expectProblem(await t.http.get('/workspaces').set(roles.owner.auth).query({ page_size: 201 }), 400);
      expectProblem(await t.http.get('/workspaces'), 401);
    });
  });

  describe('GET /workspaces/{workspace_id}', () => {
    it('reads with an ETag for any member; 403 for outsiders, 404 unknown, 400 malformed, 401 anonymous', async () => {
      const res = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id: ws, role: 'viewer', member_count: 4, embedding_config: { provider: 'local' } }),
      );
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expect((await t.http.get(`/workspaces/${ws}`).set(roles.owner.auth).expect(200)).body.role).toBe('owner');
      expectProblem(await t.http.get(`/workspaces/${ws}`).set(roles.outsider.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}`).set(roles.owner.auth), 404, 'not_found');
      expectProblem(await t.http.get('/workspaces/123').set(roles.owner.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/workspaces/${ws}`), 401);
      const asAdmin = await t.http.get(`/workspaces/${ws}`).set(sysadmin.auth).expect(200);
      expect(asAdmin.body.role).toBeNull();
    });
  });

  describe('PATCH /workspaces/{workspace_id}', () => {
    it('renames with If-Match (admins), refuses stale ETags with 412, audits the change', async () => {
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
      expect(after.body.name).toBe('Renamed');
      expect(after.headers.etag).toBe(res.headers.etag);
      const audit = await auditOf('workspace.updated', ws);
      expect(audit).toHaveLength(1);
      expect(audit[0].details).toEqual({ name: { from: read.body.name, to: 'Renamed' } });
    });

    it('changes and clears the description; an unchanged body keeps the version; If-Match * and no If-Match write', async () => {
      const before = await t.http.get(`/workspaces/${ws}`).set(roles.owner.auth).expect(200);
      const set = await t.http
        .patch(`/workspaces/${ws}`)
        .set(roles.owner.auth)
        .set('If-Match', '*')
        .send({ description: 'Nightly regression suite' })
        .expect(200);
      expect(set.body).toEqual(
        expect.objectContaining({ description: 'Nightly regression suite', version: before.body.version + 1 }),
      );
      const same = await t.http
        .patch(`/workspaces/${ws}`)
        .set(roles.owner.auth)
        .send({ description: 'Nightly regression suite' })
        .expect(200);
      expect(same.body.version).toBe(set.body.version);
      const cleared = await t.http
        .patch(`/workspaces/${ws}`)
        .set(roles.owner.auth)
        .send({ description: '' })
        .expect(200);
      expect((await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth)).body).toEqual(
        expect.objectContaining({ description: '', version: cleared.body.version }),
      );
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
    it('deletes (owners only) with everything in it; the audit entry outlives it', async () => {
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
      expect(await t.dataSource.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1', [id])).toHaveLength(0);
      expect((await t.http.get('/workspaces').set(admin.auth).expect(200)).body.total).toBe(0);
      expect(await auditOf('workspace.deleted', id)).toEqual([
        expect.objectContaining({ actor_id: owner.id, details: { name: 'doomed' } }),
      ]);
      expectProblem(await t.http.delete(`/workspaces/${id}`).set(owner.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${ws}`), 401);
      expectProblem(await t.http.delete('/workspaces/not-a-uuid').set(owner.auth), 400, 'invalid_identifier');
    });

    it('lets a system admin delete any workspace', async () => {
      const owner = await t.factory.actor();
      const created = await t.http.post('/workspaces').set(owner.auth).send({ name: 'abandoned' }).expect(201);
      await t.http.delete(`/workspaces/${created.body.id}`).set(sysadmin.auth).expect(204);
      expectProblem(await t.http.get(`/workspaces/${created.body.id}`).set(owner.auth), 404);
    });
  });

  describe('PUT /workspaces/{workspace_id}/embedding-config', () => {
    it('switches to a remote config and back to local (admins), persisted and audited', async () => {
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
      expectProblem(
        await t.http
          .put(`/workspaces/${ws}/embedding-config`)
          .set(roles.admin.auth)
          .send({ ...remote, config_ref: 'no-such-config' }),
        400,
        'validation_failed',
      );
      const res = await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.admin.auth)
        .set('If-Match', before.headers.etag)
        .send(remote)
        .expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id: ws, embedding_config: remote, version: before.body.version + 1 }),
      );
      const read = await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth).expect(200);
      expect(read.body.embedding_config).toEqual(remote);
      expect(res.headers.etag).toBe(read.headers.etag);

      const back = await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.owner.auth)
        .send({ provider: 'local' })
        .expect(200);
      expect(back.body.embedding_config).toEqual({ provider: 'local' });
      const audit = await auditOf('workspace.embedding_config_changed', ws);
      expect(audit.map((a) => a.details)).toEqual([
        { from: { provider: 'local' }, to: remote },
        { from: remote, to: { provider: 'local' } },
      ]);
      expect(audit.map((a) => a.actor_id)).toEqual([roles.admin.id, roles.owner.id]);
    });

    it('keeps model and dimensions for the local embedder; an identical PUT changes nothing', async () => {
      const local = { provider: 'local', model: 'minilm-l6', dimensions: 384 };
      const first = await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.admin.auth)
        .send(local)
        .expect(200);
      expect(first.body.embedding_config).toEqual(local);
      const again = await t.http
        .put(`/workspaces/${ws}/embedding-config`)
        .set(roles.admin.auth)
        .send(local)
        .expect(200);
      expect(again.body.version).toBe(first.body.version);
      expect(
        (await auditOf('workspace.embedding_config_changed', ws)).filter(
          (a) => (a.details.to as { model?: string }).model === 'minilm-l6',
        ),
      ).toHaveLength(1);
    });

    it('is 412 for a stale If-Match and leaves the config as it was', async () => {
      const read = await t.http.get(`/workspaces/${ws}`).set(roles.admin.auth).expect(200);
      await t.http.patch(`/workspaces/${ws}`).set(roles.admin.auth).send({ description: 'moved on' }).expect(200);
      expectProblem(
        await t.http
          .put(`/workspaces/${ws}/embedding-config`)
          .set(roles.admin.auth)
          .set('If-Match', read.headers.etag)
          .send({ provider: 'remote', config_ref: 'x' }),
        412,
      );
      expect((await t.http.get(`/workspaces/${ws}`).set(roles.viewer.auth)).body.embedding_config).toEqual(
        read.body.embedding_config,
      );
    });

    it('is 400 for bad bodies, 403 for members and viewers, 404 unknown, 401 without a token', async () => {
      const bad = [
        { provider: 'remote' },
        { provider: 'remote', config_ref: '' },
        { provider: 'local', config_ref: 'openai-small' },
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
    it('a member of workspace A, whatever their role, cannot list, read, change or delete workspace B', async () => {
      const b = await t.factory.workspaceWithRoles();
      const before = await t.http.get(`/workspaces/${b.workspace.id}`).set(b.owner.auth).expect(200);
      for (const intruder of [roles.owner, roles.admin, roles.member, roles.viewer]) {
        const listed = await t.http.get('/workspaces').set(intruder.auth).query({ page_size: 200 }).expect(200);
        expect(listed.body.items.map((w: { id: string }) => w.id)).not.toContain(b.workspace.id);
        expect(
          (await t.http.get('/workspaces').set(intruder.auth).query({ q: b.workspace.name }).expect(200)).body.total,
        ).toBe(0);
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
