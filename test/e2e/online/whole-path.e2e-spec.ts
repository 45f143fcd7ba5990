import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { verifyWebhook } from '#libs/common/webhook-signature.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { exportAnswers, exportingWorkspace, gradingWorld, until } from '../../utils/online.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The path docs/online-evaluation.md walks, end to end: an application instrumented with
 * OpenTelemetry exports its traces with an API key; an evaluator scores them as they land; an
 * alert rule compares the last hour's pass rate with the hour before and, on a planted drop,
 * sends a signed webhook with the evidence. Answers whose quality did not change (a difference
 * well inside the sampling error) fire nothing. Every trace is scored (rate 1), so the counts
 * and the verdicts are exact.
 */
describe('Online evaluation: from an instrumented application to an alert', () => {
  let t: TestApp;
  let url: string;
  let ws: string;
  let key: string;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let judge: FakeUpstream;
  let hooks: FakeUpstream;
  let signingKey: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ url, key, r } = await exportingWorkspace(t));
    ws = r.workspace.id;
    judge = await gradingWorld(t, { admin: r.admin.auth, member: r.member.auth }, ws);
    hooks = await FakeUpstream.start();
    hooks.on('POST', '/hook', { status: 204 });
    const webhook = await t.http
      .post('/notifications/config')
      .set(r.admin.auth)
      .send({ workspace_id: ws, name: 'on-call', url: hooks.url('/hook'), events: ['online_alert.firing'] })
      .expect(201);
    signingKey = (
      await t.http.post(`/workspaces/${ws}/secrets/${webhook.body.secret_id}/reveal`).set(r.admin.auth).expect(200)
    ).body.value as string;
  });
  afterAll(async () => {
    await t?.close();
    await judge?.close();
    await hooks?.close();
  });

  /**
   * A dataset with an evaluator and an alert rule on `grader`: `before` traces started in the hour
   * before the last, `after` in the last hour, trace i bad when `bad(i)`. Answers the rule's id
   * once every trace is scored.
   */
  async function production(
    before: number,
    after: number,
    bad: (i: number) => boolean,
  ): Promise<{ ruleId: string; evaluatorId: string }> {
    const dataset = `support-bot-${randomUUID().slice(0, 6)}`;
    const now = Date.now();
    const answer = (i: number) => (bad(i) ? `BAD answer ${i}` : `Your order ${i} ships tomorrow.`);
    // The application's first trace makes the dataset; the evaluator follows what lands from then on.
    await exportAnswers({ url, key, dataset, from: -1, to: 0, answer, startAt: () => now - 3 * HOUR });
    const datasetId = await until(
      'the dataset',
      async () =>
        (await t.http.get('/datasets').query({ workspace_id: ws, kind: 'traces' }).set(r.member.auth)).body.items.find(
          (d: { name: string }) => d.name === dataset,
        )?.id as string | undefined,
      (id) => id !== undefined,
    );
    await until(
      'the first trace landed',
      async () => (await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth)).body,
      (live) => live.pending_spans === 0 && live.head_spans === 2,
    );
    const evaluatorId = (
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: datasetId,
          name: dataset,
          metrics: [{ name: 'grader' }],
          filter: { field: 'kind', op: 'eq', value: 'agent' },
          sampling_rate: 1,
        })
        .expect(201)
    ).body.id as string;
    await exportAnswers({
      url,
      key,
      dataset,
      from: 0,
      to: before + after,
      answer,
      // The first `before` between 110 and 70 minutes ago (the hour before the last), the rest between 50 and 10 minutes ago.
      startAt: (i) =>
        i < before
          ? now - 110 * MINUTE + (i * 40 * MINUTE) / before
          : now - 50 * MINUTE + ((i - before) * 40 * MINUTE) / after,
    });
    await until(
      'every trace scored',
      async () => (await t.http.get(`/online-evaluators/${evaluatorId}`).set(r.member.auth)).body,
      (e) => e.targets.scored === before + after,
    );
    const ruleId = (
      await t.http
        .post(`/online-evaluators/${evaluatorId}/alert-rules`)
        .set(r.member.auth)
        .send({
          name: 'grader drop',
          metric: 'grader',
          recent_seconds: 3600,
          reference: { kind: 'trailing', seconds: 3600 },
          min_samples: 50,
          min_drop: 0.05,
          fire_after: 2,
          enabled: false,
        })
        .expect(201)
    ).body.id as string;
    return { ruleId, evaluatorId };
  }

  const check = async (ruleId: string) =>
    (await t.http.post(`/online-alert-rules/${ruleId}:check`).set(r.member.auth).expect(200)).body;

  it('a planted drop of the answers fires after two checks, signed, with the counts, the test and failing traces', async () => {
    // The hour before: 1 bad in 20 (95% pass); the last hour: 7 in 20 (65%).
    const { ruleId, evaluatorId } = await production(120, 120, (i) => (i < 120 ? i % 20 === 0 : i % 20 < 7));
    const first = await check(ruleId);
    expect(first.evaluation).toMatchObject({
      verdict: 'breach',
      recent: { passes: 78, trials: 120 },
      reference: { passes: 114, trials: 120 },
    });
    expect(first.evaluation.p_value).toBeLessThan(1e-6);
    expect(first.transition).toBeNull();
    const second = await check(ruleId);
    expect(second).toMatchObject({ transition: 'firing', rule: { status: 'firing' } });
    const fired = await until(
      'the webhook',
      async () => hooks.received('POST', '/hook'),
      (d) => d.length > 0,
      30_000,
    );
    const delivery = fired[0];
    expect(
      verifyWebhook(signingKey, JSON.stringify(delivery.body), delivery.headers['x-ews-signature'] as string),
    ).toBe(true);
    const data = (delivery.body as { event: string; data: Record<string, any> }).data;
    expect(delivery.body).toMatchObject({ event: 'online_alert.firing' });
    expect(data.evaluator).toMatchObject({ id: evaluatorId });
    expect(data.evaluation).toMatchObject({
      recent: { passes: 78, trials: 120 },
      reference: { passes: 114, trials: 120 },
    });
    expect(data.examples.length).toBeGreaterThan(0);
    // The examples are failing traces: their scores say so.
    const scores = await t.http
      .get('/traces/scores')
      .query({ workspace_id: ws, evaluator_id: evaluatorId, trace_id: data.examples[0].trace_id })
      .set(r.viewer.auth)
      .expect(200);
    expect(scores.body.items[0]).toMatchObject({ metric: 'grader', passed: false });
  });

  it('answers as good as before, but for a difference inside the sampling error, fire nothing', async () => {
    // 1 bad in 5 the hour before, 11 in 50 in the last: a 2-point difference, a third of its standard error.
    const { ruleId } = await production(100, 100, (i) => (i < 100 ? i % 5 === 0 : i % 50 < 11));
    for (let k = 0; k < 3; k++) {
      const checked = await check(ruleId);
      expect(checked.evaluation.verdict).toBe('calm');
      expect(checked.transition).toBeNull();
    }
    expect(hooks.received('POST', '/hook')).toHaveLength(1);
  });
});
