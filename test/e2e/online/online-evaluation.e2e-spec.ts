import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import binomialTest from '@stdlib/stats-binomial-test';
import { randomUUID } from 'node:crypto';
import { isSampled } from '#libs/evaluation/online/sampling.js';
import { TraceScoresService } from '#src/modules/traces/scores/scores.service.js';
import type { FakeUpstream } from '../../utils/fake-upstream.js';
import { exportAnswers, exportingWorkspace, gradingWorld, until } from '../../utils/online.js';
import { uploadRows } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** Planted: answer i is bad when i % 5 === 0 (a fifth), and both metrics see it. */
const isBad = (i: number) => i % 5 === 0;
const answer = (i: number) => (isBad(i) ? `BAD answer ${i}` : `Your order ${i} ships tomorrow.`);

describe('Online evaluation: live traces sampled, scored once, backfilled', () => {
  let t: TestApp;
  let url: string;
  let ws: string;
  let key: string;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let judge: FakeUpstream;
  let judgeDown = false;
  const DATASET = `support-bot-${randomUUID().slice(0, 6)}`;
  let datasetId: string;

  beforeAll(async () => {
    t = await startTestApp({ ONLINE_JUDGE_RETRY_MS: '2000' });
    ({ url, key, r } = await exportingWorkspace(t));
    ws = r.workspace.id;
    judge = await gradingWorld(t, { admin: r.admin.auth, member: r.member.auth }, ws, () => judgeDown);
  });
  afterAll(async () => {
    await t?.close();
    await judge?.close();
  });

  /** Traces sent by the OpenTelemetry exporter into the dataset (trace i starting i seconds after `startAt`, when given). */
  const exportTraces = (from: number, to: number, startAt?: number) =>
    exportAnswers({
      url,
      key,
      dataset: DATASET,
      from,
      to,
      answer,
      startAt: startAt === undefined ? undefined : (i) => startAt + i * 1000,
    });

  const evaluator = (id: string): Promise<any> =>
    t.http
      .get(`/online-evaluators/${id}`)
      .set(r.member.auth)
      .expect(200)
      .then((res) => res.body);
  const scoresOf = (evaluatorId: string, traceIds: string[]) =>
    t.app
      .get(TraceScoresService)
      .forTraces(ws, datasetId, traceIds)
      .then((rows) => rows.filter((s) => s.evaluator_id === evaluatorId));

  let earlier: Map<number, string>;
  let evaluatorId: string;

  it('an evaluator on a trace dataset validates what it names', async () => {
    // Earlier traces, landed before the evaluator: a backfill's, not continuous scoring's.
    earlier = await exportTraces(1000, 1060, Date.UTC(2026, 10, 20, 9, 0, 0));
    const found = await until(
      'the dataset',
      () =>
        t.http
          .get('/datasets')
          .query({ workspace_id: ws, kind: 'traces' })
          .set(r.member.auth)
          .then((res) => res.body.items),
      (items) => items.some((d: { name: string }) => d.name === DATASET),
    );
    datasetId = found.find((d: { name: string }) => d.name === DATASET)!.id;
    await until(
      'earlier traces landed',
      () =>
        t.http
          .get(`/traces/datasets/${datasetId}/live`)
          .set(r.member.auth)
          .then((res) => res.body),
      (live) => live.pending_spans === 0 && live.head_spans === 120,
    );
    const base = { workspace_id: ws, dataset_id: datasetId, name: 'helpfulness', sampling_rate: 0.5 };
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...base, metrics: [{ name: 'no_such_metric' }] }),
      400,
      'online_evaluator_invalid',
    );
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...base, metrics: [{ name: 'grader' }], filter: { field: 'nope', op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...base, metrics: [{ name: 'grader' }], mapping: { output: { pick: 'last_root', field: 'answer' } } }),
      400,
      'online_evaluator_invalid',
    );
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.viewer.auth)
        .send({ ...base, metrics: [{ name: 'grader' }] }),
      403,
    );
    const created = await t.http
      .post('/online-evaluators')
      .set(r.member.auth)
      .send({
        ...base,
        metrics: [{ name: 'grader' }, { name: 'mentions_order' }],
        filter: { field: 'kind', op: 'eq', value: 'agent' },
        quiet_seconds: 2,
      })
      .expect(201);
    evaluatorId = created.body.id;
    expect(created.body).toEqual(
      expect.objectContaining({
        state: 'active',
        status: 'ok',
        version: 1,
        targets: { pending: 0, scored: 0, skipped: 0, failed: 0 },
      }),
    );
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...base, metrics: [{ name: 'grader' }] }),
      409,
      'online_evaluator_name_taken',
    );
  });

  it('live traces sent by the OpenTelemetry exporter are sampled at the rate by trace id and scored once each', async () => {
    const live = await exportTraces(0, 300);
    const sampled = [...live].filter(([, id]) => isSampled(id, 0.5));
    // The rate holds within a binomial interval: an exact test at the configured rate does not reject it.
    expect(binomialTest(sampled.length, live.size, { p: 0.5 }).pValue).toBeGreaterThan(0.001);
    const done = await until(
      'every sampled trace scored',
      () => evaluator(evaluatorId),
      (e) => e.targets.scored >= sampled.length,
    );
    expect(done.targets).toEqual({ pending: 0, scored: sampled.length, skipped: 0, failed: 0 });
    expect(done.progress.targets_sampled).toBe(sampled.length);
    expect(done.progress.traces_seen).toBe(300);
    const scores = await scoresOf(evaluatorId, [...live.values()]);
    // Exactly the sampled traces, each once per metric.
    expect(new Set(scores.map((s) => s.trace_id))).toEqual(new Set(sampled.map(([, id]) => id)));
    expect(scores).toHaveLength(sampled.length * 2);
    const failedOf = (metric: string) =>
      scores
        .filter((s) => s.metric === metric && s.passed === false)
        .map((s) => s.trace_id)
        .sort();
    const planted = sampled
      .filter(([i]) => isBad(i))
      .map(([, id]) => id)
      .sort();
    expect(failedOf('grader')).toEqual(planted);
    expect(failedOf('mentions_order')).toEqual(planted);
    const grader = scores.find((s) => s.metric === 'grader')!;
    expect(grader).toEqual(
      expect.objectContaining({
        level: 'trace',
        service_name: 'support-bot',
        model: 'gpt-4o-mini',
        evaluator_version: 1,
      }),
    );
    // The judge priced by the built-in table: 12 prompt and 5 completion tokens of gpt-4o-mini.
    expect(grader.cost_usd).toBeCloseTo((12 * 0.15 + 5 * 0.6) / 1e6, 12);
    // One judge call per sampled trace, never more.
    expect(judge.requests.filter((q) => q.url.endsWith('/chat/completions'))).toHaveLength(sampled.length);
  });

  it('a backfill scores the earlier traces of its range once, and again scores nothing', async () => {
    const range = { from: '2026-11-20T09:00:00Z', to: '2026-11-20T10:00:00Z' };
    const start = await t.http
      .post(`/online-evaluators/${evaluatorId}/backfills`)
      .set(r.member.auth)
      .send(range)
      .expect(202);
    const finished = await until(
      'the backfill',
      (): Promise<any> =>
        t.http
          .get(`/online-backfills/${start.body.id}`)
          .set(r.member.auth)
          .expect(200)
          .then((res) => res.body),
      (b) => b.state !== 'queued' && b.state !== 'running',
    );
    const sampled = [...earlier].filter(([, id]) => isSampled(id, 0.5));
    expect(finished).toEqual(expect.objectContaining({ state: 'succeeded' }));
    expect(finished.progress.targets).toEqual({ pending: 0, scored: sampled.length, skipped: 0, failed: 0 });
    const scores = await scoresOf(evaluatorId, [...earlier.values()]);
    expect(scores).toHaveLength(sampled.length * 2);
    const calls = judge.requests.length;
    const again = await t.http
      .post(`/online-evaluators/${evaluatorId}/backfills`)
      .set(r.member.auth)
      .send(range)
      .expect(202);
    const second = await until(
      'the second backfill',
      (): Promise<any> =>
        t.http
          .get(`/online-backfills/${again.body.id}`)
          .set(r.member.auth)
          .expect(200)
          .then((res) => res.body),
      (b) => b.state === 'succeeded',
    );
    expect(second.progress.targets.scored).toBe(0);
    expect(await scoresOf(evaluatorId, [...earlier.values()])).toHaveLength(sampled.length * 2);
    expect(judge.requests.length).toBe(calls);
    expectProblem(
      await t.http
        .post(`/online-evaluators/${evaluatorId}/backfills`)
        .set(r.member.auth)
        .send({ from: range.to, to: range.from }),
      400,
      'backfill_range_invalid',
    );
  });

  it('an unreachable judge holds the evaluator with a clear status and loses no trace', async () => {
    judgeDown = true;
    const live = await exportTraces(2000, 2040);
    const sampled = [...live].filter(([, id]) => isSampled(id, 0.5));
    const held = await until(
      'the evaluator held',
      () => evaluator(evaluatorId),
      (e) => e.status === 'judge_unreachable',
    );
    expect(held.status_detail).toContain('could not be reached');
    expect(held.targets.pending).toBeGreaterThan(0);
    judgeDown = false;
    const after = await until(
      'the waiting traces scored',
      () => scoresOf(evaluatorId, [...live.values()]),
      (rows) => rows.length === sampled.length * 2,
      120_000,
    );
    expect(new Set(after.map((s) => s.trace_id))).toEqual(new Set(sampled.map(([, id]) => id)));
    expect((await evaluator(evaluatorId)).status).toBe('ok');
  });

  it('failing traces go to a review queue and a dataset as test cases; a budget skips what it cannot pay for', async () => {
    const head = (await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth).expect(200)).body;
    const queue = await t.http
      .post('/review-queues')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'Production failures',
        rubric: { fields: [{ name: 'correct', type: 'pass_fail', required: true }] },
        source: { kind: 'traces', id: head.head_version_id },
      })
      .expect(201);
    const cases = await uploadRows(t, r.member.auth, ws, [{ input: 'q', output: 'a' }], 'failures.json');
    const body = {
      workspace_id: ws,
      dataset_id: datasetId,
      name: 'router',
      metrics: [{ name: 'grader' }],
      filter: { field: 'kind', op: 'eq', value: 'agent' },
      budget: { judge_calls_per_hour: 12 },
      route: { metric: 'grader', review_queue_id: queue.body.id, dataset_id: cases.datasetId },
    };
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...body, route: { ...body.route, metric: 'mentions_order' } }),
      400,
      'online_route_invalid',
    );
    expectProblem(
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({ ...body, route: { review_queue_id: cases.datasetId } }),
      400,
      'online_route_invalid',
    );
    const router = (await t.http.post('/online-evaluators').set(r.member.auth).send(body).expect(201)).body.id;
    // The first twelve (three planted bad: 3000, 3005, 3010) take the hour's budget of judge calls;
    // the eighteen sent after them are skipped. Sent at once, which twelve were judged was chance.
    const first = await exportTraces(3000, 3012);
    await until(
      'the first twelve scored',
      () => evaluator(router),
      (e) => e.targets.scored === 12,
    );
    const live = new Map([...first, ...(await exportTraces(3012, 3030))]);
    const settled = await until(
      'every trace scored or skipped',
      () => evaluator(router),
      (e) => e.targets.scored + e.targets.skipped === 30,
    );
    // Twelve judged in the hour, the rest skipped and said so.
    expect(settled.targets).toEqual({ pending: 0, scored: 12, skipped: 18, failed: 0 });
    expect(settled.status).toBe('budget_exhausted');
    expect(settled.status_detail).toContain('the budget is 12');
    const skipped = await t.http
      .get(`/online-evaluators/${router}/targets`)
      .query({ state: 'skipped', page_size: 100 })
      .set(r.viewer.auth)
      .expect(200);
    expect(new Set(skipped.body.items.map((i: { reason: string }) => i.reason))).toEqual(new Set(['budget_exhausted']));
    const failed = (await scoresOf(router, [...live.values()]))
      .filter((s) => s.passed === false)
      .map((s) => s.trace_id)
      .sort();
    expect(failed).toEqual([3000, 3005, 3010].map((i) => live.get(i)).sort());
    const items = await t.http
      .get(`/review-queues/${queue.body.id}/items`)
      .query({ page_size: 100 })
      .set(r.member.auth)
      .expect(200);
    expect(items.body.items.map((i: { ref: string }) => i.ref).sort()).toEqual(failed);
    expect(items.body.items[0].context.output).toMatch(/^BAD answer/);
    const staged = await t.http.get(`/datasets/${cases.datasetId}/rows/staged`).set(r.member.auth).expect(200);
    expect(staged.body.map((e: { row: { trace_id: string } }) => e.row.trace_id).sort()).toEqual(failed);
    expect(staged.body[0]).toEqual(
      expect.objectContaining({
        op: 'insert',
        row: expect.objectContaining({ output: expect.stringMatching(/^BAD/) }),
      }),
    );
  });

  it('a change of what it scores is the next version; paused, it takes nothing', async () => {
    const patched = await t.http
      .patch(`/online-evaluators/${evaluatorId}`)
      .set(r.member.auth)
      .send({ sampling_rate: 0.25, state: 'paused' })
      .expect(200);
    expect(patched.body).toEqual(expect.objectContaining({ version: 2, state: 'paused' }));
    expect(patched.body.spec.sampling_rate).toBe(0.25);
    const versions = await t.http.get(`/online-evaluators/${evaluatorId}/versions`).set(r.viewer.auth).expect(200);
    expect(versions.body.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const renamed = await t.http
      .patch(`/online-evaluators/${evaluatorId}`)
      .set(r.member.auth)
      .send({ name: 'helpful' })
      .expect(200);
    expect(renamed.body.version).toBe(2);
    const targets = await t.http
      .get(`/online-evaluators/${evaluatorId}/targets`)
      .query({ state: 'scored', page_size: 5, version: 1 })
      .set(r.viewer.auth)
      .expect(200);
    expect(targets.body.items).toHaveLength(5);
    expect(targets.body.items[0]).toEqual(
      expect.objectContaining({ state: 'scored', level: 'trace', evaluator_version: 1 }),
    );
    // Another workspace sees none of it.
    const other = await t.factory.workspaceWithRoles();
    expectProblem(await t.http.get(`/online-evaluators/${evaluatorId}`).set(other.owner.auth), 403);
    const list = await t.http
      .get('/online-evaluators')
      .query({ workspace_id: other.workspace.id })
      .set(other.owner.auth)
      .expect(200);
    expect(list.body.items).toHaveLength(0);
  });
});
