import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('users', () => {
  let t: TestApp;
  let admin: Actor;
  let user: Actor;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.factory.actor({ systemRole: 'admin' });
    user = await t.factory.actor();
  });
  afterAll(async () => {
    await t?.close();
  });

  const audit = async (action: string, targetId: string) =>
    (await t.dataSource.query('SELECT * FROM audit_events WHERE action = $1 AND target_id = $2', [
      action,
      targetId,
    ])) as Array<{ actor_id: string; details: Record<string, unknown> }>;

  describe('POST /users', () => {
    it('creates a user who can log in, and never returns a password hash', async () => {
      const res = await t.http
        .post('/users')
        .set(admin.auth)
        .send({ email: '  New.Person@Test.Local ', display_name: 'New Person', password: 'secret-pass-1' })
        .expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          email: 'new.person@test.local',
          display_name: 'New Person',
          system_role: 'user',
          status: 'active',
          has_password: true,
          version: 1,
        }),
      );
      expect(JSON.stringify(res.body)).not.toMatch(/argon2|password_hash/);
      await t.http.post('/auth/token').send({ email: 'new.person@test.local', password: 'secret-pass-1' }).expect(200);
      expect(await audit('user.created', res.body.id)).toHaveLength(1);
    });

    it('is 409 email_taken for an existing email in any case', async () => {
      expectProblem(
        await t.http.post('/users').set(admin.auth).send({ email: user.email.toUpperCase(), display_name: 'Dup' }),
        409,
        'email_taken',
      );
    });

    it('is 400 for a bad email, short password, unknown role or server-owned fields', async () => {
      expectProblem(
        await t.http.post('/users').set(admin.auth).send({ email: 'nope', display_name: 'x' }),
        400,
        'validation_failed',
      );
      expectProblem(
        await t.http.post('/users').set(admin.auth).send({ email: 'a@b.co', display_name: 'x', password: 'short' }),
        400,
      );
      expectProblem(
        await t.http.post('/users').set(admin.auth).send({ email: 'a@b.co', display_name: 'x', system_role: 'root' }),
        400,
      );
      const res = await t.http
        .post('/users')
        .set(admin.auth)
        .send({ email: 'a@b.co', display_name: 'x', id: randomUUID(), status: 'deactivated' });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['id', 'status']);
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      expectProblem(await t.http.post('/users').send({ email: 'x@y.co', display_name: 'x' }), 401);
      expectProblem(
        await t.http.post('/users').set(user.auth).send({ email: 'x@y.co', display_name: 'x' }),
        403,
        'forbidden',
      );
    });
  });

  describe('GET /users', () => {
    it('pages, filters and sorts', async () => {
      for (const n of ['alpha', 'bravo', 'charlie']) await t.factory.newUser({ email: `zz-${n}@filter.test` });
      await t.factory.newUser({ email: 'zz-delta@filter.test', status: 'deactivated' });
      const page1 = await t.http
        .get('/users')
        .set(admin.auth)
        .query({ q: 'FILTER.TEST', status: 'active', sort: '-email', page_size: 2 })
        .expect(200);
      expect(page1.body).toEqual(expect.objectContaining({ total: 3, page: 1, page_size: 2 }));
      expect(page1.body.items.map((u: { email: string }) => u.email)).toEqual([
        'zz-charlie@filter.test',
        'zz-bravo@filter.test',
      ]);
      const page2 = await t.http
        .get('/users')
        .set(admin.auth)
        .query({ q: 'filter.test', status: 'active', sort: '-email', page_size: 2, page: 2 })
        .expect(200);
      expect(page2.body.items.map((u: { email: string }) => u.email)).toEqual(['zz-alpha@filter.test']);
      const admins = await t.http.get('/users').set(admin.auth).query({ system_role: 'admin' }).expect(200);
      expect(admins.body.items.every((u: { system_role: string }) => u.system_role === 'admin')).toBe(true);
    });

    it('treats % and _ in q literally', async () => {
      const res = await t.http.get('/users').set(admin.auth).query({ q: '%' }).expect(200);
      expect(res.body.total).toBe(0);
    });

    it('is 400 for a page size over 200 or an unknown sort, 401 without token, 403 for a user', async () => {
      expectProblem(await t.http.get('/users').set(admin.auth).query({ page_size: 201 }), 400);
      expectProblem(await t.http.get('/users').set(admin.auth).query({ sort: 'password_hash' }), 400);
      expectProblem(await t.http.get('/users'), 401);
      expectProblem(await t.http.get('/users').set(user.auth), 403);
    });
  });

  describe('GET and PATCH /users/{user_id}', () => {
    it('lets a user read itself but not others; admins read anyone; 404 and 400 for unknown and bad ids', async () => {
      const self = await t.http.get(`/users/${user.id}`).set(user.auth).expect(200);
      expect(self.body.email).toBe(user.email);
      expect(self.headers.etag).toMatch(/^"/);
      expectProblem(await t.http.get(`/users/${admin.id}`).set(user.auth), 403);
      await t.http.get(`/users/${user.id}`).set(admin.auth).expect(200);
      expectProblem(await t.http.get(`/users/${randomUUID()}`).set(admin.auth), 404, 'not_found');
      expectProblem(await t.http.get('/users/not-a-uuid').set(admin.auth), 400, 'invalid_identifier');
      expectProblem(await t.http.get(`/users/${user.id}`), 401);
    });

    it('updates with If-Match and refuses a stale ETag with 412', async () => {
      const target = await t.factory.newUser();
      const read = await t.http.get(`/users/${target.id}`).set(admin.auth).expect(200);
      const etag = read.headers.etag;
      const res = await t.http
        .patch(`/users/${target.id}`)
        .set(admin.auth)
        .set('If-Match', etag)
        .send({ display_name: 'Renamed' })
        .expect(200);
      expect(res.body).toEqual(expect.objectContaining({ display_name: 'Renamed', version: 2 }));
      expect(res.headers.etag).not.toBe(etag);
      expectProblem(
        await t.http
          .patch(`/users/${target.id}`)
          .set(admin.auth)
          .set('If-Match', etag)
          .send({ display_name: 'Lost update' }),
        412,
        'precondition_failed',
      );
      expect((await t.http.get(`/users/${target.id}`).set(admin.auth)).body.display_name).toBe('Renamed');
    });

    it('promotes to admin (audited), refuses demoting the last active admin, and refuses a taken email', async () => {
      const target = await t.factory.newUser();
      await t.http.patch(`/users/${target.id}`).set(admin.auth).send({ system_role: 'admin' }).expect(200);
      expect((await audit('user.system_role_changed', target.id))[0].details).toEqual({ from: 'user', to: 'admin' });
      await t.http.patch(`/users/${target.id}`).set(admin.auth).send({ system_role: 'user' }).expect(200);
      expectProblem(
        await t.http.patch(`/users/${target.id}`).set(admin.auth).send({ email: user.email }),
        409,
        'email_taken',
      );
    });

    it('is 400 for server-owned fields, 403 for a non-admin, 404 for an unknown user', async () => {
      expectProblem(await t.http.patch(`/users/${user.id}`).set(admin.auth).send({ status: 'deactivated' }), 400);
      expectProblem(await t.http.patch(`/users/${user.id}`).set(user.auth).send({ display_name: 'me' }), 403);
      expectProblem(await t.http.patch(`/users/${randomUUID()}`).set(admin.auth).send({ display_name: 'x' }), 404);
    });
  });

  describe('deactivate and reactivate', () => {
    it('revokes every token at once and blocks login; reactivation lets the user log in again', async () => {
      const target = await t.factory.actor();
      const second = await t.factory.login(target);
      const res = await t.http.post(`/users/${target.id}/deactivate`).set(admin.auth).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ status: 'deactivated', deactivated_at: expect.any(String) }));
      expectProblem(await t.http.get('/auth/me').set(target.auth), 401);
      expectProblem(await t.http.get('/auth/me').set('Authorization', `Bearer ${second}`), 401);
      expectProblem(
        await t.http.post('/auth/token').send({ email: target.email, password: target.password }),
        401,
        'account_deactivated',
      );
      expect((await audit('user.deactivated', target.id))[0].details).toEqual({
        tokens_revoked: 2,
        api_keys_revoked: 0,
      });
      await t.http.post(`/users/${target.id}/deactivate`).set(admin.auth).expect(200);
      const back = await t.http.post(`/users/${target.id}/reactivate`).set(admin.auth).expect(200);
      expect(back.body).toEqual(expect.objectContaining({ status: 'active', deactivated_at: null }));
      await t.factory.login(target);
    });

    it('refuses deactivating yourself and the last active admin', async () => {
      expectProblem(await t.http.post(`/users/${admin.id}/deactivate`).set(admin.auth), 409, 'self_deactivation');
      const other = await t.factory.actor({ systemRole: 'admin' });
      const admins: Array<{ id: string }> = await t.dataSource.query(
        `SELECT id FROM users WHERE system_role = 'admin' AND status = 'active' AND id <> $1`,
        [other.id],
      );
      for (const a of admins) await t.dataSource.query(`UPDATE users SET status = 'deactivated' WHERE id = $1`, [a.id]);
      try {
        expectProblem(
          await t.http.patch(`/users/${other.id}`).set(other.auth).send({ system_role: 'user' }),
          409,
          'last_admin',
        );
      } finally {
        for (const a of admins) await t.dataSource.query(`UPDATE users SET status = 'active' WHERE id = $1`, [a.id]);
      }
    });

    it('is 401, 403 and 404 where they apply', async () => {
      expectProblem(await t.http.post(`/users/${user.id}/deactivate`), 401);
      expectProblem(await t.http.post(`/users/${admin.id}/deactivate`).set(user.auth), 403);
      expectProblem(await t.http.post(`/users/${randomUUID()}/reactivate`).set(admin.auth), 404);
    });
  });

  describe('reset-password', () => {
    it('sets the password and revokes all tokens', async () => {
      const target = await t.factory.actor();
      await t.http
        .post(`/users/${target.id}/reset-password`)
        .set(admin.auth)
        .send({ password: 'brand-new-pass' })
        .expect(200);
      expectProblem(await t.http.get('/auth/me').set(target.auth), 401);
      expectProblem(
        await t.http.post('/auth/token').send({ email: target.email, password: target.password }),
        401,
        'invalid_credentials',
      );
      await t.factory.login({ email: target.email, password: 'brand-new-pass' });
    });

    it('is 400 for a short password, 403 for a user, 404 for an unknown id', async () => {
      expectProblem(await t.http.post(`/users/${user.id}/reset-password`).set(admin.auth).send({ password: 'x' }), 400);
      expectProblem(
        await t.http.post(`/users/${user.id}/reset-password`).set(user.auth).send({ password: 'long-enough-1' }),
        403,
      );
      expectProblem(
        await t.http.post(`/users/${randomUUID()}/reset-password`).set(admin.auth).send({ password: 'long-enough-1' }),
        404,
      );
    });
  });

  describe('reset-token', () => {
    it('is redeemed once at POST /auth/token, revoking older tokens; a newer token voids an older one', async () => {
      const target = await t.factory.actor();
      const first = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      const second = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      expect(second.body).toEqual(
        expect.objectContaining({
          user_id: target.id,
          reset_token: expect.stringMatching(/^rst_/),
          expires_at: expect.any(String),
        }),
      );
      const stored: Array<{ token_hash: string }> = await t.dataSource.query(
        'SELECT token_hash FROM password_reset_tokens WHERE user_id = $1',
        [target.id],
      );
      expect(stored.map((r) => r.token_hash)).not.toContain(second.body.reset_token);

      expectProblem(
        await t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: first.body.reset_token, new_password: 'from-reset-1' }),
        401,
        'invalid_reset_token',
      );
      const redeemed = await t.http
        .post('/auth/token')
        .send({ grant_type: 'reset_token', reset_token: second.body.reset_token, new_password: 'from-reset-2' })
        .expect(200);
      expect(redeemed.body.user_id).toBe(target.id);
      expectProblem(await t.http.get('/auth/me').set(target.auth), 401);
      await t.http.get('/auth/me').set('Authorization', `Bearer ${redeemed.body.access_token}`).expect(200);
      await t.factory.login({ email: target.email, password: 'from-reset-2' });
      expectProblem(
        await t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: second.body.reset_token, new_password: 'again-again' }),
        401,
        'invalid_reset_token',
      );
    });

    it('expires', async () => {
      const target = await t.factory.newUser();
      const res = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      await t.dataSource.query(
        `UPDATE password_reset_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1`,
        [target.id],
      );
      expectProblem(
        await t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: res.body.reset_token, new_password: 'too-late-pass' }),
        401,
        'invalid_reset_token',
      );
    });

    it('is 400 without new_password, 403 for a user, 404 for an unknown id', async () => {
      expectProblem(await t.http.post('/auth/token').send({ grant_type: 'reset_token', reset_token: 'rst_x' }), 400);
      expectProblem(await t.http.post(`/users/${user.id}/reset-token`).set(user.auth), 403);
      expectProblem(await t.http.post(`/users/${randomUUID()}/reset-token`).set(admin.auth), 404);
    });
  });

  describe('GET /users/{user_id}/memberships', () => {
    it('lists workspaces with roles, for the user itself and for admins', async () => {
      const ws = await t.factory.newWorkspace(user, 'memberships-ws');
      const own = await t.http.get(`/users/${user.id}/memberships`).set(user.auth).expect(200);
      expect(own.body).toEqual([
        expect.objectContaining({
          workspace_id: ws.id,
          workspace_name: 'memberships-ws',
          role: 'owner',
          joined_at: expect.any(String),
        }),
      ]);
      await t.http.get(`/users/${user.id}/memberships`).set(admin.auth).expect(200);
    });

    it('is 401, 403 and 404 where they apply', async () => {
      expectProblem(await t.http.get(`/users/${user.id}/memberships`), 401);
      expectProblem(await t.http.get(`/users/${admin.id}/memberships`).set(user.auth), 403);
      expectProblem(await t.http.get(`/users/${randomUUID()}/memberships`).set(admin.auth), 404);
    });
  });
});
