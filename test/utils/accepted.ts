import { expect } from '@jest/globals';
import type { Response } from 'supertest';
import type { TestApp } from './test-app.js';

/**
 * A 202 says where to follow the work: its Location names the record it answered with, and a
 * GET there (as `auth`) answers that record. Answers the followed record.
 */
export async function followLocation(
  t: TestApp,
  res: Response,
  auth: Record<string, string>,
): Promise<Record<string, unknown>> {
  expect(res.status).toBe(202);
  const location = res.headers.location;
  expect(location).toMatch(/^\/[^\s]*$/);
  expect(location).toContain(res.body.id);
  const followed = await t.http.get(location).set(auth);
  expect(followed.status).toBe(200);
  expect(followed.body.id).toBe(res.body.id);
  return followed.body as Record<string, unknown>;
}
