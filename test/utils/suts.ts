import type { TestApp } from './test-app.js';

type Auth = Record<string, string>;

/**
 * A SUT of the workspace with one connection. An `http` connection gets the adapter the tests'
 * fake SUTs speak: `{question: <input>}` sent, `$.answer` read.
 */
export async function sutWithConnection(
  t: TestApp,
  auth: Auth,
  workspaceId: string,
  sut: { name: string; connection: Record<string, unknown> & { kind: string } },
): Promise<{ sutId: string; connectionId: string }> {
  const sutId = (await t.http.post('/suts').set(auth).send({ workspace_id: workspaceId, name: sut.name }).expect(201))
    .body.id as string;
  const connectionId = (await t.http.post(`/suts/${sutId}/connections`).set(auth).send(sut.connection).expect(201)).body
    .id as string;
  if (sut.connection.kind === 'http')
    await t.http
      .post(`/suts/${sutId}/connections/${connectionId}/adapter`)
      .set(auth)
      .send({ request: { body: { question: '{{input}}' } }, response: { language: 'jsonpath', output: '$.answer' } })
      .expect(201);
  return { sutId, connectionId };
}

/** Starts a run with `body` (its 202) and answers it once it has ended, read by `reader`. */
export async function runToEnd<T extends { state: string }>(
  t: TestApp,
  starter: Auth,
  reader: Auth,
  body: Record<string, unknown>,
): Promise<T> {
  const started = await t.http.post('/runs').set(starter).send(body).expect(202);
  return endedRun<T>(t, reader, started.body.id as string);
}

/** The run once it has ended (polled every 50 ms, for `withinMs` at most). */
export async function endedRun<T extends { state: string }>(
  t: TestApp,
  auth: Auth,
  runId: string,
  withinMs = 30_000,
): Promise<T> {
  for (let i = 0; i < withinMs / 50; i++) {
    const run = (await t.http.get(`/runs/${runId}`).set(auth).expect(200)).body as T;
    if (['succeeded', 'failed', 'cancelled'].includes(run.state)) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not end`);
}
