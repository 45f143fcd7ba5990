import type { TestApp } from './test-app.js';

/** Polls an ingest run (GET /traces/runs/{id}) until it ends, and answers it. */
export async function landingSettled(
  t: TestApp,
  auth: Record<string, string>,
  runId: string,
): Promise<Record<string, any>> {
  for (let i = 0; i < 400; i++) {
    const run = (await t.http.get(`/traces/runs/${runId}`).set(auth).expect(200)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(run.state)) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the landing ${runId} did not finish`);
}
