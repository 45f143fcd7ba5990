import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Response } from 'supertest';
import { PasswordHasher } from '#libs/auth/password-hasher.js';
import type { TestUser } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** A client that honours 429 auth_busy (too many logins being checked at once) by retrying after Retry-After. */
async function attempt(t: TestApp, email: string, password: string, forwardedFor?: string): Promise<Response> {
  for (;;) {
    const req = t.http.post('/auth/token').send({ email, password });
    const res = await (forwardedFor ? req.set('X-Forwarded-For', forwardedFor) : req);
    if (res.status !== 429 || res.body.error_code !== 'auth_busy') return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after']) * 1000));
  }
}

function tally(responses: Response[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const res of responses)
    counts[`${res.status} ${res.body.error_code ?? ''}`.trim()] =
      (counts[`${res.status} ${res.body.error_code ?? ''}`.trim()] ?? 0) + 1;
  return counts;
}

async function sessionIps(t: TestApp, user: TestUser): Promise<string[]> {
  const rows: Array<{ ip: string }> = await t.dataSource.query(
    'SELECT ip FROM auth_tokens WHERE user_id = $1 ORDER BY issued_at',
    [user.id],
  );
  return rows.map((r) => r.ip);
}

const lockedOut = (res: Response) => {
  expectProblem(res, 429, 'rate_limited');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
};

describe('login lockout (default LOGIN_MAX_FAILURES, no TRUSTED_PROXIES)', () => {
  let t: TestApp;
  let max: number;
  beforeAll(async () => {
    t = await startTestApp();
    max = t.config.env.LOGIN_MAX_FAILURES;
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts 30 parallel wrong passwords atomically: exactly LOGIN_MAX_FAILURES 401s, every other one 429 with Retry-After, no hash for those', async () => {
    expect(max).toBe(5);
    const user = await t.factory.newUser();
    const verify = jest.spyOn(t.app.get(PasswordHasher), 'verify');
    const answers = await Promise.all(Array.from({ length: 30 }, () => attempt(t, user.email, 'wrong-password')));

    expect(tally(answers)).toEqual({ '401 invalid_credentials': max, '429 rate_limited': 30 - max });
    for (const res of answers.filter((r) => r.status === 429)) {
      lockedOut(res);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(t.config.env.LOGIN_LOCKOUT_SECONDS);
    }
    expect(verify).toHaveBeenCalledTimes(max);
    lockedOut(await attempt(t, user.email, user.password));
    expect(verify).toHaveBeenCalledTimes(max);
  });

  it('lets a right password through before the limit, and that success resets the count', async () => {
    const user = await t.factory.newUser();
    for (let i = 0; i < max - 1; i++)
      expectProblem(await attempt(t, user.email, 'wrong-password'), 401, 'invalid_credentials');
    expect((await attempt(t, user.email, user.password)).status).toBe(200);
    for (let i = 0; i < max; i++)
      expectProblem(await attempt(t, user.email, 'wrong-password'), 401, 'invalid_credentials');
    lockedOut(await attempt(t, user.email, 'wrong-password'));
  });

  it('ignores X-Forwarded-For: a forged address neither dodges nor resets the lockout, and sessions record the peer', async () => {
    const user = await t.factory.newUser();
    // Every failure claims another address; they all count against the one real peer.
    for (let i = 0; i < max; i++)
      expectProblem(await attempt(t, user.email, 'wrong-password', `203.0.113.${i + 1}`), 401, 'invalid_credentials');
    lockedOut(await attempt(t, user.email, user.password, '203.0.113.200'));
    lockedOut(await attempt(t, user.email, user.password));

    const other = await t.factory.newUser();
    expect((await attempt(t, other.email, other.password, '198.51.100.77')).status).toBe(200);
    expect(await sessionIps(t, other)).toEqual([expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$|^::1$/)]);
  });
});

describe('login lockout behind a named proxy (TRUSTED_PROXIES=loopback)', () => {
  let t: TestApp;
  let max: number;
  beforeAll(async () => {
    t = await startTestApp({ TRUSTED_PROXIES: 'loopback' });
    max = t.config.env.LOGIN_MAX_FAILURES;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('locks the client the proxy names, not the others behind the same proxy', async () => {
    const user = await t.factory.newUser();
    for (let i = 0; i < max; i++)
      expectProblem(await attempt(t, user.email, 'wrong-password', '198.51.100.7'), 401, 'invalid_credentials');
    lockedOut(await attempt(t, user.email, user.password, '198.51.100.7'));

    // Another client behind the proxy is not locked out by its neighbour.
    expect((await attempt(t, user.email, user.password, '198.51.100.8')).status).toBe(200);
    expect(await sessionIps(t, user)).toEqual(['198.51.100.8']);
  });

  it('takes the address the proxy appended: entries a client forges in front of it change nothing', async () => {
    const user = await t.factory.newUser();
    for (let i = 0; i < max; i++) {
      expectProblem(
        await attempt(t, user.email, 'wrong-password', `10.9.8.${i}, 198.51.100.9`),
        401,
        'invalid_credentials',
      );
    }
    lockedOut(await attempt(t, user.email, user.password, '203.0.113.50, 198.51.100.9'));
    lockedOut(await attempt(t, user.email, user.password, '198.51.100.9'));
  });
});
