import { describe, it } from '@jest/globals';

/**
 * Which database this test file runs on. The jest projects `e2e-postgres` and `e2e-embedded`
 * set TEST_DATABASE (test/utils/jest/*.cjs); a run outside those projects is on PostgreSQL.
 */
export type DatabaseKind = 'postgres' | 'embedded';

function readKind(): DatabaseKind {
  const value = process.env.TEST_DATABASE ?? 'postgres';
  if (value !== 'postgres' && value !== 'embedded')
    throw new Error(`TEST_DATABASE must be "postgres" or "embedded", not "${value}"`);
  return value;
}

export const TEST_DATABASE: DatabaseKind = readKind();
export const onEmbedded = TEST_DATABASE === 'embedded';
export const onPostgres = TEST_DATABASE === 'postgres';

type Body = () => void;
type TestBody = Parameters<typeof it>[1];

/**
 * `describe` on the named database only. Elsewhere the block is skipped without running its
 * body, and the skipped placeholder names the reason, so a verbose run shows why.
 */
export function describeOn(kind: DatabaseKind, reason: string): (name: string, fn: Body) => void {
  return (name, fn) => {
    if (kind === TEST_DATABASE) describe(name, fn);
    else describe.skip(name, () => it(`runs on ${kind} only: ${reason}`, () => undefined));
  };
}

/** `it` on the named database only; elsewhere skipped, with the reason in its name. */
export function itOn(kind: DatabaseKind, reason: string): (name: string, fn: TestBody, timeout?: number) => void {
  return (name, fn, timeout) => {
    if (kind === TEST_DATABASE) it(name, fn, timeout);
    else it.skip(`${name} [${kind} only: ${reason}]`, () => undefined);
  };
}
