/**
 * Operations of the specification that later issues implement. contract.e2e-spec.ts fails for
 * an operation that is neither implemented nor listed here, and for one listed here that is
 * implemented: delete its line when the family lands. `UPDATE_PENDING=1 npm test --
 * test/contract/contract` rewrites this file from what the served document lacks.
 */
export const PENDING_OPERATIONS: ReadonlyArray<
  readonly [method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string]
> = [];
