import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import {
  documentedOperations,
  fillPath,
  loadSpecOperations,
  operationKey,
  send,
  type OpenApiDocument,
} from './support/spec-operations.js';

/**
 * Walks every implemented operation without a token: the specification's six public ones
 * must not answer 401; every other one must answer 401 problem+json before looking at its
 * path parameters or body (random ids, `{}` bodies). The walk grows as families land.
 */
describe('every implemented operation without a token', () => {
  const spec = loadSpecOperations();
  let t: TestApp;
  let document: OpenApiDocument;
  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/openapi.json').expect(200)).body as OpenApiDocument;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 401 problem+json on each non-public operation of the specification, and not on the public ones', async () => {
    const documented = documentedOperations(document);
    const implemented = spec.filter((op) => documented.has(operationKey(op.method, op.path)));
    expect(implemented.length).toBeGreaterThanOrEqual(10);
    const failures: string[] = [];
    for (const op of implemented) {
      const url = fillPath(op.path, randomUUID);
      const res = await send(t.http, op.method, url);
      const label = `${op.method} ${url}`;
      if (op.public) {
        if (res.status === 401) failures.push(`${label}: public, yet answered 401`);
        continue;
      }
      const body = res.body ?? {};
      const wellFormed =
        res.status === 401 &&
        /^application\/problem\+json/.test(res.headers['content-type'] ?? '') &&
        ['type', 'title', 'detail', 'error_code'].every(
          (member) => typeof body[member] === 'string' && body[member].length > 0,
        ) &&
        body.status === 401 &&
        body.error_code === 'unauthenticated';
      if (!wellFormed)
        failures.push(
          `${label}: expected 401 problem+json (error_code unauthenticated), got ${res.status} ${JSON.stringify(body).slice(0, 200)}`,
        );
    }
    expect(failures).toEqual([]);
  });

  it('answers 401 on operations beyond the specification unless their access rule is public', async () => {
    const specKeys = new Set(spec.map((op) => operationKey(op.method, op.path)));
    const failures: string[] = [];
    for (const [key, { method, path, operation }] of documentedOperations(document)) {
      if (specKeys.has(key)) continue;
      const rule = operation['x-access']?.rule;
      const res = await send(t.http, method, fillPath(path, randomUUID));
      const isPublic = rule === 'public' || rule === 'optional-user';
      if (isPublic ? res.status === 401 : res.status !== 401 || res.body?.error_code !== 'unauthenticated') {
        failures.push(`${method} ${path} (${rule ?? 'no rule'}): got ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses a malformed, a forged and an expired-looking token the same way', async () => {
    const documented = documentedOperations(document);
    const target = spec.find(
      (op) => !op.public && op.method === 'GET' && documented.has(operationKey(op.method, op.path)),
    )!;
    const forged =
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4IiwianRpIjoieSIsImV4cCI6MX0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    for (const header of ['Bearer', 'Bearer not-a-jwt', `Bearer ${forged}`, 'Basic YWRtaW46YWRtaW4=']) {
      const res = await t.http.get(fillPath(target.path, randomUUID)).set('Authorization', header);
      expect([res.status, res.body.error_code]).toEqual([401, 'unauthenticated']);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });
});
