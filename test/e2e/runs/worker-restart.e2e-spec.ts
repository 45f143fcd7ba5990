import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uploadRows } from '../../utils/datasets.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import {
  deleteQueueKeys,
  startWorkerContext,
  TEST_REDIS_URL,
  uniqueQueuePrefix,
  workerEnvironment,
} from '../queue/support/worker-context.js';
import { spawnWorker } from '../queue/support/worker-process.js';
import { describeOn } from '../../utils/database-mode.js';

/** A run survives its worker process being SIGKILLed: another worker resumes it without calling the SUT again for a finished row. */
describeOn(
  'postgres',
  'spawns worker processes with DATABASE_URL and REDIS_URL; the embedded database serves one process',
)('runs: a worker killed mid-run', () => {
  const prefix = uniqueQueuePrefix();
  const env = { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, JOB_LEASE_SECONDS: '5', JOB_RETRY_DELAY_MS: '50' };
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-run-restart-'));
  let api: TestApp;
  let sut: FakeUpstream;

  beforeAll(async () => {
    api = await startTestApp({ ...env, RUN_WORKERS: 'false' });
    sut = await FakeUpstream.start();
    sut.on('POST', '/answer', (req) => ({
      json: { output: `echo ${(req.body as { input: string }).input}` },
      delayMs: 60,
    }));
  });
  afterAll(async () => {
    await sut?.close();
    await api?.close();
    await deleteQueueKeys(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes from the recorded items: every row answered once, except at most the calls in flight at the kill', async () => {
    const owner = await api.factory.actor();
    const ws = (await api.http.post('/workspaces').set(owner.auth).send({ name: 'restart' }).expect(201)).body.id;
    const data = await uploadRows(
      api,
      owner.auth,
      ws,
      Array.from({ length: 40 }, (_, i) => ({ input: `q${i}`, expected_output: `echo q${i}` })),
    );
    const sutId = (await api.http.post('/suts').set(owner.auth).send({ workspace_id: ws, name: 'echo' }).expect(201))
      .body.id;
    const connection = (
      await api.http
        .post(`/suts/${sutId}/connections`)
        .set(owner.auth)
        .send({ name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 2 })
        .expect(201)
    ).body.id;
    const run = (
      await api.http
        .post('/runs')
        .set(owner.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: connection,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body;

    // Workers share the API's keys (an in-process worker registers the JWT strategy process-wide).
    const shared = { ...env, JWT_SECRET: api.config.env.JWT_SECRET!, ENCRYPTION_KEY: api.config.env.ENCRYPTION_KEY! };
    const doomed = await spawnWorker({ ...workerEnvironment(api.db, shared), DATA_DIR: dataDir, RUN_WORKERS: 'true' });
    const answered = async () =>
      Number(
        (
          await api.dataSource.query(`SELECT count(*) FROM run_items WHERE run_id = $1 AND status <> 'pending'`, [
            run.id,
          ])
        )[0].count,
      );
    for (let i = 0; i < 200 && (await answered()) < 10; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const before = await api.dataSource.query(
      `SELECT (data->>'input') AS input FROM run_items WHERE run_id = $1 AND status <> 'pending'`,
      [run.id],
    );
    const finishedBeforeKill = new Set<string>(before.map((r: { input: string }) => r.input));
    expect(finishedBeforeKill.size).toBeGreaterThanOrEqual(10);
    expect(finishedBeforeKill.size).toBeLessThan(40);

    const survivor = await startWorkerContext(api.db, { ...shared, RUN_WORKERS: 'true' });
    try {
      let state = '';
      for (let i = 0; i < 400 && state !== 'succeeded'; i++) {
        const res = await api.http.get(`/runs/${run.id}`).set(owner.auth);
        if (res.status !== 200) throw new Error(JSON.stringify(res.body));
        state = res.body.state;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const done = (await api.http.get(`/runs/${run.id}`).set(owner.auth).expect(200)).body;
      expect(done).toEqual(
        expect.objectContaining({
          state: 'succeeded',
          passed: true,
          progress: expect.objectContaining({ total: 40, completed: 40, errored: 0 }),
        }),
      );
      const calls = new Map<string, number>();
      for (const req of sut.received('POST', '/answer')) {
        const input = (req.body as { input: string }).input;
        calls.set(input, (calls.get(input) ?? 0) + 1);
      }
      expect(calls.size).toBe(40);
      for (const input of finishedBeforeKill) expect(calls.get(input)).toBe(1);
      // Only the calls the worker had begun and not yet recorded were made twice: those in flight (at most
      // its concurrency, 2) and answers still on their way to the database, each held by one of the run's
      // lanes (max(8, 2 x concurrency) = 8); on a loaded host the writes lag and more than 2 were seen.
      const twice = [...calls.values()].filter((n) => n > 1).length;
      expect(twice).toBeLessThanOrEqual(8);
      expect(calls.size + twice).toBe(sut.received('POST', '/answer').length);
      const events = (await api.http.get(`/runs/${run.id}/events`).set(owner.auth).expect(200)).body as Array<{
        type: string;
        data: { to?: string };
      }>;
      expect(events.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
        'queued',
        'running',
        'succeeded',
      ]);
    } finally {
      await survivor.close();
    }
  });
});
