import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

describe('auth', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ LOGIN_MAX_FAILURES: '3', LOGIN_LOCKOUT_SECONDS: '120' });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /auth/token', () => {
    it('issues a token for the bootstrap admin (JSON)', async () => {
      const res = await t.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          access_token: expect.any(String),
          token_type: 'bearer',
          expires_in: 3600,
          user_id: expect.any(String),
        }),
      );
      const me = await t.http.get('/auth/me').set('Authorization', `Bearer ${res.body.access_token}`).expect(200);
      expect(me.body).toEqual(
        expect.objectContaining({ email: ADMIN_EMAIL, system_role: 'admin', status: 'active', memberships: [] }),
      );
    });

    it('accepts the OAuth2 password form (Swagger UI Authorize)', async () => {
      const res = await t.http
        .post('/auth/token')
        .type('form')
        .send({ grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD, scope: '' })
        .expect(200);
      expect(res.body.token_type).toBe('bearer');
    });

    it('is 400 without a password and 401 with a wrong one', async () => {
      expectProblem(await t.http.post('/auth/token').send({ email: ADMIN_EMAIL }), 400, 'validation_failed');
      const user = await t.factory.newUser();
      expectProblem(
        await t.http.post('/auth/token').send({ email: user.email, password: 'wrong-password' }),
        401,
        'invalid_credentials',
      );
      expectProblem(
        await t.http.post('/auth/token').send({ email: 'nobody@test.local', password: 'whatever1' }),
        401,
        'invalid_credentials',
      );
    });

    it('refuses unknown fields and unsupported grant types', async () => {
      expectProblem(
        await t.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD, role: 'admin' }),
        400,
        'validation_failed',
      );
      expectProblem(
        await t.http.post('/auth/token').send({ grant_type: 'client_credentials' }),
        400,
        'validation_failed',
      );
    });

    it('throttles after LOGIN_MAX_FAILURES failures with 429 and Retry-After, even for the right password', async () => {
      const user = await t.factory.newUser();
      for (let i = 0; i < 3; i++)
        expectProblem(await t.http.post('/auth/token').send({ email: user.email, password: 'bad-password' }), 401);
      const fourth = await t.http.post('/auth/token').send({ email: user.email, password: 'bad-password' });
      expectProblem(fourth, 429, 'rate_limited');
      expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(fourth.headers['retry-after'])).toBeLessThanOrEqual(120);
      const right = await t.http.post('/auth/token').send({ email: user.email, password: user.password });
      expectProblem(right, 429, 'rate_limited');
    });

    it('refuses a deactivated account', async () => {
      const user = await t.factory.newUser({ status: 'deactivated' });
      expectProblem(
        await t.http.post('/auth/token').send({ email: user.email, password: user.password }),
        401,
        'account_deactivated',
      );
    });
  });

  describe('GET /auth/me', () => {
    it('is 401 problem+json without a token, with a garbage token and with a forged one', async () => {
      expectProblem(await t.http.get('/auth/me'), 401, 'unauthenticated');
      expectProblem(await t.http.get('/auth/me').set('Authorization', 'Bearer nope'), 401, 'unauthenticated');
      const forged = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4IiwianRpIjoieSJ9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
      expectProblem(await t.http.get('/auth/me').set('Authorization', `Bearer ${forged}`), 401, 'unauthenticated');
    });

    it('lists the caller memberships', async () => {
      const owner = await t.factory.actor();
      const ws = await t.factory.newWorkspace(owner, 'team-a');
      const res = await t.http.get('/auth/me').set(owner.auth).expect(200);
      expect(res.body.memberships).toEqual([
        expect.objectContaining({ workspace_id: ws.id, workspace_name: 'team-a', role: 'owner' }),
      ]);
    });
  });

  describe('POST /auth/logout', () => {
    it('revokes that token at once, and only that one', async () => {
      const user = await t.factory.newUser();
      const a = await t.factory.login(user);
      const b = await t.factory.login(user);
      await t.http.post('/auth/logout').set('Authorization', `Bearer ${a}`).expect(204);
      expectProblem(await t.http.get('/auth/me').set('Authorization', `Bearer ${a}`), 401, 'unauthenticated');
      await t.http.get('/auth/me').set('Authorization', `Bearer ${b}`).expect(200);
    });

    it('is 401 without a token', async () => {
      expectProblem(await t.http.post('/auth/logout'), 401);
    });
  });

  describe('POST /internal/auth/verify', () => {
    it('describes a live token', async () => {
      const actor = await t.factory.actor();
      const res = await t.http.post('/internal/auth/verify').send({ token: actor.token }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ active: true, user_id: actor.id, email: actor.email, system_role: 'user' }),
      );
    });

    it('is 401 for a revoked or invalid token and 400 without one', async () => {
      const actor = await t.factory.actor();
      await t.http.post('/auth/logout').set(actor.auth).expect(204);
      expectProblem(await t.http.post('/internal/auth/verify').send({ token: actor.token }), 401, 'invalid_token');
      expectProblem(await t.http.post('/internal/auth/verify').send({ token: 'x.y.z' }), 401, 'invalid_token');
      expectProblem(await t.http.post('/internal/auth/verify').send({}), 400, 'validation_failed');
    });
  });

  describe('the HTTP pipeline', () => {
    it('answers malformed JSON, wrong media types, oversize bodies, unknown routes and wrong methods with problem+json', async () => {
      expectProblem(
        await t.http.post('/auth/token').set('Content-Type', 'application/json').send('{"email":'),
        400,
        'malformed_json',
      );
      expectProblem(
        await t.http.post('/internal/auth/verify').set('Content-Type', 'text/plain').send('token'),
        415,
        'unsupported_media_type',
      );
      expectProblem(
        await t.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: 'x'.repeat(2_000_000) }),
        413,
        'payload_too_large',
      );
      expectProblem(await t.http.get('/no/such/route'), 404, 'route_not_found');
      const wrong = await t.http.delete('/auth/token');
      expectProblem(wrong, 405, 'method_not_allowed');
      expect(wrong.headers.allow).toBe('POST');
    });

    it('echoes a request id', async () => {
      const res = await t.http.get('/live').set('X-Request-Id', 'abc-123').expect(200);
      expect(res.headers['x-request-id']).toBe('abc-123');
      const generated = await t.http.get('/live');
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});
