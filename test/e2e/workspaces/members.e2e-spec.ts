import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The HTTP contract of the members routes: status and body on success, each problem answer,
 * and which callers the guard lets through. The membership rules themselves (who may change or
 * remove whom, the last owner, leaving, audit, candidates' filters) are
 * test/medium/members.medium-spec.ts's, on both databases.
 */
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

  /** The membership's role as the table holds it (undefined when not a member). */
  const roleOf = async (userId: string, workspaceId = ws): Promise<string | undefined> =>
    (
      await t.dataSource.query('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
        workspaceId,
        userId,
      ])
    )[0]?.role;
  /** A fresh workspace whose only member is its owner (the actor). */
  const soloWorkspace = async (): Promise<{ owner: Actor; id: string }> => {
    const owner = await t.factory.actor();
    return { owner, id: (await t.factory.newWorkspace(owner)).id };
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

    it('is 403 for outsiders, 404 for an unknown workspace, 400 for a malformed id, 401 anonymous', async () => {
      expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(r.outsider.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/members`).set(r.owner.auth), 404, 'not_found');
      expectProblem(await t.http.get('/workspaces/xyz/members').set(r.owner.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/workspaces/${ws}/members`), 401);
    });
  });

  describe('POST /workspaces/{workspace_id}/members', () => {
    it('adds by user id or by email (admins): 201 with the member, who reaches the workspace at once', async () => {
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
      const added = await t.factory.login(a);
      await t.http.get(`/workspaces/${ws}`).set('Authorization', `Bearer ${added}`).expect(200);
    });

    it('is 409 already_member or user_deactivated, 404 for an unknown user, 403 owner_role_required for an admin granting owner', async () => {
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: r.member.id, role: 'viewer' }),
        409,
        'already_member',
      );
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
      const c = await t.factory.newUser();
      expectProblem(
        await t.http.post(`/workspaces/${ws}/members`).set(r.admin.auth).send({ user_id: c.id, role: 'owner' }),
        403,
        'owner_role_required',
      );
    });

    it('lets a system admin who is not a member add members', async () => {
      const u = await t.factory.newUser();
      await t.http
        .post(`/workspaces/${ws}/members`)
        .set(sysadmin.auth)
        .send({ user_id: u.id, role: 'viewer' })
        .expect(201);
    });

    it('is 400 with nulls, malformed ids or emails, a bad or missing role or an unknown field; 403 for members and viewers; 401 anonymous', async () => {
      const u = await t.factory.newUser();
      const bad = [
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
    it('changes a role (admins): 200 with the member', async () => {
      const u = await t.factory.newUser();
      await t.factory.addMember(ws, u.id, 'viewer');
      const res = await t.http
        .patch(`/workspaces/${ws}/members/${u.id}`)
        .set(r.admin.auth)
        .send({ role: 'admin' })
        .expect(200);
      expect(res.body).toEqual({
        workspace_id: ws,
        user_id: u.id,
        email: u.email,
        display_name: u.email.split('@')[0],
        role: 'admin',
        user_status: 'active',
        joined_at: expect.any(String),
        added_by: null,
      });
    });

    it('is 403 owner_role_required for an admin promoting to owner or touching an owner role, 409 last_owner for the last owner', async () => {
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.member.id}`).set(r.admin.auth).send({ role: 'owner' }),
        403,
        'owner_role_required',
      );
      expectProblem(
        await t.http.patch(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth).send({ role: 'owner' }),
        403,
        'owner_role_required',
      );
      const { owner, id } = await soloWorkspace();
      expectProblem(
        await t.http.patch(`/workspaces/${id}/members/${owner.id}`).set(owner.auth).send({ role: 'admin' }),
        409,
        'last_owner',
      );
      expect([await roleOf(r.member.id), await roleOf(owner.id, id)]).toEqual(['member', 'owner']);
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
    });

    it('is 403 forbidden for a viewer removing another, 403 owner_role_required for an admin removing an owner, 409 last_owner', async () => {
      expectProblem(
        await t.http.delete(`/workspaces/${ws}/members/${r.member.id}`).set(r.viewer.auth),
        403,
        'forbidden',
      );
      expectProblem(
        await t.http.delete(`/workspaces/${ws}/members/${r.owner.id}`).set(r.admin.auth),
        403,
        'owner_role_required',
      );
      const { owner, id } = await soloWorkspace();
      expectProblem(await t.http.delete(`/workspaces/${id}/members/${owner.id}`).set(owner.auth), 409, 'last_owner');
      expect([await roleOf(r.member.id), await roleOf(r.owner.id), await roleOf(owner.id, id)]).toEqual([
        'member',
        'owner',
        'owner',
      ]);
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
      const token = await t.factory.login({ email: 'direct@test.local', password: 'direct-pass-1' });
      await t.http.get(`/workspaces/${ws}`).set('Authorization', `Bearer ${token}`).expect(200);
    });

    it('without a password hands back a one-time reset token (with its expiry) the user redeems once', async () => {
      const res = await t.http
        .post(`/workspaces/${ws}/users`)
        .set(r.admin.auth)
        .send({ email: 'nopass@test.local', display_name: 'No Pass', role: 'viewer' })
        .expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          email: 'nopass@test.local',
          role: 'viewer',
          reset_token: expect.stringMatching(/^rst_/),
          reset_token_expires_at: expect.any(String),
        }),
      );
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
    });

    it('is 409 email_taken for a registered email, 403 for owner by an admin or for members, 400 invalid, 401 anonymous', async () => {
      expectProblem(
        await t.http
          .post(`/workspaces/${ws}/users`)
          .set(r.admin.auth)
          .send({ email: r.outsider.email, display_name: 'x', role: 'viewer' }),
        409,
        'email_taken',
      );
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
    it('lists candidates as id, email and display name (admins)', async () => {
      const res = await t.http
        .get(`/workspaces/${ws}/user-candidates`)
        .set(r.admin.auth)
        .query({ q: r.outsider.email, limit: 5 })
        .expect(200);
      expect(res.body).toEqual([
        { id: r.outsider.id, email: r.outsider.email, display_name: r.outsider.email.split('@')[0] },
      ]);
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
});
