import { expect } from '@jest/globals';
import type { Response } from 'supertest';

/** Asserts an RFC 9457 body with all five required members, whose status equals the HTTP status. */
export function expectProblem(res: Response, status: number, errorCode?: string): void {
  if (res.status !== status) {
    throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body ?? res.text)}`);
  }
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = typeof res.body === 'object' && Object.keys(res.body).length ? res.body : JSON.parse(res.text);
  expect(body).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      error_code: expect.any(String),
    }),
  );
  if (errorCode) expect(body.error_code).toBe(errorCode);
}
