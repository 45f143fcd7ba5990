import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verifyWebhook } from '#libs/common/webhook-signature.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { Xoshiro128 } from '#libs/evaluation/statistics/bootstrap.js';
import { TraceScoresService, type NewTraceScore } from '#src/modules/traces/scores/scores.service.js';
import { landingSettled } from '../../utils/traces.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const HOUR = 3600_000;
const METRIC = 'correct';

type Evaluation = {
  verdict: string;
  reason: string | null;
  test: string | null;
  p_value: number | null;
  difference: { value: number; interval: { low: number; high: number } } | null;
  recent: { passes: number; trials: number; errored: number; rate: number | null; from: string; to: string };
  reference: { passes: number; trials: number; rate: number | null; from: string; to: string };
  state: { status: string; breaches: number; calms: number };
};
type Check = {
  evaluation: Evaluation;
  transition: string | null;
  rule: { status: string; breaches: number; calms: number };
};

/**
 * Alerts on drops of an online evaluator's pass rate, on planted scores: each scenario has an
 * evaluator of its own (a record inserted as the evaluator routes would make it) and scores
 * written through the traces family's TraceScoresService with their observed times placed in
 * the windows: the recent hour, and the trailing day before it.
 */
describe('online alerts: rules, checks, hysteresis and webhooks', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let datasetId: string;
  let hooks: FakeUpstream;
  let signingKey: string;
  let evaluatorCount = 0;

  /** A paused evaluator of the metric on the workspace's trace dataset: its scores are planted. */
  async function evaluator(): Promise<string> {
    return (
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: datasetId,
          name: `evaluator-${++evaluatorCount}`,
          metrics: [{ name: METRIC }],
          state: 'paused',
        })
        .expect(201)
    ).body.id as string;
  }

  /** Scores of the evaluator's metric: `verdicts` in order, observed `startMsAgo` back, one every `stepMs`. */
  async function plant(evaluatorId: string, verdicts: boolean[], startMsAgo: number, stepMs: number, tag: string) {
    const now = Date.now();
    const rows: NewTraceScore[] = verdicts.map((passed, i) => ({
      workspace_id: ws,
      dataset_id: datasetId,
      evaluator_id: evaluatorId,
      evaluator_name: 'planted',
      evaluator_version: 1,
      level: 'trace',
      target_key: `${tag}-${i}`,
      trace_id: `${tag}-${i}`,
      metric: METRIC,
      score: passed ? 1 : 0.2,
      passed,
      reason: passed ? null : 'planted failure',
      observed_at: new Date(now - startMsAgo + i * stepMs),
    }));
    await t.app.get(TransactionRunner).run(() => t.app.get(TraceScoresService).record(rows));
  }

  /** `passes` passes then failures, `n` in all, spread over the recent hour (from 55 min ago). */
  const recent = (evaluatorId: string, passes: number, n: number, tag = 'recent') =>
    plant(evaluatorId, verdicts(passes, n), 55 * 60_000, Math.floor((50 * 60_000) / n), tag);
  /** The same over the trailing day (from 20 h ago to about 2 h ago). */
  const reference = (evaluatorId: string, passes: number, n: number) =>
    plant(evaluatorId, verdicts(passes, n), 20 * HOUR, Math.floor((18 * HOUR) / n), 'reference');
  const verdicts = (passes: number, n: number) => Array.from({ length: n }, (_, i) => i < passes);

  const rule = (evaluatorId: string, body: Record<string, unknown>, auth = r.member.auth) =>
    t.http.post(`/online-evaluators/${evaluatorId}/alert-rules`).set(auth).send(body);
  const check = async (ruleId: string): Promise<Check> =>
    (await t.http.post(`/online-alert-rules/${ruleId}:check`).set(r.member.auth).expect(200)).body as Check;

  async function deliveries(event: string, count: number): Promise<RecordedRequest[]> {
    const of = () => hooks.received('POST', '/hook').filter((d) => (d.body as { event: string }).event === event);
    for (let i = 0; i < 200 && of().length < count; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    return of();
  }

  beforeAll(async () => {
    t = await startTestApp();
    hooks = await FakeUpstream.start();
    hooks.on('POST', '/hook', { status: 204 });
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const landing = await t.http
      .post('/traces/land:inline')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        dataset_name: 'production',
        records: [
          {
            trace_id: 'a'.repeat(32),
            span_id: 'b'.repeat(16),
            name: 'answer',
            start_time: '2026-11-01T00:00:00Z',
            end_time: '2026-11-01T00:00:01Z',
          },
        ],
      })
      .expect(202);
    datasetId = (await landingSettled(t, r.member.auth, landing.body.id)).dataset_id as string;
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: METRIC, kind: 'deterministic', metric: 'exact_match' })
      .expect(201);
    const webhook = await t.http
      .post('/notifications/config')
      .set(r.admin.auth)
      .send({
        workspace_id: ws,
        name: 'on-call',
        url: hooks.url('/hook'),
        events: ['online_alert.firing', 'online_alert.resolved'],
      })
      .expect(201);
    signingKey = (
      await t.http.post(`/workspaces/${ws}/secrets/${webhook.body.secret_id}/reveal`).set(r.admin.auth).expect(200)
    ).body.value as string;
  });
  afterAll(async () => {
    await hooks?.close();
    await t?.close();
  });

  it('fires on a planted drop after fire_after breaches, with a signed webhook carrying the evidence, and resolves only after resolve_after calm checks', async () => {
    const id = await evaluator();
    await reference(id, 360, 400); // 90%
    await recent(id, 140, 200); // 70%
    const created = await rule(id, {
      name: 'correctness drop',
      metric: METRIC,
      min_samples: 100,
      min_drop: 0.05,
      fire_after: 3,
      resolve_after: 2,
      enabled: false,
    }).expect(201);
    expect(created.body).toMatchObject({
      evaluator_id: id,
      kind: 'pass_rate',
      recent_seconds: 3600,
      reference: { kind: 'trailing', seconds: 86400, from: null, to: null },
      alpha: 0.05,
      alpha_resolve: 0.2,
      status: 'ok',
      last_evaluation: null,
    });
    const ruleId = created.body.id as string;

    const first = await check(ruleId);
    expect(first.evaluation).toMatchObject({
      verdict: 'breach',
      test: 'two_proportion_z',
      recent: { passes: 140, trials: 200, errored: 0, rate: 0.7 },
      reference: { passes: 360, trials: 400, rate: 0.9 },
      state: { status: 'ok', breaches: 1, calms: 0 },
    });
    expect(first.evaluation.p_value).toBeLessThan(1e-8);
    expect(first.evaluation.difference!.value).toBeCloseTo(-0.2, 12);
    expect(first.evaluation.difference!.interval.high).toBeLessThan(-0.1);
    expect(first.transition).toBeNull();
    expect((await check(ruleId)).rule).toMatchObject({ status: 'ok', breaches: 2 });
    const third = await check(ruleId);
    expect(third).toMatchObject({ transition: 'firing', rule: { status: 'firing', breaches: 0, calms: 0 } });

    const [delivery] = await deliveries('online_alert.firing', 1);
    expect(
      verifyWebhook(signingKey, JSON.stringify(delivery.body), delivery.headers['x-ews-signature'] as string),
    ).toBe(true);
    expect(delivery.headers['x-ews-event']).toBe('online_alert.firing');
    const data = (delivery.body as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({
      status: 'firing',
      rule: { id: ruleId, name: 'correctness drop', metric: METRIC, min_drop: 0.05, fire_after: 3 },
      evaluator: { id, name: expect.any(String), dataset_id: datasetId },
      evaluation: { verdict: 'breach', test: 'two_proportion_z', recent: { passes: 140, trials: 200 } },
    });
    const examples = data.examples as Array<{ trace_id: string; passed: boolean; score: number }>;
    expect(examples).toHaveLength(5);
    expect(examples.every((e) => e.passed === false && e.score === 0.2 && e.trace_id.startsWith('recent-'))).toBe(true);

    // The history holds the firing with the same evidence; the webhook names it.
    const history = await t.http.get(`/online-alert-rules/${ruleId}/events`).set(r.viewer.auth).expect(200);
    expect(history.body.total).toBe(1);
    expect(history.body.items[0]).toMatchObject({
      id: data.alert_event_id,
      kind: 'firing',
      deliveries: 1,
      evaluation: { verdict: 'breach', state: { status: 'firing' } },
    });

    // Recovery: 600 more passes in the recent hour (740 of 800, 92.5%) is calm; one calm check is not enough.
    await recent(id, 600, 600, 'recovered');
    const calm = await check(ruleId);
    expect(calm).toMatchObject({
      evaluation: { verdict: 'calm', recent: { passes: 740, trials: 800 } },
      transition: null,
      rule: { status: 'firing', calms: 1 },
    });
    const resolved = await check(ruleId);
    expect(resolved).toMatchObject({ transition: 'resolved', rule: { status: 'ok', breaches: 0, calms: 0 } });
    const [gone] = await deliveries('online_alert.resolved', 1);
    expect((gone.body as { data: { status: string } }).data.status).toBe('ok');
    expect(verifyWebhook(signingKey, JSON.stringify(gone.body), gone.headers['x-ews-signature'] as string)).toBe(true);
    const after = await t.http.get(`/online-alert-rules/${ruleId}`).set(r.viewer.auth).expect(200);
    expect(after.body).toMatchObject({ status: 'ok', fired_at: expect.any(String), resolved_at: expect.any(String) });
    expect(
      (await t.http.get(`/online-alert-rules/${ruleId}/events`).set(r.viewer.auth).expect(200)).body.items.map(
        (e: { kind: string }) => e.kind,
      ),
    ).toEqual(['resolved', 'firing']);
  });

  it('does not fire on noise of the size of the sampling error (the same true rate in both windows, seeded)', async () => {
    const id = await evaluator();
    const random = new Xoshiro128(43);
    const draw = (n: number) => Array.from({ length: n }, () => random.nextFloat() < 0.85);
    const old = draw(400);
    const now = draw(200);
    await plant(id, old, 20 * HOUR, Math.floor((18 * HOUR) / 400), 'reference');
    await plant(id, now, 55 * 60_000, Math.floor((50 * 60_000) / 200), 'recent');
    const share = (v: boolean[]) => v.filter(Boolean).length / v.length;
    // The planted difference is within two standard errors of a difference of proportions at 85%.
    const se = Math.sqrt(0.85 * 0.15 * (1 / 400 + 1 / 200));
    expect(Math.abs(share(now) - share(old))).toBeLessThan(2 * se);
    const ruleId = (await rule(id, { name: 'noise', metric: METRIC, fire_after: 1, enabled: false }).expect(201)).body
      .id as string;
    for (let i = 0; i < 3; i++) {
      const outcome = await check(ruleId);
      expect(outcome.evaluation.verdict).not.toBe('breach');
      expect(outcome.evaluation.p_value).toBeGreaterThanOrEqual(0.05);
      expect(outcome).toMatchObject({ transition: null, rule: { status: 'ok', breaches: 0 } });
    }
    expect((await t.http.get(`/online-alert-rules/${ruleId}/events`).set(r.viewer.auth).expect(200)).body.total).toBe(
      0,
    );
  });

  it('gives no verdict below min_samples, and says which window is short', async () => {
    const id = await evaluator();
    await reference(id, 150, 300);
    await recent(id, 0, 30);
    const ruleId = (await rule(id, { name: 'few', metric: METRIC, fire_after: 1, enabled: false }).expect(201)).body
      .id as string;
    const outcome = await check(ruleId);
    expect(outcome).toMatchObject({
      evaluation: {
        verdict: 'no_verdict',
        reason: 'the recent window has fewer than 100 scored traces (recent 30, reference 300)',
        test: null,
        p_value: null,
        difference: null,
        recent: { passes: 0, trials: 30, rate: 0 },
      },
      transition: null,
      rule: { status: 'ok', breaches: 0 },
    });
    const stored = await t.http.get(`/online-alert-rules/${ruleId}`).set(r.viewer.auth).expect(200);
    expect(stored.body.last_evaluation).toMatchObject({ verdict: 'no_verdict', reason: outcome.evaluation.reason });
  });

  it('checks on its schedule: a new rule is checked at once and queues its next check check_seconds later, one chain per rule', async () => {
    const id = await evaluator();
    await reference(id, 360, 400);
    await recent(id, 140, 200);
    const ruleId = (
      await rule(id, { name: 'scheduled', metric: METRIC, fire_after: 1, check_seconds: 600 }).expect(201)
    ).body.id as string;
    let status = '';
    for (let i = 0; i < 200 && status !== 'firing'; i++) {
      status = (await t.http.get(`/online-alert-rules/${ruleId}`).set(r.viewer.auth).expect(200)).body.status;
      if (status !== 'firing') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('firing');
    const jobs = async () =>
      (await t.dataSource.query(
        `SELECT idempotency_key, status, extract(epoch FROM run_after - created_at) AS delay FROM jobs
         WHERE type = 'online.alert-check' AND target_id = $1 ORDER BY created_at`,
        [ruleId],
      )) as Array<{ idempotency_key: string; status: string; delay: string }>;
    for (let i = 0; i < 100 && (await jobs()).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const chain = await jobs();
    expect(chain.map((j) => j.idempotency_key)).toEqual([
      `online.alert-check:${ruleId}:0`,
      `online.alert-check:${ruleId}:1`,
    ]);
    expect(Number(chain[1].delay)).toBeGreaterThan(590);
    // Checking more often replaces the pending link with a new chain at once; the old link will find itself replaced.
    await t.http.patch(`/online-alert-rules/${ruleId}`).set(r.member.auth).send({ check_seconds: 900 }).expect(200);
    expect((await jobs()).map((j) => j.idempotency_key)).toContain(`online.alert-check:${ruleId}:2`);
  });

  it('refuses rules that do not hold together, names taken, unknown evaluators; a change of the statistics resets the alert', async () => {
    const id = await evaluator();
    // A metric the evaluator does not score would never have a score to watch.
    expectProblem(await rule(id, { name: 'x', metric: 'helpfulness' }), 400, 'alert_rule_invalid');
    expectProblem(
      await rule(id, { name: 'x', metric: METRIC, alpha: 0.1, alpha_resolve: 0.1 }),
      400,
      'alert_rule_invalid',
    );
    expectProblem(
      await rule(id, { name: 'x', metric: METRIC, reference: { kind: 'fixed', from: '2026-11-02T00:00:00Z' } }),
      400,
      'alert_rule_invalid',
    );
    expectProblem(
      await rule(id, {
        name: 'x',
        metric: METRIC,
        reference: { kind: 'fixed', from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' },
      }),
      400,
      'alert_rule_invalid',
    );
    expectProblem(await rule(id, { name: 'x', metric: METRIC, kind: 'mean' }), 400, 'validation_failed');
    expectProblem(await rule(id, { name: 'x', metric: METRIC, check_seconds: 5 }), 400, 'validation_failed');
    expectProblem(await rule('00000000-0000-4000-8000-000000000000', { name: 'x', metric: METRIC }), 404);
    expectProblem(await rule(id, { name: 'x', metric: METRIC }, r.viewer.auth), 403);

    await reference(id, 360, 400);
    await recent(id, 140, 200);
    const fixed = await rule(id, {
      name: 'baseline',
      metric: METRIC,
      reference: {
        kind: 'fixed',
        from: new Date(Date.now() - 21 * HOUR).toISOString(),
        to: new Date(Date.now() - HOUR).toISOString(),
      },
      fire_after: 1,
      enabled: false,
    }).expect(201);
    expectProblem(await rule(id, { name: 'baseline', metric: METRIC }), 409, 'alert_rule_name_taken');
    const ruleId = fixed.body.id as string;
    expect(await check(ruleId)).toMatchObject({
      transition: 'firing',
      evaluation: { reference: { passes: 360, trials: 400 } },
    });
    const renamed = await t.http
      .patch(`/online-alert-rules/${ruleId}`)
      .set(r.member.auth)
      .send({ name: 'baseline week' })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'baseline week', status: 'firing' });
    const changed = await t.http
      .patch(`/online-alert-rules/${ruleId}`)
      .set(r.member.auth)
      .send({ min_drop: 0.3 })
      .expect(200);
    expect(changed.body).toMatchObject({ min_drop: 0.3, status: 'ok', breaches: 0, last_evaluation: null });
    // A drop of 20 points is now below min_drop: significant, but inconclusive.
    expect((await check(ruleId)).evaluation.verdict).toBe('inconclusive');
    expectProblem(
      await t.http.patch(`/online-alert-rules/${ruleId}`).set(r.member.auth).send({ alpha_resolve: 0.01 }),
      400,
      'alert_rule_invalid',
    );

    const list = await t.http.get(`/online-evaluators/${id}/alert-rules`).set(r.viewer.auth).expect(200);
    expect(list.body.items.map((x: { name: string }) => x.name)).toEqual(['baseline week']);
    expectProblem(await t.http.delete(`/online-alert-rules/${ruleId}`).set(r.member.auth), 403);
    await t.http.delete(`/online-alert-rules/${ruleId}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/online-alert-rules/${ruleId}`).set(r.viewer.auth), 404);
  });
});
