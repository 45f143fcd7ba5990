/**
 * Statements worth reading as SQL (the hot ones, every request's or every item's, and the complex
 * ones): a repository method marked `@GenerateSql(...)` is called with each sample's arguments by
 * test/database/generated-sql, in a unit of work rolled back afterwards, and every statement it
 * runs is written to `src/queries/<file>.sql`, which the test keeps in step with the code. A change
 * to such a statement therefore shows in review as a change of SQL, not only of a builder chain.
 */
export interface SqlSample {
  /** Told apart in the file when a method has several samples (`findSessionWithAccess (a run)`). */
  name?: string;
  /** The method's arguments. */
  params: unknown[];
}

export interface SqlTarget {
  /** The repository's class, as Nest resolves it. */
  target: abstract new (...args: never[]) => unknown;
  method: string;
  samples: SqlSample[];
}

const registered: SqlTarget[] = [];

/** Marks a repository method whose statements src/queries shows, called with `samples` (one when none is given). */
export function GenerateSql(...samples: SqlSample[]): MethodDecorator {
  return (prototype, method) => {
    registered.push({
      target: prototype.constructor as SqlTarget['target'],
      method: String(method),
      samples: samples.length ? samples : [{ params: [] }],
    });
  };
}

/** Every marked method of the classes loaded in this process, in the order they were declared. */
export function sqlTargets(): readonly SqlTarget[] {
  return registered;
}

/** Sample values: fixed, so the generated file does not change from one run to the next. */
export const DummyValue = {
  UUID: '00000000-0000-4000-8000-000000000001',
  UUID2: '00000000-0000-4000-8000-000000000002',
  DATE: new Date('2026-01-01T00:00:00Z'),
  STRING: 'sample',
  NUMBER: 1,
} as const;
