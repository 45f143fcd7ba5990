import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { openEventStream, type EventStreamClient } from '../../utils/event-stream.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type RunEvent = { seq: number; type: string; at: string; data: Record<string, unknown> };
const TERMINAL = ['succeeded', 'failed', 'cancelled'];

/** The events a stream delivered, parsed, checked against their SSE fields. */
function received(stream: EventStreamClient): RunEvent[] {
  return stream.messages.map((m) => {
    const event = JSON.parse(m.data) as RunEvent;
    expect(m.id).toBe(String(event.seq));
    expect(m.event).toBe(event.type);
    return event;
  });
}

const isTerminal = (e: RunEvent) => e.type === 'state_changed' && TERMINAL.includes(e.data.to as string);

/**
 * GET /runs/{run_id}/events/stream: the run's events as Server-Sent Events while a real run goes
 * (in-process worker, a local SUT), resumed from Last-Event-ID, several streams at once, the
 * limits per user and per process, and a disconnected client's stream released.
 */
describe('runs: live event stream', () => {
  let t: TestApp;
  let base: string;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let sutId: string;
  let httpConnection: string;
  let offlineConnection: string;
  let finished: { id: string; events: RunEvent[] };

  const list = async (runId: string): Promise<RunEvent[]> =>
    (await t.http.get(`/runs/${runId}/events`).set(r.viewer.auth).expect(200)).body;
  const startRun = async (connection: string): Promise<string> =>
    (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: connection,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body.id;
  const stream = (runId: string, headers: Record<string, string>, query = '') =>
    openEventStream(base, `/runs/${runId}/events/stream${query}`, headers);

  beforeAll(async () => {
    t = await startTestApp({
      RUN_EVENT_STREAM_HEARTBEAT_SECONDS: '1',
      RUN_EVENT_STREAMS_PER_USER: '3',
      RUN_EVENT_STREAMS_MAX: '5',
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    sut = await FakeUpstream.start();
    // Slow enough that the run is still going when the stream opens: its later events arrive live.
    sut.on('POST', '/answer', (req) => ({
      json: {
        output:
          (req.body as { input: string }).input === 'q3' ? 'wrong' : `echo ${(req.body as { input: string }).input}`,
      },
      delayMs: 150,
    }));
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    data = await uploadRows(
      t,
      r.member.auth,
      ws,
      Array.from({ length: 10 }, (_, i) => ({ input: `q${i}`, expected_output: `echo q${i}` })),
    );
    sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'echo' }).expect(201)).body
      .id;
    httpConnection = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 1 })
        .expect(201)
    ).body.id;
    offlineConnection = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'uploads', kind: 'offline' })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await sut?.close();
    await t?.close();
  });

  it('streams a run from its start to its terminal state: the same events as GET …/events, then the server ends the stream', async () => {
    const runId = await startRun(httpConnection);
    const live = await stream(runId, r.viewer.auth);
    expect(live.status).toBe(200);
    expect(live.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(live.headers['cache-control']).toBe('no-cache, no-transform');
    await live.until((s) => s.messages.length > 0);
    // The stream was open before the run ended: what follows arrived live.
    expect(TERMINAL).not.toContain((await t.http.get(`/runs/${runId}`).set(r.viewer.auth).expect(200)).body.state);
    await live.ended;
    expect(live.endedByServer()).toBe(true);
    const events = received(live);
    expect(isTerminal(events.at(-1)!)).toBe(true);
    const listed = await list(runId);
    expect(events).toEqual(listed);
    expect(events.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
      'queued',
      'running',
      'succeeded',
    ]);
    expect(events.filter((e) => e.type === 'progress').at(-1)?.data).toEqual(
      expect.objectContaining({ done: 10, total: 10 }),
    );
    finished = { id: runId, events };
  });

  it('resumes after Last-Event-ID (or `after`) with exactly the remaining events, and ends at once when the run has ended', async () => {
    const { id, events } = finished;
    const cut = events[2].seq;
    const resumed = await stream(id, { ...r.viewer.auth, 'Last-Event-ID': String(cut) });
    await resumed.ended;
    expect(resumed.endedByServer()).toBe(true);
    expect(received(resumed)).toEqual(events.slice(3));
    // Last-Event-ID wins over the `after` of the URL an EventSource keeps when it reconnects.
    const both = await stream(
      id,
      { ...r.viewer.auth, 'Last-Event-ID': String(events[4].seq) },
      `?after=${events[0].seq}`,
    );
    await both.ended;
    expect(received(both)).toEqual(events.slice(5));
    const byQuery = await stream(id, r.viewer.auth, `?after=${events[0].seq}`);
    await byQuery.ended;
    expect(received(byQuery)).toEqual(events.slice(1));
    // Past the last event of an ended run: nothing to send, and the stream is over.
    const nothing = await stream(id, { ...r.viewer.auth, 'Last-Event-ID': String(events.at(-1)!.seq) });
    await nothing.ended;
    expect(nothing.status).toBe(200);
    expect(nothing.messages).toEqual([]);
  });

  it("answers problems before streaming, as GET …/events does: a bad cursor 400, no token 401, a non-member and another workspace's API key 403", async () => {
    const bad = await stream(finished.id, { ...r.viewer.auth, 'Last-Event-ID': 'abc' });
    await bad.ended;
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(bad.text())).toEqual(
      expect.objectContaining({
        error_code: 'validation_failed',
        errors: [expect.objectContaining({ field: 'Last-Event-ID' })],
      }),
    );
    expectProblem(
      await t.http.get(`/runs/${finished.id}/events/stream`).query({ after: -1 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get(`/runs/${finished.id}/events/stream`), 401);
    expectProblem(await t.http.get(`/runs/${finished.id}/events`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/runs/${finished.id}/events/stream`).set(r.outsider.auth), 403);
    const stranger = await t.factory.actor();
    const elsewhere = (await t.http.post('/workspaces').set(stranger.auth).send({ name: 'elsewhere' }).expect(201)).body
      .id;
    const key = (
      await t.http
        .post(`/workspaces/${elsewhere}/api-keys`)
        .set(stranger.auth)
        .send({ name: 'ci', role: 'member' })
        .expect(201)
    ).body.key as string;
    expectProblem(await t.http.get(`/runs/${finished.id}/events`).set({ Authorization: `Bearer ${key}` }), 403);
    expectProblem(await t.http.get(`/runs/${finished.id}/events/stream`).set({ Authorization: `Bearer ${key}` }), 403);
    expectProblem(await t.http.get('/runs/00000000-0000-4000-8000-000000000000/events/stream').set(r.viewer.auth), 404);
  });

  it('serves parallel streams of one run (tokens and an API key) the same events; heartbeats while idle; a cancel ends them all', async () => {
    const runId = await startRun(offlineConnection);
    const key = (
      await t.http.post(`/workspaces/${ws}/api-keys`).set(r.owner.auth).send({ name: 'ci', role: 'viewer' }).expect(201)
    ).body.key as string;
    const streams = await Promise.all(
      [r.viewer.auth, r.viewer.auth, r.member.auth, r.admin.auth, { Authorization: `Bearer ${key}` }].map((auth) =>
        stream(runId, auth),
      ),
    );
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    // Waiting for an upload, the run is idle: each stream gets heartbeats (every second here).
    await Promise.all(streams.map((s) => s.until((x) => x.comments.includes('heartbeat'), 15_000)));
    await t.http.post(`/runs/${runId}/cancel`).set(r.member.auth).expect(200);
    await Promise.all(streams.map((s) => s.ended));
    const listed = await list(runId);
    expect(listed.map((e) => e.type)).toEqual(['state_changed', 'cancel_requested', 'state_changed']);
    for (const s of streams) {
      expect(s.endedByServer()).toBe(true);
      expect(received(s)).toEqual(listed);
    }
  });

  it('bounds streams per user (429) and per process (503), and a client that disconnects releases its stream', async () => {
    const runId = await startRun(offlineConnection);
    const mine = await Promise.all([1, 2, 3].map(() => stream(runId, r.viewer.auth)));
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await stream(runId, r.viewer.auth);
    await fourth.ended;
    expect(fourth.status).toBe(429);
    expect(fourth.headers['retry-after']).toBe('5');
    expect(JSON.parse(fourth.text())).toEqual(
      expect.objectContaining({ error_code: 'too_many_event_streams', limit: 3 }),
    );
    const others = await Promise.all([r.member.auth, r.admin.auth].map((auth) => stream(runId, auth)));
    expect(others.map((s) => s.status)).toEqual([200, 200]);
    const full = await stream(runId, r.owner.auth);
    await full.ended;
    expect(full.status).toBe(503);
    expect(JSON.parse(full.text())).toEqual(
      expect.objectContaining({ error_code: 'event_streams_exhausted', limit: 5 }),
    );

    // One viewer's tab closes: its place is free again (for them and for the process).
    mine[0].close();
    let again: EventStreamClient | undefined;
    for (let i = 0; i < 100 && again?.status !== 200; i++) {
      again?.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await stream(runId, r.viewer.auth);
    }
    expect(again!.status).toBe(200);
    await t.http.post(`/runs/${runId}/cancel`).set(r.member.auth).expect(200);
    await Promise.all([again!, ...mine.slice(1), ...others].map((s) => s.ended));
    // Every stream ended: each place is free again.
    const after = await Promise.all([r.viewer.auth, r.viewer.auth, r.viewer.auth].map((auth) => stream(runId, auth)));
    await Promise.all(after.map((s) => s.ended));
    expect(after.map((s) => s.status)).toEqual([200, 200, 200]);
  });
});
