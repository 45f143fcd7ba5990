import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('invitations', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;

  beforeAll(async () => {
    t = await startTestApp({ INVITATION_TTL_HOURS: '48' });
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const invite = (email: string, role = 'member', actor = r.admin) =>
    t.http.post(`/workspaces/${ws}/invitations`).set(actor.auth).send({ email, role });
  const roleOf = async (userId: string) =>
    (
      (await t.dataSource.query('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
        ws,
        userId,
      ])) as Array<{ role: string }>
    )[0]?.role;

  describe('create, list, resend, revoke', () => {
    it('creates a pending invitation whose token is shown once and stored hashed', async () => {
      const res = await invite('New.Hire@Test.Local', 'viewer').expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          workspace_id: ws,
          email: 'new.hire@test.local',
          role: 'viewer',
          state: 'pending',
          sent_count: 1,
          invited_by: r.admin.id,
          token: expect.stringMatching(/^inv_/),
          accept_path: expect.any(String),
        }),
      );
      const hours = (new Date(res.body.expires_at).getTime() - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(47.9);
      const stored = await t.dataSource.query('SELECT token_hash FROM workspace_invitations WHERE id = $1', [
        res.body.id,
      ]);
      expect(stored[0].token_hash).not.toContain(res.body.token);
      const list = await t.http.get(`/workspaces/${ws}/invitations`).set(r.admin.auth).expect(200);
      expect(list.body).toEqual([expect.objectContaining({ id: res.body.id, state: 'pending' })]);
      expect(list.body[0].token).toBeUndefined();
    });

    it('refuses a second pending invitation (409), inviting a member (409), owner invitations by admins (403), bad input (400)', async () => {
      await invite('twice@test.local').expect(201);
      expectProblem(await invite('TWICE@test.local'), 409, 'invitation_pending');
      expectProblem(await invite(r.viewer.email), 409, 'already_member');
      expectProblem(await invite('boss@test.local', 'owner'), 403, 'owner_role_required');
      await invite('boss@test.local', 'owner', r.owner).expect(201);
      expectProblem(await invite('not-an-email'), 400);
      expectProblem(await invite('x@test.local', 'emperor'), 400);
    });

    it('is admin-only (403 for members and outsiders), 401 anonymous, 404 unknown workspace', async () => {
      expectProblem(await t.http.get(`/workspaces/${ws}/invitations`).set(r.member.auth), 403);
      expectProblem(await invite('m@test.local', 'viewer', r.member), 403);
      expectProblem(await t.http.get(`/workspaces/${ws}/invitations`).set(r.outsider.auth), 403);
      expectProblem(await t.http.get(`/workspaces/${ws}/invitations`), 401);
      expectProblem(await t.http.get(`/workspaces/${randomUUID()}/invitations`).set(r.admin.auth), 404);
    });

    it('resend issues a new token (the old one stops working) and a new expiry; revoke ends it', async () => {
      const first = await invite('resend@test.local').expect(201);
      await t.dataSource.query(
        `UPDATE workspace_invitations SET expires_at = now() - interval '1 hour' WHERE id = $1`,
        [first.body.id],
      );
      const expired = await t.http
        .get(`/workspaces/${ws}/invitations`)
        .set(r.admin.auth)
        .query({ state: 'expired' })
        .expect(200);
      expect(expired.body.map((i: { id: string }) => i.id)).toContain(first.body.id);
      const again = await t.http
        .post(`/workspaces/${ws}/invitations/${first.body.id}/resend`)
        .set(r.admin.auth)
        .expect(200);
      expect(again.body).toEqual(expect.objectContaining({ id: first.body.id, state: 'pending', sent_count: 2 }));
      expect(again.body.token).not.toBe(first.body.token);
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: first.body.token, password: 'a-good-password' }),
        401,
        'invalid_invitation',
      );

      const revoked = await t.http
        .post(`/workspaces/${ws}/invitations/${first.body.id}/revoke`)
        .set(r.admin.auth)
        .expect(200);
      expect(revoked.body).toEqual(expect.objectContaining({ state: 'revoked', revoked_at: expect.any(String) }));
      expectProblem(
        await t.http.post(`/workspaces/${ws}/invitations/${first.body.id}/resend`).set(r.admin.auth),
        409,
        'invitation_not_pending',
      );
      expectProblem(
        await t.http.post(`/workspaces/${ws}/invitations/${first.body.id}/revoke`).set(r.admin.auth),
        409,
        'invitation_not_pending',
      );
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: again.body.token, password: 'a-good-password' }),
        403,
        'invitation_revoked',
      );
    });

    it('resend and revoke are 404 for unknown ids and for invitations of another workspace, 403 for members', async () => {
      const other = await t.factory.workspaceWithRoles();
      const foreign = await t.http
        .post(`/workspaces/${other.workspace.id}/invitations`)
        .set(other.admin.auth)
        .send({ email: 'f@test.local', role: 'viewer' })
        .expect(201);
      expectProblem(
        await t.http.post(`/workspaces/${ws}/invitations/${foreign.body.id}/revoke`).set(r.admin.auth),
        404,
      );
      expectProblem(await t.http.post(`/workspaces/${ws}/invitations/${randomUUID()}/resend`).set(r.admin.auth), 404);
      expectProblem(
        await t.http.post(`/workspaces/${ws}/invitations/${foreign.body.id}/revoke`).set(r.member.auth),
        403,
      );
      expectProblem(await t.http.post(`/workspaces/${ws}/invitations/bad/revoke`).set(r.admin.auth), 400);
    });
  });

  describe('POST /auth/accept-invitation', () => {
    it('creates the account for a new email and adds the membership', async () => {
      const inv = await invite('fresh@test.local', 'member').expect(201);
      const res = await t.http
        .post('/auth/accept-invitation')
        .send({ token: inv.body.token, password: 'fresh-password', display_name: 'Fresh' })
        .expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          email: 'fresh@test.local',
          display_name: 'Fresh',
          memberships: [expect.objectContaining({ workspace_id: ws, role: 'member' })],
        }),
      );
      await t.factory.login({ email: 'fresh@test.local', password: 'fresh-password' });
      const list = await t.http
        .get(`/workspaces/${ws}/invitations`)
        .set(r.admin.auth)
        .query({ state: 'accepted' })
        .expect(200);
      expect(list.body).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: inv.body.id, accepted_by: res.body.id })]),
      );
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: inv.body.token, password: 'fresh-password' }),
        403,
        'invitation_already_accepted',
      );
    });

    it('needs a password (400) to create an account', async () => {
      const inv = await invite('nopass@test.local').expect(201);
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: inv.body.token }),
        400,
        'validation_failed',
      );
      expect(await t.dataSource.query(`SELECT 1 FROM users WHERE email = 'nopass@test.local'`)).toHaveLength(0);
    });

    it('lets an existing user accept with their bearer token, raising but never lowering a role', async () => {
      const u = await t.factory.actor();
      const inv = await invite(u.email, 'admin', r.owner).expect(201);
      const res = await t.http.post('/auth/accept-invitation').set(u.auth).send({ token: inv.body.token }).expect(200);
      expect(res.body.id).toBe(u.id);
      expect(await roleOf(u.id)).toBe('admin');
      // Added as admin after being invited as viewer: accepting keeps the higher role.
      const v = await t.factory.actor();
      const low = await invite(v.email, 'viewer').expect(201);
      await t.factory.addMember(ws, v.id, 'admin');
      await t.http.post('/auth/accept-invitation').set(v.auth).send({ token: low.body.token }).expect(200);
      expect(await roleOf(v.id)).toBe('admin');
    });

    it('lets an existing user accept with their password; a wrong one is 401, none is 401', async () => {
      const u = await t.factory.newUser();
      const inv = await invite(u.email).expect(201);
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: inv.body.token }),
        401,
        'unauthenticated',
      );
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: inv.body.token, password: 'wrong-password' }),
        401,
        'invalid_credentials',
      );
      await t.http.post('/auth/accept-invitation').send({ token: inv.body.token, password: u.password }).expect(200);
      expect(await roleOf(u.id)).toBe('member');
    });

    it('refuses a token of another user (403), expired invitations (403), deactivated accounts (403), unknown tokens (401)', async () => {
      const u = await t.factory.newUser();
      const inv = await invite(u.email).expect(201);
      expectProblem(
        await t.http.post('/auth/accept-invitation').set(r.member.auth).send({ token: inv.body.token }),
        403,
        'invitation_email_mismatch',
      );
      const brandNew = await invite('brand-new@test.local').expect(201);
      expectProblem(
        await t.http
          .post('/auth/accept-invitation')
          .set(r.member.auth)
          .send({ token: brandNew.body.token, password: 'whatever-long' }),
        403,
        'invitation_email_mismatch',
      );

      await t.dataSource.query(
        `UPDATE workspace_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [inv.body.id],
      );
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: inv.body.token, password: u.password }),
        403,
        'invitation_expired',
      );

      const gone = await t.factory.newUser({ status: 'deactivated' });
      const goneInv = await invite(gone.email).expect(201);
      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: goneInv.body.token, password: gone.password }),
        403,
        'invitation_account_deactivated',
      );

      expectProblem(
        await t.http.post('/auth/accept-invitation').send({ token: 'inv_nope' }),
        401,
        'invalid_invitation',
      );
      expectProblem(await t.http.post('/auth/accept-invitation').send({}), 400);
      expectProblem(
        await t.http.post('/auth/accept-invitation').set('Authorization', 'Bearer garbage').send({ token: 'x' }),
        401,
        'unauthenticated',
      );
    });

    it('replaces an expired pending invitation when the email is invited again', async () => {
      const first = await invite('again@test.local').expect(201);
      await t.dataSource.query(
        `UPDATE workspace_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [first.body.id],
      );
      const second = await invite('again@test.local').expect(201);
      expect(second.body.id).not.toBe(first.body.id);
      const states = await t.http.get(`/workspaces/${ws}/invitations`).set(r.admin.auth).expect(200);
      expect(states.body.find((i: { id: string }) => i.id === first.body.id).state).toBe('revoked');
      const audit = await t.dataSource.query(
        `SELECT action FROM audit_events WHERE target_id = $1 ORDER BY created_at`,
        [second.body.id],
      );
      expect(audit.map((a: { action: string }) => a.action)).toEqual(['invitation.created']);
    });
  });
});
