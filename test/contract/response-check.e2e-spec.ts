import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AuthService } from '#src/modules/auth/auth.service.js';
import { responseViolations } from '../utils/response-violations.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/**
 * The check every e2e answer goes through (docs/testing.md, "Every answer is a contract check")
 * sees what the real application sends, to supertest and to fetch over a socket alike: an answer
 * the document does not admit is reported with its operation, status and JSON path.
 */
describe('every answer checked against the served document', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp();
    ({ auth } = await t.factory.actor());
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reports an answer that breaks its schema, and nothing for one that keeps it', async () => {
    await t.http.get('/auth/me').set(auth).expect(200);
    expect(responseViolations()).toEqual([]);

    const service = t.app.get(AuthService);
    const original = service.me.bind(service);
    jest.spyOn(service, 'me').mockImplementationOnce(async (...args) => {
      const { email: _email, ...rest } = await original(...args);
      return { ...rest, memberships: 'none' } as never;
    });
    await t.http.get('/auth/me').set(auth).expect(200);
    const [violation, ...more] = responseViolations();
    expect(more).toEqual([]);
    expect(violation).toContain('GET /auth/me (getCurrentUser) answered 200 application/json');
    expect(violation).toMatch(/must have required property 'email'/);
    expect(violation).toMatch(/\$\.memberships: .*must be array \(found "none"\)/);
    expect(violation).toContain('(during "every answer checked against the served document reports an answer');
  });

  it('sees answers given over a socket to fetch, as an SDK or the CLI gets them', async () => {
    await t.app.listen(0, '127.0.0.1');
    const url = await t.app.getUrl();
    const service = t.app.get(AuthService);
    jest.spyOn(service, 'me').mockResolvedValueOnce({ id: 7 } as never);
    const res = await fetch(`${url.replace('[::1]', '127.0.0.1')}/auth/me`, { headers: auth });
    expect(res.status).toBe(200);
    await res.text();
    const [violation] = responseViolations();
    expect(violation).toContain('GET /auth/me (getCurrentUser) answered 200');
    expect(violation).toMatch(/\$\.id: .*must be string \(found 7\)/);
  });
});
