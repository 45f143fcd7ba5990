import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../factories/factory.js';
import { MembersService } from '../../../src/modules/workspaces/members.service.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { TransactionRunner } from '../../../libs/database/unit-of-work.js';

describe('workspace members, users and candidates', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let sysadmin: Actor;
  let ws: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    sysadmin = await t.factory.actor({ systemRole: 'admin' });
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The role as GET members reports it (undefined when not a member). */
  const roleOf = async (userId: string, workspaceId = ws): Promise<string | undefined> => {
    const res = await t.http.get(`/workspaces/${workspaceId}/members`).set(sysadmin.auth).expect(200);
    return (res.body as Array<{ user_id: string; role: string }>).find((m) => m.user_id === userId)?.role;
  };
  const auditOf = (
    action: string,
    targetId: string,
    workspaceId = ws,
  ): Promise<Array<{ actor_id: string; details: Record<string, unknown> }>> =>
    t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = $1 AND target_id = $2 AND workspace_id = $3 ORDER BY created_at`,
      [action, targetId, workspaceId],
    );
  /** A fresh workspace with one owner (the actor), created through the API. */
  const soloWorkspace = async (name: string): Promise<{ owner: Actor; id: string }> => {
    const owner = await t.factory.actor();
    const res = await t.http.post('/workspaces').set(owner.auth).send({ name }).expect(201);
    return { owner, id: res.body.id };
  };

  describe('GET /workspaces/{workspace_id}/members', () => {
    it('lists members with roles and user details for viewers', async () => {
      const res = await t.http.get(`/workspaces/${ws}/members`).set(r.viewer.auth).expect(200);
      expect(res.body).toHaveLength(4);
      const owner = res.body.find((m: { user_id: string }) => m.user_id === r.owner.id);
      expect(owner).toEqual({
        workspace_id: ws,
        user_id: r.owner.id,
        email: r.owner.email,
        display_name: r.owner.email.split('@')[0],
        role: 'owner',
        user_status: 'active',
        joined_at: expect.any(String),
        added_by: null,
      });
      expect(res.body.map((m: { role: string }) => m.role).sort()).toEqual(['admin', 'member', 'owner', 'viewer']);
    });

    it('shows a deactivated member as such', async () => {
      const u = await t.factory.newUser({ status: 'deactivated' });
      await t.factory.addMember(ws, u.id, 'viewer');
      const res = await t.http.get(`/workspaces/${ws}/members`).set(r.viewer.auth).expect(200);
      expect(res.body.find((m: { user_id: string }) => m.user_id === u.id)).toEqual(
        expect.objectContaining({ user_status: 'deactivated' }),
      );
      await t.dataSource.query('DELETE FROM workspace_members WHERE user_id = $1', [u.id]);
    });

    it('is 403 for outsiders, 404 for an unknown workspace, 400 for a malformed id, 401 anonymous', async () => {
      expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(r.outsider.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/members`).set(r.owner.auth), 404, 'not_found');
      expectProblem(await t.http.get('/workspaces/xyz/members').set(r.owner.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/workspaces/${ws}/members`), 401);
    });
  });

  describe('POST /workspaces/{workspace_id}/members', () => {
    it('adds by user id or by email (admins), persisted and audited', async () => {
      const a = await t.factory.newUser();
      const b = await t.factory.newUser();
      const byId = await t.http
        .post(`/workspaces/${ws}/members`)
        .set(r.admin.auth)
        .send({ user_id: a.id, role: 'member' })
        .expect(201);
      expect(byId.body).toEqual(
        expect.objectContaining({
          workspace_id: ws,
          user_id: a.id,
          email: a.email,
          role: 'member',
          user_status: 'active',
          added_by: r.admin.id,
        }),
      );
      const byEmail = await t.http
        .post(`/workspaces/${ws}/members`)
        .set(r.admin.auth)
        .send({ email: `  ${b.email.toUpperCase()} `, role: 'viewer' })
        .expect(201);
      expect(byEmail.body.user_id).toBe(b.id);
      expect(await roleOf(a.id)).toBe('member');
      expect(await roleOf(b.id)).toBe('viewer');
      expect(await auditOf('member.added', a.id)).toEqual([
        expect.objectContaining({ actor_id: r.admin.id, details: { role: 'member' } }),
      ]);
      const added = await t.factory.login(a);
      await t.http.get(`/workspaces/${ws}`).set('Authorization', `Bearer ${added}`).expect(200);
    });

    it('refuses duplicates (409), deactivated users (409), unknown users (404) and owner grants by admins (403)', async () => {
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: r.member.id, role: 'viewer' }),
        409,
        'already_member',
      );
      expect(await roleOf(r.member.id)).toBe('member');
      const gone = await t.factory.newUser({ status: 'deactivated' });
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: gone.id, role: 'viewer' }),
        409,
        'user_deactivated',
      );
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/members`)
          .set(r.admin.auth)
          .send({ user_id: randomUUID(), role: 'viewer' }),
        404,
        'not_found',
      );
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/members`)
          .set(r.admin.auth)
          .send({ email: 'nobody@nowhere.test', role: 'viewer' }),
        404,
        'not_found',
      );
      const c = await t.factory.newUser();
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: c.id, role: 'owner' }),
        403,
        'owner_role_required',
      );
      expect(await roleOf(c.id)).toBeUndefined();
      await t.http
        .post(`/workspaces/${ws}/members`)
        .set(r.owner.auth)
        .send({ user_id: c.id, role: 'owner' })
        .expect(201);
      expect(await roleOf(c.id)).toBe('owner');
    });

    it('lets a system admin who is not a member grant any role', async () => {
      const u = await t.factory.newUser();
      const res = await t.http
        .post(`/workspaces/${ws}/members`)
        .set(sysadmin.auth)
        .send({ user_id: u.id, role: 'owner' })
        .expect(201);
      expect(res.body).toEqual(expect.objectContaining({ role: 'owner', added_by: sysadmin.id }));
    });

    it('is 400 without exactly one of user_id and email, with nulls or a bad role; 403 for members and viewers; 401 anonymous', async () => {
      const u = await t.factory.newUser();
      const bad = [
        { role: 'viewer' },
        { user_id: u.id, email: u.email, role: 'viewer' },
        { user_id: null, role: 'viewer' },
        { user_id: null, email: u.email, role: 'viewer' },
        { user_id: 'not-a-uuid', role: 'viewer' },
        { email: 'not-an-email', role: 'viewer' },
        { user_id: u.id, role: 'god' },
        { user_id: u.id },
        { user_id: u.id, role: 'viewer', added_by: r.owner.id },
      ];
      for (const body of bad)
        expectProblem(
          await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send(body),
          400,
          'validation_failed',
        );
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.member.auth).send({ user_id: u.id, role: 'viewer' }),
        403,
      );
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.viewer.auth).send({ user_id: u.id, role: 'viewer' }),
        403,
      );
      expectProblem(await t.http.post(`/workspaces/${ws}/members`).send({ user_id: u.id, role: 'viewer' }), 401);
      expectProblem(
        await t.http
          .post(`/workspaces/${randomUUID()}/members`)
          .set(r.admin.auth)
          .send({ user_id: u.id, role: 'viewer' }),
        404,
      );
      expect(await roleOf(u.id)).toBeUndefined();
    });
  });

  describe('PATCH /workspaces/{workspace_id}/members/{user_id}', () => {
    it('changes roles (admins), persisted and audited; the same role is a no-op', async () => {
      const u = await t.factory.newUser();
      await t.factory.addMember(ws, u.id, 'viewer');
      const res = await t.http
        .patch(`/workspaces/${ws}/members/${u.id}`)
        .set(r.admin.auth)
        .send({ role: 'admin' })
        .expect(200);
      expect(res.body).toEqual(expect.objectContaining({ user_id: u.id, role: 'admin' }));
      expect(await roleOf(u.id)).toBe('admin');
      await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).send({ role: 'member' }).expect(200);
      await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).send({ role: 'member' }).expect(200);
      expect((await auditOf('member.role_changed', u.id)).map((a) => a.details)).toEqual([
        { from: 'viewer', to: 'admin' },
        { from: 'admin', to: 'member' },
      ]);
    });

    it('only owners promote to owner or change an owner', async () => {
      const u = await t.factory.newUser();
      await t.factory.addMember(ws, u.id, 'member');
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).send({ role: 'owner' }),
        403,
        'owner_role_required',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.admin.id}`).set(r.admin.auth).send({ role: 'owner' }),
        403,
        'owner_role_required',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth).send({ role: 'viewer' }),
        403,
        'owner_role_required',
      );
      expect(await roleOf(r.owner.id)).toBe('owner');
      expect(await roleOf(r.admin.id)).toBe('admin');
      await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.owner.auth).send({ role: 'owner' }).expect(200);
      await t.http.patch(`/workspaces/${ws}/members/${u.id}`).set(r.owner.auth).send({ role: 'viewer' }).expect(200);
      expect(await roleOf(u.id)).toBe('viewer');
    });

    it('never demotes the last owner (409 last_owner), but does once there is another', async () => {
      const { owner, id } = await soloWorkspace('solo');
      expectProblem(
        await t.http.patch(`/workspaces/${id}/members/${owner.id}`).set(owner.auth).send({ role: 'admin' }),
        409,
        'last_owner',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${id}/members/${owner.id}`).set(sysadmin.auth).send({ role: 'viewer' }),
        409,
        'last_owner',
      );
      expect(await roleOf(owner.id, id)).toBe('owner');
      const co = await t.factory.newUser();
      await t.http
        .post(`/workspaces/${id}/members`)
        .set(owner.auth)
        .send({ user_id: co.id, role: 'owner' })
        .expect(201);
      await t.http.patch(`/workspaces/${id}/members/${owner.id}`).set(owner.auth).send({ role: 'admin' }).expect(200);
      expect(await roleOf(owner.id, id)).toBe('admin');
      expect(await auditOf('member.role_changed', owner.id, id)).toEqual([
        expect.objectContaining({ details: { from: 'owner', to: 'admin' } }),
      ]);
      // The former owner is an admin now: the co-owner is the last owner and stays one.
      expectProblem(
        await t.http.patch(`/workspaces/${id}/members/${co.id}`).set(owner.auth).send({ role: 'admin' }),
        403,
        'owner_role_required',
      );
    });

    it('is 404 for a non-member or unknown workspace, 400 for a bad role or id, 403 for members, 401 anonymous', async () => {
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.outsider.id}`).set(r.admin.auth).send({ role: 'viewer' }),
        404,
        'not_found',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${randomUUID()}`).set(r.admin.auth).send({ role: 'viewer' }),
        404,
      );
      expectProblem(
        await t.http
          .patch(`/workspaces/${randomUUID()}/members/${r.viewer.id}`)
          .set(r.admin.auth)
          .send({ role: 'viewer' }),
        404,
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.admin.auth).send({ role: 'boss' }),
        400,
      );
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.admin.auth).send({}), 400);
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/nope`).set(r.admin.auth).send({ role: 'viewer' }),
        400,
        'invalid_identifier',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.member.auth).send({ role: 'admin' }),
        403,
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.viewer.auth).send({ role: 'admin' }),
        403,
      );
      expectProblem(await t.http.patch(`/workspaces/${ws}/members/${r.viewer.id}`).send({ role: 'admin' }), 401);
      expect(await roleOf(r.viewer.id)).toBe('viewer');
    });
  });

  describe('DELETE /workspaces/{workspace_id}/members/{user_id}', () => {
    it('admins remove members, who lose access at once though their token stays valid', async () => {
      const u = await t.factory.actor();
      await t.factory.addMember(ws, u.id, 'member');
      await t.http.get(`/workspaces/${ws}`).set(u.auth).expect(200);
      const res = await t.http.delete(`/workspaces/${ws}/members/${u.id}`).set(r.admin.auth).expect(204);
      expect(res.text).toBe('');
      expectProblem(await t.http.get(`/workspaces/${ws}`).set(u.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(u.auth), 403);
      expect((await t.http.get('/workspaces').set(u.auth).expect(200)).body.total).toBe(0);
      await t.http.get('/auth/me').set(u.auth).expect(200);
      expect(await roleOf(u.id)).toBeUndefined();
      expect(await auditOf('member.removed', u.id)).toEqual([
        expect.objectContaining({ actor_id: r.admin.id, details: { role: 'member', left: false } }),
      ]);
    });

    it('any member may leave', async () => {
      const leaver = await t.factory.actor();
      await t.factory.addMember(ws, leaver.id, 'viewer');
      await t.http.delete(`/workspaces/${ws}/members/${leaver.id}`).set(leaver.auth).expect(204);
      expect(await roleOf(leaver.id)).toBeUndefined();
      expect(await auditOf('member.removed', leaver.id)).toEqual([
        expect.objectContaining({ actor_id: leaver.id, details: { role: 'viewer', left: true } }),
      ]);
    });

    it('viewers and members cannot remove others; admins cannot remove owners; owners can', async () => {
      expectProblem(
        await t.http.delete(`/workspaces/${ws}/members/${r.member.id}`).set(r.viewer.auth),
        403,
        'forbidden',
      );
      expectProblem(
        await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.member.auth),
        403,
        'forbidden',
      );
      expectProblem(
        await t.http.delete(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth),
        403,
        'owner_role_required',
      );
      expect(await roleOf(r.member.id)).toBe('member');
      expect(await roleOf(r.owner.id)).toBe('owner');

      const { owner, id } = await soloWorkspace('two owners');
      const co = await t.factory.actor();
      await t.factory.addMember(id, co.id, 'owner');
      const admin = await t.factory.actor();
      await t.factory.addMember(id, admin.id, 'admin');
      await t.http.delete(`/workspaces/${id}/members/${co.id}`).set(owner.auth).expect(204);
      expect(await roleOf(co.id, id)).toBeUndefined();
      const other = await t.factory.newUser();
      await t.factory.addMember(id, other.id, 'admin');
      await t.http.delete(`/workspaces/${id}/members/${other.id}`).set(admin.auth).expect(204);
    });

    it('never removes the last owner (409), not even when they leave; a co-owner makes leaving possible', async () => {
      const { owner, id } = await soloWorkspace('solo-2');
      expectProblem(await t.http.delete(`/workspaces/${id}/members/${owner.id}`).set(owner.auth), 409, 'last_owner');
      expectProblem(await t.http.delete(`/workspaces/${id}/members/${owner.id}`).set(sysadmin.auth), 409, 'last_owner');
      expect(await roleOf(owner.id, id)).toBe('owner');
      const co = await t.factory.newUser();
      await t.factory.addMember(id, co.id, 'owner');
      await t.http.delete(`/workspaces/${id}/members/${owner.id}`).set(owner.auth).expect(204);
      expectProblem(await t.http.get(`/workspaces/${id}`).set(owner.auth), 403);
    });

    it('is 404 for a non-member or unknown workspace, 400 for a malformed id, 401 anonymous, 403 for outsiders', async () => {
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.outsider.id}`).set(r.admin.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${randomUUID()}/members/${r.viewer.id}`).set(r.admin.auth), 404);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/bad`).set(r.admin.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`), 401);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.outsider.auth), 403);
      expectProblem(await t.http.delete(`/workspaces/${ws}/members/${r.outsider.id}`).set(r.outsider.auth), 403);
      expect(await roleOf(r.viewer.id)).toBe('viewer');
    });
  });

  describe('POST /workspaces/{workspace_id}/users', () => {
    it('creates a user straight into the workspace with a password, who can log in', async () => {
      const res = await t.http
        .post(`/workspaces/${ws}/users`)
        .set(r.admin.auth)
        .send({ email: 'Direct@Test.local', display_name: ' Direct ', password: 'direct-pass-1', role: 'member' })
        .expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          workspace_id: ws,
          email: 'direct@test.local',
          display_name: 'Direct',
          role: 'member',
          user_status: 'active',
          added_by: r.admin.id,
        }),
      );
      expect(res.body.reset_token).toBeUndefined();
      expect(await roleOf(res.body.user_id)).toBe('member');
      const [user] = await t.dataSource.query('SELECT system_role FROM users WHERE id = $1', [res.body.user_id]);
      expect(user.system_role).toBe('user');
      expect(await auditOf('workspace.user_created', res.body.user_id)).toEqual([
        expect.objectContaining({ actor_id: r.admin.id, details: { role: 'member' } }),
      ]);
      const token = await t.factory.login({ email: 'direct@test.local', password: 'direct-pass-1' });
      await t.http.get(`/workspaces/${ws}`).set('Authorization', `Bearer ${token}`).expect(200);
    });

    it('without a password hands back a one-time reset token (with its expiry) the user redeems once', async () => {
      const res = await t.http
        .post(`/workspaces/${ws}/users`)
        .set(r.admin.auth)
        .send({ email: 'nopass@test.local', display_name: 'No Pass', role: 'viewer' })
        .expect(201);
      expect(res.body.reset_token).toMatch(/^rst_/);
      expect(new Date(res.body.reset_token_expires_at).getTime()).toBeGreaterThan(Date.now());
      expectProblem(
        await t.http.post('/auth/token').send({ email: 'nopass@test.local', password: 'anything-at-all' }),
        401,
      );
      const login = await t.http
        .post('/auth/token')
        .send({ grant_type: 'reset_token', reset_token: res.body.reset_token, new_password: 'chosen-pass-1' })
        .expect(200);
      await t.http
        .get(`/workspaces/${ws}/members`)
        .set('Authorization', `Bearer ${login.body.access_token}`)
        .expect(200);
      expect(
        (
          await t.http
            .post('/auth/token')
            .send({ grant_type: 'reset_token', reset_token: res.body.reset_token, new_password: 'again-pass-1' })
        ).status,
      ).toBe(401);
      const listed = await t.http.get(`/workspaces/${ws}/members`).set(r.viewer.auth).expect(200);
      expect(listed.body.find((m: { email: string }) => m.email === 'nopass@test.local')).not.toHaveProperty(
        'reset_token',
      );
    });

    it('lets an owner create an owner', async () => {
      const res = await t.http
        .post(`/workspaces/${ws}/users`)
        .set(r.owner.auth)
        .send({ email: 'co-owner@test.local', display_name: 'Co', password: 'co-owner-pass', role: 'owner' })
        .expect(201);
      expect(await roleOf(res.body.user_id)).toBe('owner');
    });

    it('is 409 email_taken for a registered email (pointing at members), 403 for owner by an admin or for members, 400 invalid, 401 anonymous', async () => {
      const taken = await t.http
        .post(`/workspaces/${ws}/users`)
        .set(r.admin.auth)
        .send({ email: r.outsider.email.toUpperCase(), display_name: 'x', role: 'viewer' });
      expectProblem(taken, 409, 'email_taken');
      expect(taken.body.detail).toContain(`/workspaces/${ws}/members`);
      expect(await roleOf(r.outsider.id)).toBeUndefined();
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/users`)
          .set(r.admin.auth)
          .send({ email: 'own@test.local', display_name: 'x', role: 'owner' }),
        403,
        'owner_role_required',
      );
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/users`)
          .set(r.member.auth)
          .send({ email: 'm@test.local', display_name: 'x', role: 'viewer' }),
        403,
      );
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/users`)
          .set(r.outsider.auth)
          .send({ email: 'o@test.local', display_name: 'x', role: 'viewer' }),
        403,
      );
      const bad = [
        { email: 'bad', display_name: 'x', role: 'viewer' },
        { email: 'ok@test.local', display_name: '', role: 'viewer' },
        { email: 'ok@test.local', display_name: 'x', role: 'king' },
        { email: 'ok@test.local', display_name: 'x', password: 'short', role: 'viewer' },
        { email: 'ok@test.local', display_name: 'x', role: 'viewer', system_role: 'admin' },
      ];
      for (const body of bad)
        expectProblem(
          await t.http.post(`/workspaces/${ws}/users`).set(r.admin.auth).send(body),
          400,
          'validation_failed',
        );
      expectProblem(
        await t.http
          .post(`/workspaces/${randomUUID()}/users`)
          .set(r.admin.auth)
          .send({ email: 'u@test.local', display_name: 'x', role: 'viewer' }),
        404,
      );
      expectProblem(
        await t.http.post(`/workspaces/${ws}/users`).send({ email: 'a@test.local', display_name: 'x', role: 'viewer' }),
        401,
      );
      const created = await t.dataSource.query(
        `SELECT email FROM users WHERE email IN ('own@test.local', 'm@test.local', 'o@test.local', 'ok@test.local', 'u@test.local', 'a@test.local')`,
      );
      expect(created).toHaveLength(0);
    });
  });

  describe('GET /workspaces/{workspace_id}/user-candidates', () => {
    it('lists active non-members matching q on email or display name (admins)', async () => {
      const a = await t.factory.newUser({ email: 'cand-one@cands.test' });
      await t.factory.newUser({ email: 'cand-two@cands.test', status: 'deactivated' });
      const member = await t.factory.newUser({ email: 'cand-three@cands.test' });
      await t.factory.addMember(ws, member.id, 'viewer');
      const res = await t.http
        .get(`/workspaces/${ws}/user-candidates`)
        .set(r.admin.auth)
        .query({ q: 'CANDS.TEST' })
        .expect(200);
      expect(res.body).toEqual([{ id: a.id, email: 'cand-one@cands.test', display_name: 'cand-one' }]);
      await t.dataSource.query(`UPDATE users SET display_name = 'Zelda Quartermaine' WHERE id = $1`, [a.id]);
      const byName = await t.http
        .get(`/workspaces/${ws}/user-candidates`)
        .set(r.admin.auth)
        .query({ q: 'quarter' })
        .expect(200);
      expect(byName.body).toEqual([{ id: a.id, email: 'cand-one@cands.test', display_name: 'Zelda Quartermaine' }]);
      expect(
        (await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ q: '%' }).expect(200)).body,
      ).toEqual([]);
      const outsider = await t.http
        .get(`/workspaces/${ws}/user-candidates`)
        .set(r.admin.auth)
        .query({ q: r.outsider.email })
        .expect(200);
      expect(outsider.body).toEqual([
        { id: r.outsider.id, email: r.outsider.email, display_name: r.outsider.email.split('@')[0] },
      ]);
      expect(
        (
          await t.http
            .get(`/workspaces/${ws}/user-candidates`)
            .set(r.admin.auth)
            .query({ q: r.viewer.email })
            .expect(200)
        ).body,
      ).toEqual([]);
    });

    it('returns at most limit (default 20, max 50) candidates', async () => {
      for (let i = 0; i < 22; i++) await t.factory.newUser({ email: `bulk-${String(i).padStart(2, '0')}@bulk.test` });
      const byDefault = await t.http
        .get(`/workspaces/${ws}/user-candidates`)
        .set(r.admin.auth)
        .query({ q: 'bulk.test' })
        .expect(200);
      expect(byDefault.body).toHaveLength(20);
      expect(byDefault.body[0].email).toBe('bulk-00@bulk.test');
      expect(
        (
          await t.http
            .get(`/workspaces/${ws}/user-candidates`)
            .set(r.admin.auth)
            .query({ q: 'bulk.test', limit: 50 })
            .expect(200)
        ).body,
      ).toHaveLength(22);
      expect(
        (await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 1 }).expect(200)).body,
      ).toHaveLength(1);
    });

    it('is 400 for a limit out of 1..50, 403 for members and outsiders, 404 unknown workspace, 401 anonymous', async () => {
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 51 }), 400);
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 0 }), 400);
      expectProblem(
        await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.admin.auth).query({ limit: 'many' }),
        400,
      );
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.member.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`).set(r.outsider.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/user-candidates`).set(r.admin.auth), 404);
      expectProblem(await t.http.get(`/workspaces/${ws}/user-candidates`), 401);
    });
  });

  describe('isolation between workspaces', () => {
    it('an admin or owner of workspace A cannot list, add, change or remove members of workspace B', async () => {
      const b = await t.factory.workspaceWithRoles();
      const bid = b.workspace.id;
      const membersBefore = (await t.http.get(`/workspaces/${bid}/members`).set(b.owner.auth).expect(200)).body;
      const stranger = await t.factory.newUser();
      for (const intruder of [r.owner, r.admin]) {
        expectProblem(await t.http.get(`/workspaces/${bid}/members`).set(intruder.auth), 403);
        expectProblem(
          await t.http
            .post(`/workspaces/${bid}/members`)
            .set(intruder.auth)
            .send({ user_id: stranger.id, role: 'owner' }),
          403,
        );
        expectProblem(
          await t.http
            .post(`/workspaces/${bid}/members`)
            .set(intruder.auth)
            .send({ user_id: intruder.id, role: 'owner' }),
          403,
        );
        expectProblem(
          await t.http.patch(`/workspaces/${bid}/members/${b.viewer.id}`).set(intruder.auth).send({ role: 'owner' }),
          403,
        );
        expectProblem(await t.http.delete(`/workspaces/${bid}/members/${b.owner.id}`).set(intruder.auth), 403);
        expectProblem(
          await t.http
            .post(`/workspaces/${bid}/users`)
            .set(intruder.auth)
            .send({ email: `x-${intruder.id}@test.local`, display_name: 'x', role: 'viewer' }),
          403,
        );
        expectProblem(await t.http.get(`/workspaces/${bid}/user-candidates`).set(intruder.auth), 403);
        // Through their own workspace's path, B's members are simply not members.
        expectProblem(
          await t.http.patch(`/workspaces/${ws}/members/${b.owner.id}`).set(intruder.auth).send({ role: 'viewer' }),
          404,
        );
        expectProblem(await t.http.delete(`/workspaces/${ws}/members/${b.owner.id}`).set(intruder.auth), 404);
      }
      expect((await t.http.get(`/workspaces/${bid}/members`).set(b.owner.auth).expect(200)).body).toEqual(
        membersBefore,
      );
    });
  });

  describe('concurrent changes', () => {
    it('two owners demoting or removing each other at once leave exactly one owner, never a deadlock', async () => {
      for (const attempt of ['demote', 'remove'] as const) {
        for (let round = 0; round < 5; round++) {
          const { owner: a, id } = await soloWorkspace(`pair-${attempt}-${round}`);
          const b = await t.factory.actor();
          await t.factory.addMember(id, b.id, 'owner');
          const act = (by: Actor, target: Actor) =>
            attempt === 'demote'
              ? t.http.patch(`/workspaces/${id}/members/${target.id}`).set(by.auth).send({ role: 'admin' })
              : t.http.delete(`/workspaces/${id}/members/${target.id}`).set(by.auth);
          const [x, y] = await Promise.all([act(a, b), act(b, a)]);
          const statuses = [x.status, y.status].sort();
          expect(statuses[0]).toBe(attempt === 'demote' ? 200 : 204);
          expect([403, 409]).toContain(statuses[1]);
          const owners = await t.dataSource.query(
            `SELECT user_id FROM workspace_members WHERE workspace_id = $1 AND role = 'owner'`,
            [id],
          );
          expect(owners).toHaveLength(1);
        }
      }
    });
  });

  describe('MembersService.addOrUpgradeMember (used when an invitation is accepted)', () => {
    it('adds a membership, raises a lower role, never lowers a higher one', async () => {
      const members = t.app.get(MembersService);
      const { owner, id } = await soloWorkspace('invites');
      const u = await t.factory.newUser();
      const actor = { userId: owner.id, email: owner.email };

      expect(await members.addOrUpgradeMember(id, u.id, 'viewer', actor)).toBe('viewer');
      expect(await roleOf(u.id, id)).toBe('viewer');
      expect(await auditOf('member.added', u.id, id)).toEqual([
        expect.objectContaining({ actor_id: owner.id, details: { role: 'viewer', via: 'invitation' } }),
      ]);

      expect(await members.addOrUpgradeMember(id, u.id, 'admin', actor)).toBe('admin');
      expect(await roleOf(u.id, id)).toBe('admin');
      expect(await members.addOrUpgradeMember(id, u.id, 'member', actor)).toBe('admin');
      expect(await members.addOrUpgradeMember(id, u.id, 'admin', actor)).toBe('admin');
      expect(await roleOf(u.id, id)).toBe('admin');
      expect((await auditOf('member.role_changed', u.id, id)).map((a) => a.details)).toEqual([
        { from: 'viewer', to: 'admin', via: 'invitation' },
      ]);
    });

    it('joins the caller transaction: a rollback leaves no membership', async () => {
      const members = t.app.get(MembersService);
      const { owner, id } = await soloWorkspace('rollback');
      const u = await t.factory.newUser();
      await expect(
        t.app.get(TransactionRunner).run(async () => {
          await members.addOrUpgradeMember(id, u.id, 'member', { userId: owner.id, email: owner.email });
          throw new Error('invitation failed later');
        }),
      ).rejects.toThrow('invitation failed later');
      expect(await roleOf(u.id, id)).toBeUndefined();
      expect(await auditOf('member.added', u.id, id)).toEqual([]);
    });

    it('two concurrent acceptances for the same user end with one membership at the higher role', async () => {
      const members = t.app.get(MembersService);
      const { id } = await soloWorkspace('race');
      const u = await t.factory.newUser();
      const results = await Promise.all([
        members.addOrUpgradeMember(id, u.id, 'member', undefined),
        members.addOrUpgradeMember(id, u.id, 'admin', undefined),
      ]);
      expect(results).toContain('admin');
      expect(await roleOf(u.id, id)).toBe('admin');
      expect(
        await t.dataSource.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
          id,
          u.id,
        ]),
      ).toHaveLength(1);
    });
  });
});
