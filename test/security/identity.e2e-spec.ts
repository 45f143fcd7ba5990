import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import type { Actor } from '../factories/factory.js';
import { expectProblem } from '../utils/problem.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

const b64 = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

function sign(header: object, payload: object, secret: string, hmac: 'sha256' | 'sha512' = 'sha256'): string {
  const body = `${b64(header)}.${b64(payload)}`;
  return `${body}.${createHmac(hmac, secret).update(body).digest('base64url')}`;
}

/** OWASP API2: every way of forging or stretching a bearer token is a 401. */
describe('identity: forged, altered and expired tokens', () => {
  let t: TestApp;
  let victim: Actor;
  let other: Actor;
  let claims: { sub: string; jti: string; iat: number; exp: number };

  beforeAll(async () => {
    t = await startTestApp({ LOGIN_MAX_FAILURES: '50' });
    victim = await t.factory.actor({ systemRole: 'admin' });
    other = await t.factory.actor();
    claims = decode(victim.token.split('.')[1]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const me = (token: string) => t.http.get('/auth/me').set('Authorization', `Bearer ${token}`);

  it('accepts the genuine token (the forgeries below differ from it in one respect each)', async () => {
    await me(victim.token).expect(200);
  });

  it('refuses alg "none" with the live session claims', async () => {
    expectProblem(await me(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`), 401, 'unauthenticated');
    expectProblem(await me(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}`), 401, 'unauthenticated');
  });

  it('refuses another algorithm, even with the right secret', async () => {
    expectProblem(await me(sign({ alg: 'HS512', typ: 'JWT' }, claims, t.config.keys.jwtSecret, 'sha512')), 401);
  });

  it('refuses a bad signature and a token signed with another secret', async () => {
    const [h, p, s] = victim.token.split('.');
    const flipped = `${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`;
    expectProblem(await me(`${h}.${p}.${flipped}`), 401);
    expectProblem(await me(sign({ alg: 'HS256', typ: 'JWT' }, claims, 'x'.repeat(48))), 401);
  });

  it('refuses a tampered payload: another user, a longer life, a system role claim', async () => {
    const [h, , s] = victim.token.split('.');
    expectProblem(await me(`${h}.${b64({ ...claims, sub: other.id })}.${s}`), 401);
    expectProblem(await me(`${h}.${b64({ ...claims, exp: claims.exp + 86_400 })}.${s}`), 401);
    expectProblem(await me(`${h}.${b64({ ...claims, role: 'admin' })}.${s}`), 401);
  });

  it('refuses an expired token whose session is still live', async () => {
    const past = Math.floor(Date.now() / 1000) - 10;
    expectProblem(
      await me(sign({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: past - 60, exp: past }, t.config.keys.jwtSecret)),
      401,
    );
  });

  it('refuses a well-signed token whose jti is not a session, or whose sub does not own the session', async () => {
    const forgedSession = { ...claims, jti: '00000000-0000-4000-8000-000000000000' };
    expectProblem(await me(sign({ alg: 'HS256', typ: 'JWT' }, forgedSession, t.config.keys.jwtSecret)), 401);
    expectProblem(
      await me(sign({ alg: 'HS256', typ: 'JWT' }, { ...claims, sub: other.id }, t.config.keys.jwtSecret)),
      401,
    );
  });

  it('refuses malformed Authorization headers', async () => {
    for (const value of [
      'Bearer',
      'Bearer ',
      `Basic ${victim.token}`,
      `bearer${victim.token}`,
      'Bearer a.b',
      'Bearer ....',
    ]) {
      expectProblem(await t.http.get('/auth/me').set('Authorization', value), 401);
    }
  });

  it('answers an unknown user and a wrong password identically', async () => {
    const unknown = await t.http
      .post('/auth/token')
      .send({ email: 'nobody-here@test.local', password: 'some-password' });
    const wrong = await t.http.post('/auth/token').send({ email: other.email, password: 'some-password' });
    expectProblem(unknown, 401, 'invalid_credentials');
    expectProblem(wrong, 401, 'invalid_credentials');
    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
    expect(strip(unknown.body)).toEqual(strip(wrong.body));
    expect(unknown.headers['www-authenticate']).toEqual(wrong.headers['www-authenticate']);
  });
});
