/**
 * Polls `attempt` until it holds, or throws after `ms`; answers how long it took. For what reaches
 * the service a moment after a commit: a change made in SQL by hand is told to the access cache by
 * a notification, which PostgreSQL delivers asynchronously.
 */
export async function within(ms: number, attempt: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await attempt())) {
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
}
