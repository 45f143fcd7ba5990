import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { browserExecutable } from '../../utils/browser.js';
import { startIdentityProvider, type IdentityProvider } from '../../utils/identity-provider.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const APP_ORIGIN = 'http://app.example.test';

/**
 * Single sign-on against a real OpenID provider (oidc-provider, its development login form) in a
 * real browser (chromium through playwright-core): the authorization code flow with PKCE, state
 * and nonce; accounts provisioned with the roles their groups map to, re-mapped at each login;
 * password logins refused for the required domain; logout at both ends; forged callbacks refused.
 */
describe('single sign-on (OpenID Connect)', () => {
  let idp: IdentityProvider;
  let t: TestApp;
  let browser: Browser;
  let idpSession: BrowserContext;
  let base: string;
  let admin: Awaited<ReturnType<TestApp['factory']['actor']>>;
  const evals = randomUUID();
  const readers = randomUUID();
  const gone = randomUUID();
  /** Where the browser was sent outside the loopback (the return_to and post-logout pages), in order. */
  const landed: string[] = [];

  beforeAll(async () => {
    idp = await startIdentityProvider();
    t = await startTestApp({
      SSO_ISSUER_URL: idp.issuer,
      SSO_CLIENT_ID: idp.clientId,
      SSO_CLIENT_SECRET: idp.clientSecret,
      SSO_ALLOW_HTTP_ISSUER: 'true',
      SSO_SCOPES: 'openid email profile groups',
      SSO_GROUP_ROLES: JSON.stringify({
        'evals-team': { workspace: evals, role: 'member' },
        'evals-leads': [{ workspace: evals, role: 'admin' }],
        'evals-readers': { workspace: readers, role: 'viewer' },
        ghosts: { workspace: gone, role: 'viewer' },
      }),
      SSO_ADMIN_GROUPS: 'ews-admins',
      SSO_REQUIRED_DOMAINS: 'corp.example',
      SSO_RETURN_ORIGINS: APP_ORIGIN,
      SSO_POST_LOGOUT_REDIRECT_URL: `${APP_ORIGIN}/signed-out`,
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    idp.register(`${base}/auth/sso/callback`, `${APP_ORIGIN}/signed-out`);
    admin = await t.factory.actor({ systemRole: 'admin' });
    for (const [id, name] of [
      [evals, 'Evals'],
      [readers, 'Readers'],
    ]) {
      await t.dataSource.query(`INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)`, [
        id,
        name,
        admin.id,
      ]);
      await t.factory.addMember(id, admin.id, 'owner');
    }
    idp.accounts.set('ada', {
      email: 'Ada@corp.example',
      name: 'Ada Lovelace',
      groups: ['evals-team', 'evals-readers', 'ews-admins', 'ghosts', 'unmapped'],
    });
    browser = await chromium.launch({
      executablePath: browserExecutable(),
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    idpSession = await newContext();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.close();
  });

  /** A fresh browser profile; pages outside the loopback (the provider's web fonts, the app's own pages) answer locally. */
  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => {
        landed.push(route.request().url());
        return route.request().isNavigationRequest() ? route.fulfill({ status: 200, body: 'ok' }) : route.abort();
      },
    );
    return context;
  }

  /** Signs in through the browser: the service's login, the provider's form and consent, back to the callback. */
  async function signIn(context: BrowserContext, login: string, query = '') {
    const page = await context.newPage();
    const callback = page.waitForResponse((r) => r.url().startsWith(`${base}/auth/sso/callback`));
    await page.goto(`${base}/auth/sso/login${query}`);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any password');
    await page.locator('button[type=submit]').click();
    await page.locator('form:has(input[name=prompt][value=consent]) button[type=submit]').click();
    const res = await callback;
    const answer = {
      status: res.status(),
      location: res.headers()['location'],
      text: await res.text().catch(() => ''),
    };
    await page.close();
    return answer;
  }

  const me = (token: string) => t.http.get('/auth/me').set({ Authorization: `Bearer ${token}` });
  const roles = (body: { memberships: Array<{ workspace_id: string; role: string }> }) =>
    Object.fromEntries(body.memberships.map((m) => [m.workspace_id, m.role]));
  const audit = async (userId: string): Promise<Array<{ action: string; details: Record<string, unknown> }>> =>
    t.dataSource.query(
      `SELECT action, details FROM audit_events WHERE target_id = $1 OR actor_id::text = $1 ORDER BY created_at, id`,
      [userId],
    );

  let adaId: string;
  let fragmentToken: string;

  it('a browser signs in: the account is provisioned with its mapped workspace roles and the system role', async () => {
    const answer = await signIn(idpSession, 'ada');
    expect(answer.status).toBe(200);
    const token = JSON.parse(answer.text) as { access_token: string; user_id: string; token_type: string };
    expect(token.token_type).toBe('bearer');
    adaId = token.user_id;
    const res = await me(token.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({ email: 'ada@corp.example', display_name: 'Ada Lovelace', system_role: 'admin' }),
    );
    expect(roles(res.body)).toEqual({ [evals]: 'member', [readers]: 'viewer' });
    const [row] = await t.dataSource.query(`SELECT sso_issuer, sso_subject, password_hash FROM users WHERE id = $1`, [
      adaId,
    ]);
    expect(row).toEqual({ sso_issuer: idp.issuer, sso_subject: 'ada', password_hash: null });
    const events = await audit(adaId);
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining([
        'user.created',
        'user.sso_linked',
        'user.system_role_changed',
        'member.added',
        'auth.sso_provisioned',
        'auth.sso_login',
      ]),
    );
    const login = events.find((e) => e.action === 'auth.sso_login')!;
    expect(login.details).toEqual(expect.objectContaining({ created: true, missing_workspaces: [gone] }));
    expect(JSON.stringify(events)).not.toContain(idp.clientSecret);
  });

  it('refuses to become an existing account of the same e-mail (linking is off by default)', async () => {
    idp.accounts.set('mallory', { email: admin.email.toUpperCase(), name: 'Not the admin', groups: ['ews-admins'] });
    const context = await newContext();
    const answer = await signIn(context, 'mallory');
    await context.close();
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.text)).toEqual(expect.objectContaining({ error_code: 'sso_account_exists' }));
    const [row] = await t.dataSource.query(`SELECT sso_subject FROM users WHERE id = $1`, [admin.id]);
    expect(row.sso_subject).toBeNull();
    const [refusal] = await t.dataSource.query(
      `SELECT details FROM audit_events WHERE action = 'auth.sso_login_failed' ORDER BY created_at DESC LIMIT 1`,
    );
    expect(refusal.details).toEqual(expect.objectContaining({ reason: 'sso_account_exists' }));
  });

  it('the next login re-applies the mapping after the groups change, and can hand the token to an allowed page', async () => {
    idp.accounts.get('ada')!.groups = ['evals-leads'];
    const refused = await t.http.get('/auth/sso/login').query({ return_to: 'https://elsewhere.example/steal' });
    expectProblem(refused, 400, 'sso_return_not_allowed');

    const context = await newContext();
    const answer = await signIn(context, 'ada', `?return_to=${encodeURIComponent(`${APP_ORIGIN}/signed-in`)}`);
    await context.close();
    expect(answer.status).toBe(303);
    const target = new URL(answer.location);
    expect(target.origin + target.pathname).toBe(`${APP_ORIGIN}/signed-in`);
    const fragment = new URLSearchParams(target.hash.slice(1));
    expect(fragment.get('token_type')).toBe('bearer');
    fragmentToken = fragment.get('access_token')!;
    const res = await me(fragmentToken);
    expect(res.body).toEqual(expect.objectContaining({ id: adaId, system_role: 'user' }));
    expect(roles(res.body)).toEqual({ [evals]: 'admin' });
    const actions = (await audit(adaId)).map((e) => e.action);
    expect(actions.filter((a) => a === 'member.removed')).toHaveLength(1);
    expect(actions.filter((a) => a === 'user.system_role_changed')).toHaveLength(2);
    expect(actions.filter((a) => a === 'user.created')).toHaveLength(1);
  });

  /** The start of a login as a client sees it: the provider's URL and the sealed cookie. */
  async function startLogin(): Promise<{ authorize: URL; cookie: string }> {
    const res = await t.http.get('/auth/sso/login').expect(302);
    const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('ews_sso_login='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(res.headers.location).not.toContain(idp.clientSecret);
    return { authorize: new URL(res.headers.location), cookie: cookie.split(';')[0] };
  }

  /**
   * Drives the provider (already signed in) through an authorization URL; the parameters it sent
   * back. The browser then calls the callback without the login's cookie, refused (state_invalid).
   */
  async function callbackParams(authorize: URL): Promise<Record<string, string>> {
    const page = await idpSession.newPage();
    const sent = page.waitForRequest((r) => r.url().startsWith(`${base}/auth/sso/callback`));
    await page.goto(authorize.href);
    const url = new URL((await sent).url());
    await page.close();
    return Object.fromEntries(url.searchParams);
  }

  const callback = (params: Record<string, string>, cookie?: string) => {
    const req = t.http.get('/auth/sso/callback').query(params);
    return cookie ? req.set('Cookie', cookie) : req;
  };

  it('refuses forged callbacks: a tampered state, a wrong nonce, a wrong or missing PKCE verifier, a refusal', async () => {
    const a = await startLogin();
    const sent = await callbackParams(a.authorize);
    expectProblem(await callback({ ...sent, state: `${sent.state}x` }, a.cookie), 400, 'sso_state_invalid');
    expectProblem(await callback(sent), 400, 'sso_state_invalid');
    expectProblem(await callback(sent, `ews_sso_login=${a.cookie.slice(14, -2)}AA`), 400, 'sso_state_invalid');

    const b = await startLogin();
    const forgedNonce = new URL(b.authorize);
    forgedNonce.searchParams.set('nonce', 'a-nonce-of-the-attacker');
    expectProblem(await callback(await callbackParams(forgedNonce), b.cookie), 401, 'sso_login_failed');

    const [c, d] = [await startLogin(), await startLogin()];
    const codeOfC = await callbackParams(c.authorize);
    const state = d.authorize.searchParams.get('state')!;
    expectProblem(await callback({ ...codeOfC, state }, d.cookie), 401, 'sso_login_failed');

    const e = await startLogin();
    const noPkce = new URL(e.authorize);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    expectProblem(await callback(await callbackParams(noPkce), e.cookie), 401, 'sso_login_failed');

    const f = await startLogin();
    const refusal = { error: 'access_denied', state: f.authorize.searchParams.get('state')!, iss: idp.issuer };
    expectProblem(await callback(refusal, f.cookie), 401, 'sso_denied');

    const failures: Array<{ reason: string }> = await t.dataSource.query(
      `SELECT details ->> 'reason' AS reason FROM audit_events WHERE action = 'auth.sso_login_failed'`,
    );
    const count = (reason: string) => failures.filter((f) => f.reason === reason).length;
    expect([count('sso_login_failed'), count('sso_denied'), count('state_invalid') >= 3]).toEqual([3, 1, true]);
  });

  it('logout ends the session at once and hands the provider logout URL, which ends the provider session', async () => {
    const res = await t.http.post('/auth/sso/logout').set({ Authorization: `Bearer ${fragmentToken}` });
    expect(res.status).toBe(200);
    expect(res.body.logged_out).toBe(true);
    const end = new URL(res.body.end_session_url);
    expect(end.href.startsWith(`${idp.issuer}/session/end`)).toBe(true);
    expect(end.searchParams.get('client_id')).toBe(idp.clientId);
    expectProblem(await me(fragmentToken), 401);

    const page = await idpSession.newPage();
    await page.goto(end.href);
    await page.locator('button[name=logout]').click();
    await page.waitForURL(`${APP_ORIGIN}/signed-out**`);
    await page.close();
    // The provider's session is over: the next login asks for the password again.
    const again = await idpSession.newPage();
    await again.goto(`${base}/auth/sso/login`);
    await again.locator('input[name=login]').waitFor();
    await again.close();
  });

  it('refuses password logins for the SSO domain, naming single sign-on, even with the right password', async () => {
    await t.http
      .post(`/users/${adaId}/reset-password`)
      .set(admin.auth)
      .send({ password: 'a-right-password-1' })
      .expect(200);
    const res = await t.http.post('/auth/token').send({ email: 'ADA@corp.example', password: 'a-right-password-1' });
    expectProblem(res, 403, 'sso_required');
    expect(res.body.detail).toContain('/auth/sso/login');
    // Other domains keep their passwords.
    expect((await t.http.post('/auth/token').send({ email: admin.email, password: admin.password })).status).toBe(200);
  });

  it('leaves API keys as they were', async () => {
    const created = await t.http
      .post(`/workspaces/${evals}/api-keys`)
      .set(admin.auth)
      .send({ name: 'ci', role: 'viewer' })
      .expect(201);
    const res = await me(created.body.key);
    expect(res.status).toBe(200);
    expect(roles(res.body)).toEqual({ [evals]: 'viewer' });
  });
});
