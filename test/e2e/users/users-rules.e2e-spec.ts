import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { hashSecretToken } from '#libs/common/secret-token.js';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** The users family's rules beyond the happy paths: races, credentials, audit, roles taking effect. */
describe('users: rules', () => {
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
    (await t.dataSource.query(
      'SELECT actor_id, details FROM audit_events WHERE action = $1 AND target_id = $2 ORDER BY created_at',
      [action, targetId],
    )) as Array<{
      actor_id: string | null;
      details: Record<string, unknown>;
    }>;

  /** Leaves only these admins active (others are set aside in SQL); returns the undo. */
  const onlyActiveAdmins = async (...keep: string[]): Promise<() => Promise<void>> => {
    const [others]: [Array<{ id: string }>, number] = await t.dataSource.query(
      `UPDATE users SET status = 'deactivated' WHERE system_role = 'admin' AND status = 'active' AND NOT (id = ANY($1::uuid[])) RETURNING id`,
      [keep],
    );
    return async () => {
      await t.dataSource.query(`UPDATE users SET status = 'active' WHERE id = ANY($1::uuid[])`, [
        others.map((o) => o.id),
      ]);
    };
  };

  const activeAdmins = async (ids: string[]): Promise<string[]> =>
    (
      await t.dataSource.query(
        `SELECT id FROM users WHERE system_role = 'admin' AND status = 'active' AND id = ANY($1::uuid[])`,
        [ids],
      )
    ).map((r: { id: string }) => r.id);

  /**
   * Starts the requests while a third admin's row is locked, waits until every one of them is
   * blocked on a row lock, then lets them all go: their transactions overlap for certain. The
   * embedded database runs one transaction at a time (one connection, which a held lock would
   * keep from the requests): there the requests are all in flight at once and it serialises them.
   */
  const raceBehindLock = async (lockedUserId: string, requests: Array<PromiseLike<Response>>): Promise<Response[]> => {
    if (t.db.kind === 'embedded') return Promise.all(requests.map((r) => Promise.resolve(r)));
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [lockedUserId]);
      const pending = requests.map((r) => Promise.resolve(r));
      for (let waited = 0; ; waited += 20) {
        const [{ n }] = await t.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (n >= requests.length) break;
        if (waited > 5000) throw new Error(`only ${n} of ${requests.length} requests reached the lock`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.rollbackTransaction();
      return await Promise.all(pending);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  };

  describe('two admins acting on each other at once', () => {
    it('deactivating each other: one wins, the loser is 403 (no longer an admin), never a deadlock or 500', async () => {
      const [a, b, third] = await Promise.all([
        t.factory.actor({ systemRole: 'admin' }),
        t.factory.actor({ systemRole: 'admin' }),
        t.factory.newUser({ systemRole: 'admin' }),
      ]);
      const results = await raceBehindLock(third.id, [
        t.http.post(`/users/${b.id}/deactivate`).set(a.auth),
        t.http.post(`/users/${a.id}/deactivate`).set(b.auth),
      ]);
      const statuses = results.map((r) => r.status).sort();
      if (t.db.kind === 'embedded') {
        // Serialised, the loser may reach the token check after the winner's commit: 401 (its tokens were revoked).
        expect(statuses[0]).toBe(200);
        expect([401, 403]).toContain(statuses[1]);
      } else {
        expect(statuses).toEqual([200, 403]);
        expectProblem(
          results.find((r) => r.status === 403)!,
          403,
          'forbidden',
        );
      }
      expect(await activeAdmins([a.id, b.id])).toHaveLength(1);
    });

    it('demoting each other: exactly one keeps the admin role', async () => {
      const [a, b, third] = await Promise.all([
        t.factory.actor({ systemRole: 'admin' }),
        t.factory.actor({ systemRole: 'admin' }),
        t.factory.newUser({ systemRole: 'admin' }),
      ]);
      const results = await raceBehindLock(third.id, [
        t.http.patch(`/users/${b.id}`).set(a.auth).send({ system_role: 'user' }),
        t.http.patch(`/users/${a.id}`).set(b.auth).send({ system_role: 'user' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
      expectProblem(
        results.find((r) => r.status === 403)!,
        403,
        'forbidden',
      );
      expect(await activeAdmins([a.id, b.id])).toHaveLength(1);
    });

    it('the last two active admins deactivating each other at the same moment leave one active admin', async () => {
      const [a, b] = await Promise.all([
        t.factory.actor({ systemRole: 'admin' }),
        t.factory.actor({ systemRole: 'admin' }),
      ]);
      const restore = await onlyActiveAdmins(a.id, b.id);
      try {
        const results = await Promise.all([
          t.http.post(`/users/${b.id}/deactivate`).set(a.auth),
          t.http.post(`/users/${a.id}/deactivate`).set(b.auth),
        ]);
        const statuses = results.map((r) => r.status).sort();
        // The loser lost its admin rights before (401 at the guard) or while (403) it acted.
        expect(statuses[0]).toBe(200);
        expect([401, 403]).toContain(statuses[1]);
        expect(await activeAdmins([a.id, b.id])).toHaveLength(1);
      } finally {
        await restore();
      }
    });
  });

  describe('email uniqueness under concurrency', () => {
    it('two creations with the same email: one 201, one 409 email_taken', async () => {
      const email = `race-${Date.now()}@test.local`;
      const results = await Promise.all([
        t.http.post('/users').set(admin.auth).send({ email, display_name: 'One' }),
        t.http.post('/users').set(admin.auth).send({ email: email.toUpperCase(), display_name: 'Two' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expectProblem(
        results.find((r) => r.status === 409)!,
        409,
        'email_taken',
      );
      expect((await t.http.get('/users').set(admin.auth).query({ q: email })).body.total).toBe(1);
    });

    it('two users renamed to the same email at once: one 200, one 409 email_taken', async () => {
      const [x, y] = await Promise.all([t.factory.newUser(), t.factory.newUser()]);
      const email = `rename-${Date.now()}@test.local`;
      const results = await Promise.all([
        t.http.patch(`/users/${x.id}`).set(admin.auth).send({ email }),
        t.http.patch(`/users/${y.id}`).set(admin.auth).send({ email }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expectProblem(
        results.find((r) => r.status === 409)!,
        409,
        'email_taken',
      );
    });
  });

  describe('roles take effect on live tokens', () => {
    it('a promoted user can manage users with the token it already holds; a self-demoted admin cannot', async () => {
      const promoted = await t.factory.actor();
      expectProblem(await t.http.get('/users').set(promoted.auth), 403);
      await t.http.patch(`/users/${promoted.id}`).set(admin.auth).send({ system_role: 'admin' }).expect(200);
      await t.http.get('/users').set(promoted.auth).expect(200);

      const demoted = await t.http
        .patch(`/users/${promoted.id}`)
        .set(promoted.auth)
        .send({ system_role: 'user' })
        .expect(200);
      expect(demoted.body.system_role).toBe('user');
      expectProblem(await t.http.get('/users').set(promoted.auth), 403);
      await t.http.get(`/users/${promoted.id}`).set(promoted.auth).expect(200);
      expect((await audit('user.system_role_changed', promoted.id)).map((e) => e.details)).toEqual([
        { from: 'user', to: 'admin' },
        { from: 'admin', to: 'user' },
      ]);
    });

    it('an admin created through POST /users is an admin at once', async () => {
      const created = await t.http
        .post('/users')
        .set(admin.auth)
        .send({
          email: `new-admin-${Date.now()}@test.local`,
          display_name: 'New Admin',
          password: 'new-admin-pass',
          system_role: 'admin',
        })
        .expect(201);
      expect(created.body.system_role).toBe('admin');
      const token = await t.factory.login({ email: created.body.email, password: 'new-admin-pass' });
      await t.http.get('/users').set('Authorization', `Bearer ${token}`).expect(200);
    });
  });

  describe('PATCH /users/{user_id}', () => {
    it('changes the login email; the old one stops working; the change is audited', async () => {
      const target = await t.factory.newUser();
      const email = `Changed-${Date.now()}@Test.Local`;
      const res = await t.http
        .patch(`/users/${target.id}`)
        .set(admin.auth)
        .send({ email, display_name: 'Changed Name' })
        .expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ email: email.toLowerCase(), display_name: 'Changed Name', version: 2 }),
      );
      await t.factory.login({ email: email.toLowerCase(), password: target.password });
      expectProblem(
        await t.http.post('/auth/token').send({ email: target.email, password: target.password }),
        401,
        'invalid_credentials',
      );
      const [entry] = await audit('user.updated', target.id);
      expect(entry.actor_id).toBe(admin.id);
      expect(entry.details).toEqual({
        email: { from: target.email, to: email.toLowerCase() },
        display_name: { from: target.email.split('@')[0], to: 'Changed Name' },
      });
    });

    it('returns the same ETag as GET; a no-op change keeps the version; If-Match * always matches', async () => {
      const target = await t.factory.newUser();
      const read = await t.http.get(`/users/${target.id}`).set(admin.auth).expect(200);
      const same = await t.http
        .patch(`/users/${target.id}`)
        .set(admin.auth)
        .set('If-Match', read.headers.etag)
        .send({ display_name: read.body.display_name })
        .expect(200);
      expect(same.body.version).toBe(read.body.version);
      expect(same.headers.etag).toBe(read.headers.etag);
      const starred = await t.http
        .patch(`/users/${target.id}`)
        .set(admin.auth)
        .set('If-Match', '*')
        .send({ display_name: 'Starred' })
        .expect(200);
      expect(starred.body.version).toBe(read.body.version + 1);
      expect((await t.http.get(`/users/${target.id}`).set(admin.auth)).headers.etag).toBe(starred.headers.etag);
    });

    it('is 412 on a stale If-Match even for a role change, and leaves the role as it was', async () => {
      const target = await t.factory.newUser();
      const stale = (await t.http.get(`/users/${target.id}`).set(admin.auth)).headers.etag;
      await t.http.patch(`/users/${target.id}`).set(admin.auth).send({ display_name: 'Moved on' }).expect(200);
      expectProblem(
        await t.http.patch(`/users/${target.id}`).set(admin.auth).set('If-Match', stale).send({ system_role: 'admin' }),
        412,
        'precondition_failed',
      );
      expect((await t.http.get(`/users/${target.id}`).set(admin.auth)).body.system_role).toBe('user');
      expect(await audit('user.system_role_changed', target.id)).toHaveLength(0);
    });

    it('is 400 for a bad email, an empty display name, an unknown role or a password field; 401 without a token', async () => {
      const bodies = [
        { email: 'not-an-email' },
        { display_name: '   ' },
        { system_role: 'owner' },
        { password: 'sneaky-password' },
        { version: 9 },
      ];
      for (const body of bodies)
        expectProblem(await t.http.patch(`/users/${user.id}`).set(admin.auth).send(body), 400, 'validation_failed');
      expectProblem(await t.http.patch(`/users/${user.id}`).send({ display_name: 'x' }), 401);
      expectProblem(
        await t.http.patch('/users/nope').set(admin.auth).send({ display_name: 'x' }),
        400,
        'invalid_identifier',
      );
    });
  });

  describe('GET /users sorting and filters', () => {
    it('sorts by email by default, by display name case-insensitively, and by creation time', async () => {
      const tag = `sort${Date.now()}`;
      // Created in this order, with display names whose case would mislead a byte-wise sort.
      const made = [];
      for (const [local, name] of [
        ['c', 'bravo'],
        ['a', 'Charlie'],
        ['b', 'alpha'],
      ]) {
        made.push(
          await t.http
            .post('/users')
            .set(admin.auth)
            .send({ email: `${tag}-${local}@sort.test`, display_name: name })
            .expect(201),
        );
      }
      const emails = (sort?: string) =>
        t.http
          .get('/users')
          .set(admin.auth)
          .query({ q: tag, ...(sort ? { sort } : {}) })
          .expect(200)
          .then((r) => r.body.items.map((u: { email: string }) => u.email.split('@')[0].slice(-1)));
      expect(await emails()).toEqual(['a', 'b', 'c']);
      expect(await emails('-email')).toEqual(['c', 'b', 'a']);
      expect(await emails('display_name')).toEqual(['b', 'c', 'a']);
      expect(await emails('-display_name')).toEqual(['a', 'c', 'b']);
      expect(await emails('created_at')).toEqual(['c', 'a', 'b']);
      expect(await emails('-created_at')).toEqual(['b', 'a', 'c']);
    });

    it('filters by status and system role together, and matches display names too', async () => {
      const tag = `flt${Date.now()}`;
      const gone = await t.factory.newUser({ email: `${tag}-gone@test.local`, status: 'deactivated' });
      await t.factory.newUser({ email: `${tag}-boss@test.local`, systemRole: 'admin' });
      await t.factory.newUser({ email: `${tag}-user@test.local` });
      const res = await t.http
        .get('/users')
        .set(admin.auth)
        .query({ q: tag, status: 'deactivated', system_role: 'user' })
        .expect(200);
      expect(res.body.items.map((u: { id: string }) => u.id)).toEqual([gone.id]);
      const admins = await t.http.get('/users').set(admin.auth).query({ q: tag, system_role: 'admin' }).expect(200);
      expect(admins.body.items.map((u: { email: string }) => u.email)).toEqual([`${tag}-boss@test.local`]);
      // The display name alone matches: the email shares nothing with it.
      const named = await t.http
        .post('/users')
        .set(admin.auth)
        .send({ email: `plain-${Date.now()}@test.local`, display_name: `Ada ${tag} Lovelace` })
        .expect(201);
      const byName = await t.http
        .get('/users')
        .set(admin.auth)
        .query({ q: `${tag.toUpperCase()} LOVE` })
        .expect(200);
      expect(byName.body.items.map((u: { id: string }) => u.id)).toEqual([named.body.id]);
      expectProblem(await t.http.get('/users').set(admin.auth).query({ status: 'suspended' }), 400);
      expectProblem(await t.http.get('/users').set(admin.auth).query({ system_role: 'owner' }), 400);
      expectProblem(await t.http.get('/users').set(admin.auth).query({ page: 0 }), 400);
    });
  });

  describe('credentials', () => {
    it('a user created without a password cannot log in until it redeems a reset token', async () => {
      const created = await t.http
        .post('/users')
        .set(admin.auth)
        .send({ email: `nopass-${Date.now()}@test.local`, display_name: 'No Pass' })
        .expect(201);
      expect(created.body.has_password).toBe(false);
      expectProblem(
        await t.http.post('/auth/token').send({ email: created.body.email, password: 'anything-at-all' }),
        401,
        'invalid_credentials',
      );
      const issued = await t.http.post(`/users/${created.body.id}/reset-token`).set(admin.auth).expect(200);
      expect(issued.body.usage).toMatch(/grant_type/);
      await t.http
        .post('/auth/token')
        .send({ grant_type: 'reset_token', reset_token: issued.body.reset_token, new_password: 'chosen-by-user' })
        .expect(200);
      expect((await t.http.get(`/users/${created.body.id}`).set(admin.auth)).body.has_password).toBe(true);
      await t.factory.login({ email: created.body.email, password: 'chosen-by-user' });
    });

    it('stores only the SHA-256 of a reset token, expiring after RESET_TOKEN_TTL_MINUTES, and audits the issue without the token', async () => {
      const target = await t.factory.newUser();
      const before = Date.now();
      const res = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      const rows: Array<{ token_hash: string; created_by: string; expires_at: Date }> = await t.dataSource.query(
        'SELECT token_hash, created_by, expires_at FROM password_reset_tokens WHERE user_id = $1',
        [target.id],
      );
      expect(rows).toEqual([
        {
          token_hash: hashSecretToken(res.body.reset_token),
          created_by: admin.id,
          expires_at: new Date(res.body.expires_at),
        },
      ]);
      const ttlMs = t.config.env.RESET_TOKEN_TTL_MINUTES * 60_000;
      expect(new Date(res.body.expires_at).getTime()).toBeGreaterThanOrEqual(before + ttlMs - 1000);
      expect(new Date(res.body.expires_at).getTime()).toBeLessThanOrEqual(Date.now() + ttlMs + 1000);
      const [entry] = await audit('user.reset_token_issued', target.id);
      expect(entry.actor_id).toBe(admin.id);
      expect(JSON.stringify(entry.details)).not.toContain(res.body.reset_token);
    });

    it('reset-password voids an outstanding reset token and is audited', async () => {
      const target = await t.factory.newUser();
      const issued = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      const res = await t.http
        .post(`/users/${target.id}/reset-password`)
        .set(admin.auth)
        .send({ password: 'admin-chosen-1' })
        .expect(200);
      expect(res.body).toEqual(expect.objectContaining({ id: target.id, has_password: true }));
      expect(res.body).not.toHaveProperty('password');
      expectProblem(
        await t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: issued.body.reset_token, new_password: 'user-chosen-1' }),
        401,
        'invalid_reset_token',
      );
      await t.factory.login({ email: target.email, password: 'admin-chosen-1' });
      expect((await audit('user.password_reset', target.id))[0].actor_id).toBe(admin.id);
    });

    it('deactivation voids unused reset tokens: after reactivation the old one no longer works', async () => {
      const target = await t.factory.newUser();
      const issued = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      await t.http.post(`/users/${target.id}/deactivate`).set(admin.auth).expect(200);
      await t.http.post(`/users/${target.id}/reactivate`).set(admin.auth).expect(200);
      expectProblem(
        await t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: issued.body.reset_token, new_password: 'too-late-now' }),
        401,
        'invalid_reset_token',
      );
    });

    it('a token issued to a deactivated user is refused while deactivated and works once reactivated', async () => {
      const target = await t.factory.newUser({ status: 'deactivated' });
      const issued = await t.http.post(`/users/${target.id}/reset-token`).set(admin.auth).expect(200);
      const redeem = () =>
        t.http
          .post('/auth/token')
          .send({ grant_type: 'reset_token', reset_token: issued.body.reset_token, new_password: 'welcome-back-1' });
      expectProblem(await redeem(), 401, 'account_deactivated');
      await t.http.post(`/users/${target.id}/reactivate`).set(admin.auth).expect(200);
      await redeem().expect(200);
      expectProblem(await redeem(), 401, 'invalid_reset_token');
    });

    it('the reset routes are 401 without a token', async () => {
      expectProblem(await t.http.post(`/users/${user.id}/reset-password`).send({ password: 'long-enough-1' }), 401);
      expectProblem(await t.http.post(`/users/${user.id}/reset-token`), 401);
      expectProblem(
        await t.http.post(`/users/${user.id}/reset-password`).set(admin.auth).send({}),
        400,
        'validation_failed',
      );
      expectProblem(
        await t.http
          .post(`/users/${user.id}/reset-password`)
          .set(admin.auth)
          .send({ password: 'x'.repeat(257) }),
        400,
        'validation_failed',
      );
    });
  });

  describe('deactivation and reactivation', () => {
    it('a deactivated user token fails /internal/auth/verify and the user can be listed; everything is audited', async () => {
      const target = await t.factory.actor();
      await t.http.post('/internal/auth/verify').send({ token: target.token }).expect(200);
      const before = (await t.http.get(`/users/${target.id}`).set(admin.auth).expect(200)).body;
      const res = await t.http.post(`/users/${target.id}/deactivate`).set(admin.auth).expect(200);
      expect(res.body.version).toBe(before.version + 1);
      expectProblem(await t.http.post('/internal/auth/verify').send({ token: target.token }), 401);
      const listed = await t.http
        .get('/users')
        .set(admin.auth)
        .query({ q: target.email, status: 'deactivated' })
        .expect(200);
      expect(listed.body.items).toEqual([
        expect.objectContaining({ id: target.id, status: 'deactivated', deactivated_at: res.body.deactivated_at }),
      ]);
      // Deactivating again changes nothing and writes no second audit entry.
      const again = await t.http.post(`/users/${target.id}/deactivate`).set(admin.auth).expect(200);
      expect(again.body).toEqual(res.body);
      expect(await audit('user.deactivated', target.id)).toHaveLength(1);

      await t.http.post(`/users/${target.id}/reactivate`).set(admin.auth).expect(200);
      await t.http.post(`/users/${target.id}/reactivate`).set(admin.auth).expect(200);
      const reactivated = await audit('user.reactivated', target.id);
      expect(reactivated).toHaveLength(1);
      expect(reactivated[0].actor_id).toBe(admin.id);
      // The tokens revoked by deactivation stay revoked.
      expectProblem(await t.http.get('/auth/me').set(target.auth), 401);
    });

    it('a deactivated admin may be deactivated again and demoted without tripping the last-admin rule', async () => {
      const former = await t.factory.newUser({ systemRole: 'admin', status: 'deactivated' });
      await t.http.post(`/users/${former.id}/deactivate`).set(admin.auth).expect(200);
      const res = await t.http.patch(`/users/${former.id}`).set(admin.auth).send({ system_role: 'user' }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ system_role: 'user', status: 'deactivated' }));
    });

    it('reactivate is 401 without a token and 403 for a user, even on itself', async () => {
      expectProblem(await t.http.post(`/users/${user.id}/reactivate`), 401);
      expectProblem(await t.http.post(`/users/${user.id}/reactivate`).set(user.auth), 403, 'forbidden');
      expectProblem(await t.http.post(`/users/${user.id}/deactivate`).set(user.auth), 403, 'forbidden');
    });
  });

  describe('GET /users/{user_id}/memberships', () => {
    it('lists every workspace of the user with its role, oldest first; empty for a user without any', async () => {
      const member = await t.factory.newUser();
      const first = await t.factory.newWorkspace(admin, `first-${Date.now()}`);
      const second = await t.factory.newWorkspace(admin, `second-${Date.now()}`);
      await t.factory.addMember(first.id, member.id, 'viewer');
      await t.factory.addMember(second.id, member.id, 'admin');
      const res = await t.http.get(`/users/${member.id}/memberships`).set(admin.auth).expect(200);
      expect(res.body).toEqual([
        { workspace_id: first.id, workspace_name: first.name, role: 'viewer', joined_at: expect.any(String) },
        { workspace_id: second.id, workspace_name: second.name, role: 'admin', joined_at: expect.any(String) },
      ]);
      const loner = await t.factory.actor();
      expect((await t.http.get(`/users/${loner.id}/memberships`).set(loner.auth).expect(200)).body).toEqual([]);
      expectProblem(await t.http.get('/users/nope/memberships').set(admin.auth), 400, 'invalid_identifier');
    });
  });
});
