import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('workspace members, users and candidates', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const roleOf = async (userId: string) =>
    ((await t.dataSource.query('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [ws, userId])) as Array<{ role: string }>)[0]?.role;

  describe('GET members', () => {
    it('lists members with roles for viewers; 403 outsider, 404 unknown workspace, 401 anonymous', async () => {
      const res = await t.http.get(`/workspaces/${ws}/members`).set(r.viewer.auth).expect(200);
      expect(res.body).toHaveLength(4);
      expect(res.body).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: r.owner.id, email: r.owner.email, role: 'owner', user_status: 'active' })]));
      expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(r.outsider.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/members`).set(r.owner.auth), 404);
      expectProblem(await t.http.get(`/workspaces/${ws}/members`), 401);
    });
  });

  describe('POST members', () => {
    it('adds by user id or by email (admins), audited', async () => {
      const a = await t.factory.newUser();
      const b = await t.factory.newUser();
      const byId = await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: a.id, role: 'member' }).expect(201);
      expect(byId.body).toEqual(expect.objectContaining({ workspace_id: ws, user_id: a.id, role: 'member', added_by: r.admin.id }));
      await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ email: b.email.toUpperCase(), role: 'viewer' }).expect(201);
      expect(await roleOf(b.id)).toBe('viewer');
      const audit = await t.dataSource.query(`SELECT details FROM audit_events WHERE action = 'member.added' AND target_id = $1`, [a.id]);
      expect(audit[0].details).toEqual({ role: 'member' });
    });

    it('refuses duplicates (409), deactivated users (409), unknown users (404), owner grants by admins (403)', async () => {
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: r.member.id, role: 'viewer' }), 409, 'already_member');
      const gone = await t.factory.newUser({ status: 'deactivated' });
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: gone.id, role: 'viewer' }), 409, 'user_deactivated');
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: randomUUID(), role: 'viewer' }), 404);
      const c = await t.factory.newUser();
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: c.id, role: 'owner' }), 403, 'owner_role_required');
      await t.http.post(`/workspaces/${ws}/members`).set(r.owner.auth).send({ user_id: c.id, role: 'owner' }).expect(201);
    });

    it('is 400 without exactly one of user_id and email or with a bad role; 403 for members; 401 anonymous', async () => {
      const u = await t.factory.newUser();
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ role: 'viewer' }), 400);
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: u.id, email: u.email, role: 'viewer' }), 400);
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: u.id, role: 'god' }), 400);
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).set(r.member.auth).send({ user_id: u.id, role: 'viewer' }), 403);
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).send({ user_id: u.id, role: 'viewer' }), 401);
    });
  });

  describe('PATCH members/{user_id}', () => {
    it('changes roles (admins); only owners touch the owner role; the last owner cannot be demoted', async () => {
      const u = await t.factory.newUser();
      await t.factory.addMember(ws, u.id, 'viewer');
      const res = await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).send({ role: 'member' }).expect(200);
      expect(res.body.role).toBe('member');
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).send({ role: 'owner' }), 403, 'owner_role_required');
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth).send({ role: 'viewer' }), 403, 'owner_role_required');

      const solo = await t.factory.actor();
      const own = await t.http.post('/workspaces').set(solo.auth).send({ name: 'solo' }).expect(201);
      expectProblem(await t.http.patch(`/workspaces/${own.body.id}/members/${solo.id}`).set(solo.auth).send({ role: 'admin' }), 409, 'last_owner');
      const co = await t.factory.newUser();
      await t.factory.addMember(own.body.id, co.id, 'owner');
      await t.http.patch(`/workspaces/${own.body.id}/members/${solo.id}`).set(solo.auth).send({ role: 'admin' }).expect(200);
      const audit = await t.dataSource.query(`SELECT details FROM audit_events WHERE action = 'member.role_changed' AND target_id = $1`, [solo.id]);
      expect(audit[0].details).toEqual({ from: 'owner', to: 'admin' });
    });

    it('is 404 for a non-member, 400 for a bad role or id, 403 for members, 401 anonymous', async () => {
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.outsider.id}`).set(r.admin.auth).send({ role: 'viewer' }), 404);
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.admin.auth).send({ role: 'boss' }), 400);
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/nope`).set(r.admin.auth).send({ role: 'viewer' }), 400, 'invalid_identifier');
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.member.auth).send({ role: 'admin' }), 403);
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).send({ role: 'admin' }), 401);
    });
  });

  describe('DELETE members/{user_id}', () => {
    it('admins remove members, who lose access at once; anyone may leave; the last owner stays', async () => {
      const u = await t.factory.actor();
      await t.factory.addMember(ws, u.id, 'member');
      await t.http.get(`/workspaces/${ws}`).set(u.auth).expect(200);
      await t.http.delete(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).expect(204);
      expectProblem(await t.http.get(`/workspaces/${ws}`).set(u.auth), 403);

      const leaver = await t.factory.actor();
      await t.factory.addMember(ws, leaver.id, 'viewer');
      await t.http.delete(`/workspaces/${ws}/members/${leaver.id}`).set(leaver.auth).expect(204);
      expect(await roleOf(leaver.id)).toBeUndefined();

      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.member.id}`).set(r.viewer.auth), 403);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth), 403, 'owner_role_required');

      const solo = await t.factory.actor();
      const own = await t.http.post('/workspaces').set(solo.auth).send({ name: 'solo-2' }).expect(201);
      expectProblem(await t.http.delete(`/workspaces/${own.body.id}/members/${solo.id}`).set(solo.auth), 409, 'last_owner');
    });

    it('is 404 for a non-member, 401 anonymous, 403 for outsiders', async () => {
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.outsider.id}`).set(r.admin.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`), 401);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.outsider.auth), 403);
    });
  });

  describe('POST users', () => {
    it('creates a user straight into the workspace with a password', async () => {
      const res = await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send({ email: 'direct@test.local', display_name: 'Direct', password: 'direct-pass-1', role: 'member' }).expect(201);
      expect(res.body).toEqual(expect.objectContaining({ workspace_id: ws, email: 'direct@test.local', role: 'member' }));
      expect(res.body.reset_token).toBeUndefined();
      const token = await t.factory.login({ email: 'direct@test.local', password: 'direct-pass-1' });
      await t.http.get(`/workspaces/${ws}`).set('Authorization', `Bearer ${token}`).expect(200);
    });

    it('without a password hands back a one-time reset token the user redeems', async () => {
      const res = await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send({ email: 'nopass@test.local', display_name: 'No Pass', role: 'viewer' }).expect(201);
      expect(res.body.reset_token).toMatch(/^rst_/);
      const login = await t.http.post('/auth/token').send({ grant_type: 'reset_token', reset_token: res.body.reset_token, new_password: 'chosen-pass-1' }).expect(200);
      await t.http.get(`/workspaces/${ws}/members`).set('Authorization', `Bearer ${login.body.access_token}`).expect(200);
    });

    it('is 409 for a registered email, 403 for owner role by an admin or for members, 400 invalid, 401 anonymous', async () => {
      expectProblem(await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send({ email: r.outsider.email, display_name: 'x', role: 'viewer' }), 409, 'email_taken');
      expectProblem(await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send({ email: 'own@test.local', display_name: 'x', role: 'owner' }), 403);
      expectProblem(await t.http.post(`/workspaces/${ws}/users`).set(r.member.auth).send({ email: 'm@test.local', display_name: 'x', role: 'viewer' }), 403);
      expectProblem(await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send({ email: 'bad', display_name: 'x', role: 'viewer' }), 400);
      expectProblem(await t.http.post(`/workspaces/${ws}/users`).send({ email: 'a@test.local', display_name: 'x', role: 'viewer' }), 401);
      expect(await t.dataSource.query(`SELECT 1 FROM users WHERE email = 'own@test.local'`)).toHaveLength(0);
    });
  });

  describe('GET user-candidates', () => {
    it('lists active non-members matching q (admins)', async () => {
      const a = await t.factory.newUser({ email: 'cand-one@cands.test' });
      await t.factory.newUser({ email: 'cand-two@cands.test', status: 'deactivated' });
      const member = await t.factory.newUser({ email: 'cand-three@cands.test' });
      await t.factory.addMember(ws, member.id, 'viewer');
      const res = await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ q: 'CANDS.TEST' }).expect(200);
      expect(res.body).toEqual([{ id: a.id, email: 'cand-one@cands.test', display_name: 'cand-one' }]);
      const limited = await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 1 }).expect(200);
      expect(limited.body).toHaveLength(1);
    });

    it('is 400 for a limit over 50, 403 for members, 404 unknown workspace, 401 anonymous', async () => {
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 51 }), 400);
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.member.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/user-candidates`).set(r.admin.auth), 404);
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`), 401);
    });
  });
});
