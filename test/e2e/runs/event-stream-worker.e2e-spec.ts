import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uploadRows } from '../../utils/datasets.js';
import { describeOn } from '../../utils/database-mode.js';
import { openEventStream } from '../../utils/event-stream.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import {
  deleteQueueKeys,
  TEST_REDIS_URL,
  uniqueQueuePrefix,
  workerEnvironment,
} from '../queue/support/worker-context.js';
import { spawnWorker, type WorkerProcess } from '../queue/support/worker-process.js';

type RunEvent = { seq: number; type: string; data: Record<string, unknown> };

/**
 * The live stream when the run executes in another process: an API without workers, a worker
 * process on BullMQ (Redis), one PostgreSQL database. The worker's events reach the API's
 * streams through LISTEN/NOTIFY, over one listening connection for every stream of the API.
 */
describeOn(
  'postgres',
  'an API and a separate worker process on PostgreSQL and Redis; the embedded database serves one process',
)('runs: live event stream across processes', () => {
  const prefix = uniqueQueuePrefix();
  const env = { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, RUN_EVENT_STREAM_HEARTBEAT_SECONDS: '60' };
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-run-stream-'));
  let api: TestApp;
  let sut: FakeUpstream;
  let worker: WorkerProcess | undefined;
  let base: string;

  beforeAll(async () => {
    api = await startTestApp({ ...env, RUN_WORKERS: 'false' });
    await api.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}`;
    sut = await FakeUpstream.start();
    sut.on('POST', '/answer', (req) => ({
      json: { output: `echo ${(req.body as { input: string }).input}` },
      delayMs: 40,
    }));
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await sut?.close();
    await api?.close();
    await deleteQueueKeys(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('streams every event the worker process writes, live, until the terminal state; the API listens on one connection', async () => {
    const owner = await api.factory.actor();
    const ws = (await api.http.post('/workspaces').set(owner.auth).send({ name: 'stream' }).expect(201)).body.id;
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

    // Streams open while nothing executes the run (no worker yet): they have the backlog only.
    const streams = await Promise.all(
      [1, 2, 3].map(() => openEventStream(base, `/runs/${run.id}/events/stream`, owner.auth)),
    );
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    await Promise.all(streams.map((s) => s.until((x) => x.messages.length === 1)));
    const listening = await api.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'`,
    );
    expect(listening[0].n).toBe(1);

    const shared = { ...env, JWT_SECRET: api.config.env.JWT_SECRET!, ENCRYPTION_KEY: api.config.env.ENCRYPTION_KEY! };
    worker = await spawnWorker({ ...workerEnvironment(api.db, shared), DATA_DIR: dataDir, RUN_WORKERS: 'true' });
    // The heartbeat (and its re-read) is a minute away: only the worker's notifications can bring these.
    await Promise.all(streams.map((s) => s.ended));
    const listed = (await api.http.get(`/runs/${run.id}/events`).set(owner.auth).expect(200)).body as RunEvent[];
    expect(listed.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
      'queued',
      'running',
      'succeeded',
    ]);
    for (const s of streams) {
      expect(s.endedByServer()).toBe(true);
      expect(s.messages.map((m) => JSON.parse(m.data))).toEqual(listed);
      expect(s.messages.map((m) => m.id)).toEqual(listed.map((e) => String(e.seq)));
    }

    // A stream resumed mid-way after the run ended gets the rest at once.
    const resumed = await openEventStream(base, `/runs/${run.id}/events/stream`, {
      ...owner.auth,
      'Last-Event-ID': String(listed[1].seq),
    });
    await resumed.ended;
    expect(resumed.messages.map((m) => JSON.parse(m.data))).toEqual(listed.slice(2));
  });
});
