/**
 * The answers the OpenAPI document does not admit, found by the check every test app runs
 * (test/utils/response-contract.ts), until e2e-cleanup.ts fails the test with them. Apart from
 * the check itself, so that the files that boot no app (the medium tier) do not load Prism.
 */
const found: string[] = [];

/** Off with TEST_RESPONSE_CHECK=off (to measure what the check costs). */
export const responseCheckEnabled = process.env.TEST_RESPONSE_CHECK !== 'off';

export function recordViolation(violation: string): void {
  found.push(violation);
}

/** The violations found since the last call. */
export function responseViolations(): string[] {
  return found.splice(0);
}

/** Fails with every violation found since the last look (e2e-cleanup.ts calls it after each test and file). */
export function assertResponsesMatchDocument(): void {
  const violations = responseViolations();
  if (!violations.length) return;
  const error = new Error(
    `${violations.length} answer(s) the OpenAPI document does not admit (fix the document or the answer; docs/testing.md):\n${violations.join('\n')}`,
  );
  error.stack = error.message;
  throw error;
}
