import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { runToEnd } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type Run = { id: string; state: string; passed: boolean | null; summary: Record<string, unknown> | null };
type Comparison = {
  name: string;
  measure: string;
  n: number;
  status: string;
  mean_delta: number | null;
  ci_low: number | null;
  ci_high: number | null;
  test: string;
  method: string | null;
  p_value: number | null;
  p_adjusted: number | null;
  direction: string | null;
  significant: boolean | null;
  effect_size: { name: string; value: number } | null;
};
type Statistics = {
  alpha: number;
  min_rows: number;
  matched_rows: number;
  row_verdict: Comparison;
  metrics: Comparison[];
  by_dimension: Array<{
    dimension: string;
    values: Array<{ value: string; rows: number; row_verdict: Comparison; metrics: Comparison[] }>;
  }>;
};

/**
 * Statistics in the diff and repeated trials, through the API against a local fake SUT: 24 rows
 * in two topics; the SUT answers right, or (mode `regressed`) wrong on every billing row, or
 * (mode `flaky`) wrong on every other call for four shipping rows.
 */
describe('run statistics', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let sutId: string;
  let connectionId: string;
  let evalConfigId: string;
  let mode: 'right' | 'regressed' | 'flaky' = 'right';
  const calls = new Map<string, number>();
  const ROWS = Array.from({ length: 24 }, (_, i) => ({
    input: `${i < 12 ? 'billing' : 'shipping'} question ${i}`,
    expected_output: `answer ${i}`,
    topic: i < 12 ? 'billing' : 'shipping',
  }));
  const runs: Record<string, Run> = {};

  const run = (body: Record<string, unknown> = {}): Promise<Run> =>
    runToEnd<Run>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      eval_config_id: evalConfigId,
      ...body,
    });

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const question = (req.body as { question: string }).question;
      const i = Number(/question (\d+)/.exec(question)?.[1]);
      const call = (calls.get(question) ?? 0) + 1;
      calls.set(question, call);
      const wrong = (mode === 'regressed' && i < 12) || (mode === 'flaky' && i >= 20 && call % 2 === 0);
      return { json: { answer: wrong ? `not ${i}` : `answer ${i}` } };
    });
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'support.json');
    for (const topic of ['billing', 'shipping']) {
      await t.http
        .post(`/datasets/${data.datasetId}/dimensions:assign`)
        .set(r.member.auth)
        .send({ dimension: 'topic', value: topic, rule: { field: 'topic', op: 'eq', value: topic } })
        .expect(201);
    }
    sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'support-bot' }).expect(201))
      .body.id;
    connectionId = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 4 })
        .expect(201)
    ).body.id;
    await t.http
      .post(`/suts/${sutId}/connections/${connectionId}/adapter`)
      .set(r.member.auth)
      .send({ request: { body: { question: '{{input}}' } }, response: { language: 'jsonpath', output: '$.answer' } })
      .expect(201);
    evalConfigId = (
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'support',
          metrics: [
            { config_name: 'exact_match' },
            { config_name: 'token_f1' },
            { config_name: 'latency', gating: false },
          ],
          pass_rule: { min_pass_rate: 0.5 },
        })
        .expect(201)
    ).body.id;
    runs.base = await run();
    mode = 'regressed';
    runs.regressed = await run();
    mode = 'right';
    runs.unchanged = await run();
  });
  afterAll(async () => {
    await sut?.close();
    await t?.close();
  });

  const diff = async (candidate: Run, query: Record<string, unknown> = {}) =>
    (
      await t.http
        .get('/runs/diff')
        .query({ base: runs.base.id, candidate: candidate.id, ...query })
        .set(r.viewer.auth)
        .expect(200)
    ).body as { summary: Record<string, unknown>; statistics: Statistics; rows: unknown[] };

  it('says a regression on one topic is real: exact McNemar on the binary metric, Wilcoxon on the score, Holm-corrected, per dimension value', async () => {
    const { statistics, summary } = await diff(runs.regressed, { limit: 1 });
    // The spec's members are unchanged beside the new one.
    expect(summary).toEqual(expect.objectContaining({ rows: 24, regressed: 12, unchanged: 12 }));
    expect(statistics).toEqual(
      expect.objectContaining({ alpha: 0.05, confidence: 0.95, correction: 'holm', min_rows: 10, matched_rows: 24 }),
    );
    const exact = statistics.metrics.find((m) => m.name === 'exact_match')!;
    // 12 pass -> fail, none the other way: p = 2 / 2^12.
    expect(exact).toEqual(
      expect.objectContaining({
        measure: 'verdict',
        test: 'mcnemar_exact',
        method: 'exact',
        n: 24,
        status: 'tested',
        mean_delta: -0.5,
        direction: 'worse',
        significant: true,
      }),
    );
    expect(exact.p_value).toBeCloseTo(2 / 4096, 12);
    expect(exact.ci_high!).toBeLessThan(0);
    expect(exact.effect_size).toEqual({ name: 'risk_difference', value: -0.5 });
    const f1 = statistics.metrics.find((m) => m.name === 'token_f1')!;
    expect(f1).toEqual(
      expect.objectContaining({
        measure: 'score',
        test: 'wilcoxon_signed_rank',
        direction: 'worse',
        significant: true,
      }),
    );
    expect(statistics.row_verdict).toEqual(
      expect.objectContaining({ measure: 'verdict', direction: 'worse', significant: true }),
    );

    const topic = statistics.by_dimension.find((d) => d.dimension === 'topic')!;
    const [billing, shipping] = topic.values;
    expect([billing.value, billing.rows, shipping.value, shipping.rows]).toEqual(['billing', 12, 'shipping', 12]);
    expect(billing.metrics.find((m) => m.name === 'exact_match')).toEqual(
      expect.objectContaining({ mean_delta: -1, direction: 'worse', significant: true }),
    );
    expect(shipping.metrics.find((m) => m.name === 'exact_match')).toEqual(
      expect.objectContaining({ mean_delta: 0, p_value: 1, direction: 'none', significant: false }),
    );

    // Same runs, same intervals; the export carries the same statistics; the status filter and the page do not change them.
    expect((await diff(runs.regressed, { status: 'unchanged', offset: 3 })).statistics).toEqual(statistics);
    const json = await t.http
      .get('/runs/diff/export')
      .query({ base: runs.base.id, candidate: runs.regressed.id, format: 'json' })
      .set(r.viewer.auth)
      .expect(200);
    expect(json.body.statistics).toEqual(statistics);
  });

  it('finds nothing significant between unchanged runs, and says too_few_rows under the minimum', async () => {
    const { statistics } = await diff(runs.unchanged);
    for (const c of [statistics.row_verdict, ...statistics.metrics.filter((m) => m.name !== 'latency')])
      expect(c).toEqual(expect.objectContaining({ mean_delta: 0, p_value: 1, significant: false }));
    const strict = (await diff(runs.regressed, { min_rows: 13, alpha: 0.01 })).statistics;
    expect(strict.min_rows).toBe(13);
    expect(strict.alpha).toBe(0.01);
    // Four tests in the overall family: the smallest p (2 / 4096) times 4 is still under 0.01.
    const billing = strict.by_dimension[0].values[0];
    expect(
      billing.metrics.every((m) => m.status === 'too_few_rows' && m.significant === null && m.p_value === null),
    ).toBe(true);
    expect(billing.row_verdict.status).toBe('too_few_rows');
    expect(strict.metrics.find((m) => m.name === 'exact_match')!.significant).toBe(true);
    for (const bad of [{ alpha: 0 }, { alpha: 0.9 }, { alpha: 'x' }, { min_rows: 1 }, { min_rows: 2.5 }]) {
      expectProblem(
        await t.http
          .get('/runs/diff')
          .query({ base: runs.base.id, candidate: runs.regressed.id, ...bad })
          .set(r.viewer.auth),
        400,
        'validation_failed',
      );
    }
  });

  it('summarises repeated trials: pass@k, pass^k, flaky rows and the spread of each metric', async () => {
    mode = 'flaky';
    calls.clear();
    const repeated = await run({ repetitions: 4 });
    type Trials = {
      repetitions: number;
      rows: number;
      repeated_rows: number;
      flaky_rows: number;
      flaky_share: number;
      stability: string;
      by_k: Array<{ k: number; rows: number; pass_at_k: number; pass_hat_k: number }>;
      metrics: Array<{ name: string; within_row_variance: number; repetition_means: number[]; flaky_rows: number }>;
      flaky_examples: Array<{
        row_id: string;
        trials: number;
        passed: number;
        pass_at_k: number[];
        pass_hat_k: number[];
      }>;
    };
    const trials = (repeated.summary as { trials: Trials }).trials;
    // Rows 20..23 answer wrong on every other call: 2 of 4 tries pass.
    expect(trials).toEqual(
      expect.objectContaining({ repetitions: 4, rows: 24, repeated_rows: 24, flaky_rows: 4, stability: 'unstable' }),
    );
    expect(trials.flaky_share).toBeCloseTo(4 / 24, 12);
    expect(trials.by_k.map((b) => b.k)).toEqual([1, 2, 3, 4]);
    // pass@1 = (20 + 4 * 0.5) / 24; pass^2 of a 2-of-4 row = C(2,2)/C(4,2) = 1/6; pass@4 = 1 everywhere; pass^4 = 20/24.
    expect(trials.by_k[0].pass_at_k).toBeCloseTo(22 / 24, 12);
    expect(trials.by_k[1].pass_hat_k).toBeCloseTo((20 + 4 / 6) / 24, 12);
    expect(trials.by_k[3]).toEqual({ k: 4, rows: 24, pass_at_k: 1, pass_hat_k: expect.closeTo(20 / 24, 12) });
    expect(trials.flaky_examples.map((f) => f.row_id).sort()).toEqual(data.rowIds.slice(20).sort());
    expect(trials.flaky_examples[0]).toEqual(
      expect.objectContaining({ trials: 4, passed: 2, pass_at_k: [0.5, expect.closeTo(5 / 6, 12), 1, 1] }),
    );
    const exact = trials.metrics.find((m) => m.name === 'exact_match')!;
    expect(exact.flaky_rows).toBe(4);
    // Each flaky row scores 1, 0, 1, 0 in some order: sample variance 1/3.
    expect(exact.within_row_variance).toBeCloseTo((4 * (1 / 3)) / 24, 12);
    expect(exact.repetition_means).toHaveLength(4);
    // The results answer carries the same while the run is read.
    const results = await t.http.get(`/runs/${repeated.id}/results`).set(r.viewer.auth).expect(200);
    expect(results.body.summary.trials).toEqual(trials);
    // A single-trial run says so.
    expect((runs.base.summary as { trials: Trials }).trials).toEqual(
      expect.objectContaining({ repetitions: 1, stability: 'single_trial', flaky_rows: 0 }),
    );
    mode = 'right';
  });

  describe('the release gate', () => {
    let projectId: string;
    type Check = {
      kind: string;
      status: string;
      blocking: boolean;
      metric: string | null;
      dimension: string | null;
      value: string | null;
      threshold: number | null;
      observed: number | null;
      p_value: number | null;
      p_adjusted: number | null;
      message: string;
    };
    type Gate = {
      verdict: string;
      failures: number;
      warnings: number;
      project_id: string;
      test_plan: { name: string; version: number };
      baseline_run_id: string | null;
      checks: Check[];
    };
    const gate = async (run: Run, query: Record<string, unknown> = {}) =>
      (await t.http.get(`/runs/${run.id}/gate`).query(query).set(r.viewer.auth).expect(200)).body as Gate;

    beforeAll(async () => {
      const plan = await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'support release',
          datasets: [{ dataset_id: data.datasetId }],
          metrics: [
            // Overall 0.5 is enough; billing must reach 0.9.
            {
              name: 'exact_match',
              threshold: { operator: '>=', value: 0.4 },
              per_dimension: [{ dimension: 'topic', value: 'billing', threshold: { operator: '>=', value: 0.9 } }],
            },
            { name: 'token_f1', threshold: { operator: '>=', value: 0.4 } },
            { name: 'latency', threshold: { operator: '<=', value: 60_000 }, gating: false },
          ],
          release_rule: { min_row_pass_rate: 0.4 },
        })
        .expect(201);
      projectId = (
        await t.http
          .post('/projects')
          .set(r.member.auth)
          .send({
            workspace_id: ws,
            name: 'support bot',
            dimensions: [
              {
                name: 'topic',
                description: 'What the user asks about',
                values: [
                  { value: 'billing', description: '' },
                  { value: 'shipping', description: '' },
                ],
              },
            ],
            sut_ids: [sutId],
          })
          .expect(201)
      ).body.id;
      await t.http
        .put(`/projects/${projectId}/test-plan`)
        .set(r.member.auth)
        .send({ test_plan: plan.body.id })
        .expect(200);
    });

    it('fails a run that regressed on purpose, naming the metric and the dimension value, against the plan and the baseline', async () => {
      const verdict = await gate(runs.regressed, { baseline_run_id: runs.base.id });
      expect(verdict).toEqual(
        expect.objectContaining({
          verdict: 'fail',
          project_id: projectId,
          test_plan: { id: expect.any(String), name: 'support release', version: 1 },
          baseline_run_id: runs.base.id,
          alpha: 0.05,
        }),
      );
      const failing = verdict.checks.filter((c) => c.status === 'fail' && c.blocking);
      expect(verdict.failures).toBe(failing.length);
      // The plan: billing's exact match 0 misses 0.9, while overall 0.5 meets 0.4.
      expect(failing).toContainEqual(
        expect.objectContaining({
          kind: 'dimension_threshold',
          metric: 'exact_match',
          dimension: 'topic',
          value: 'billing',
          threshold: 0.9,
          observed: 0,
          message: 'exact_match on topic=billing: mean 0 misses >= 0.9',
        }),
      );
      expect(verdict.checks).toContainEqual(
        expect.objectContaining({ kind: 'threshold', metric: 'exact_match', status: 'pass', observed: 0.5 }),
      );
      // The baseline: a significant regression of exact match overall and on billing, none on shipping.
      expect(failing).toContainEqual(
        expect.objectContaining({
          kind: 'regression',
          metric: 'exact_match',
          dimension: null,
          mean_delta: -0.5,
          p_value: expect.closeTo(2 / 4096, 12),
        }),
      );
      const billing = failing.find(
        (c) => c.kind === 'regression' && c.metric === 'exact_match' && c.dimension === 'topic',
      )!;
      expect(billing).toEqual(expect.objectContaining({ value: 'billing', mean_delta: -1 }));
      // Eight tests in the by-dimension family (two values x row verdict and three metrics): 2 / 4096 x 8.
      expect(billing.message).toMatch(
        /^exact_match on topic=billing regressed against the baseline: change -1 \(95% CI -1\.\.-1, mcnemar_exact, p = 0\.00049, Holm 0\.0039\)$/,
      );
      // (Latency is measured, so it may move either way on a loaded machine: only the scored metrics are asserted.)
      expect(verdict.checks.some((c) => c.value === 'shipping' && c.status === 'fail' && c.metric !== 'latency')).toBe(
        false,
      );

      // Markdown for the pull request: verdict, the failing metric and dimension value first.
      const markdown = await t.http
        .get(`/runs/${runs.regressed.id}/gate`)
        .query({ baseline_run_id: runs.base.id })
        .set(r.viewer.auth)
        .set('Accept', 'text/markdown')
        .expect(200);
      expect(markdown.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(markdown.text).toMatch(/^## ❌ Release gate failed: /);
      const firstRow = markdown.text.split('\n').find((l) => l.startsWith('| ❌'))!;
      expect(firstRow).toContain('| exact_match | topic=billing |');
      // JUnit XML for CI test reports: one failure per blocking failed check, parseable.
      const junit = await t.http
        .get(`/runs/${runs.regressed.id}/gate`)
        .query({ baseline_run_id: runs.base.id, format: 'junit' })
        .set(r.viewer.auth)
        .expect(200);
      expect(junit.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(junit.text).toContain(
        `<testsuites name="ews release gate" tests="${verdict.checks.length}" failures="${verdict.failures}"`,
      );
      expect(junit.text).toContain(
        '<testcase classname="ews.gate.dimension_threshold" name="exact_match topic=billing &gt;= 0.9">',
      );
      expect(junit.text.match(/<failure /g)).toHaveLength(verdict.failures);
      // format wins over Accept.
      const asJson = await t.http
        .get(`/runs/${runs.regressed.id}/gate`)
        .query({ format: 'json' })
        .set(r.viewer.auth)
        .set('Accept', 'application/xml')
        .expect(200);
      expect(asJson.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(asJson.body.verdict).toBe('fail');
    });

    it('passes an unchanged run against the same baseline, with every check reported', async () => {
      const verdict = await gate(runs.unchanged, { baseline_run_id: runs.base.id, project_id: projectId });
      expect(verdict).toEqual(expect.objectContaining({ verdict: 'pass', failures: 0 }));
      // A latency regression on a dimension value may be added (measured time; non-blocking): left out here.
      expect(verdict.checks.filter((c) => c.metric !== 'latency' || c.dimension === null).map((c) => c.kind)).toEqual([
        'run_state',
        'threshold',
        'dimension_threshold',
        'threshold',
        'threshold',
        'row_pass_rate',
        'regression',
        'regression',
        'regression',
        'regression',
      ]);
      expect(
        verdict.checks
          .filter((c) => c.kind === 'regression' && (c.metric !== 'latency' || c.dimension === null))
          .map((c) => [c.metric, c.status, c.blocking]),
      ).toEqual([
        ['row_verdict', 'pass', true],
        ['exact_match', 'pass', true],
        ['token_f1', 'pass', true],
        ['latency', expect.stringMatching(/^(pass|fail)$/), false],
      ]);
      const markdown = (
        await t.http
          .get(`/runs/${runs.unchanged.id}/gate`)
          .query({ baseline_run_id: runs.base.id, format: 'markdown' })
          .set(r.viewer.auth)
          .expect(200)
      ).text;
      expect(markdown).toMatch(/^## ✅ Release gate passed: /);
      const junit = (
        await t.http.get(`/runs/${runs.unchanged.id}/gate`).set(r.viewer.auth).set('Accept', 'text/xml').expect(200)
      ).text;
      expect(junit).toContain('failures="0"');
      // Without a baseline only the plan decides.
      expect((await gate(runs.unchanged)).checks.some((c) => c.kind === 'regression')).toBe(false);
    });

    it("judges by the run's own pass rule without a test plan, fails an unfinished run, and answers 400, 404 and 409", async () => {
      const queued = await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: (
            await t.http
              .post(`/suts/${sutId}/connections`)
              .set(r.member.auth)
              .send({ name: 'uploads', kind: 'offline' })
              .expect(201)
          ).body.id,
          metrics: ['exact_match'],
        })
        .expect(202);
      const waiting = await gate(queued.body as Run);
      expect(waiting.verdict).toBe('fail');
      expect(waiting.checks[0]).toEqual(
        expect.objectContaining({
          kind: 'run_state',
          status: 'fail',
          message:
            'the run is awaiting_upload: the gate passes only a finished run (judged over the rows scored so far)',
        }),
      );
      expectProblem(
        await t.http
          .get(`/runs/${runs.unchanged.id}/gate`)
          .query({ baseline_run_id: queued.body.id })
          .set(r.viewer.auth),
        409,
        'gate_baseline_not_finished',
      );
      expectProblem(
        await t.http
          .get(`/runs/${runs.unchanged.id}/gate`)
          .query({ baseline_run_id: '00000000-0000-4000-8000-000000000000' })
          .set(r.viewer.auth),
        404,
      );
      expectProblem(
        await t.http
          .get(`/runs/${runs.unchanged.id}/gate`)
          .query({ project_id: '00000000-0000-4000-8000-000000000000' })
          .set(r.viewer.auth),
        404,
      );
      for (const bad of [{ format: 'yaml' }, { alpha: 2 }, { baseline_run_id: 'nope' }])
        expectProblem(
          await t.http.get(`/runs/${runs.unchanged.id}/gate`).query(bad).set(r.viewer.auth),
          400,
          'validation_failed',
        );
      // A project without a plan: the run's pass rule (min_pass_rate 0.5 of the eval config) judges; the regressed run passes it, and fails against the baseline.
      const bare = (
        await t.http
          .post('/projects')
          .set(r.member.auth)
          .send({ workspace_id: ws, name: 'no plan yet', sut_ids: [sutId] })
          .expect(201)
      ).body.id;
      const byRule = await gate(runs.regressed, { project_id: bare, baseline_run_id: runs.base.id });
      expect(byRule).toEqual(expect.objectContaining({ project_id: bare, test_plan: null, verdict: 'fail' }));
      expect(byRule.checks.filter((c) => c.kind !== 'regression').map((c) => [c.kind, c.status, c.observed])).toEqual([
        ['run_state', 'pass', null],
        ['row_pass_rate', 'pass', 0.5],
      ]);
      expect(
        byRule.checks.filter((c) => c.status === 'fail' && c.blocking).map((c) => `${c.metric} ${c.dimension ?? ''}`),
      ).toEqual(expect.arrayContaining(['exact_match ', 'exact_match topic']));
      expect(
        (
          await t.http
            .get(`/runs/${runs.regressed.id}/gate`)
            .query({ project_id: bare, format: 'markdown' })
            .set(r.viewer.auth)
            .expect(200)
        ).text,
      ).toContain("the run's own pass rule (no test plan)");
      // A second project with a plan linking the same SUT makes the default ambiguous.
      const second = (
        await t.http
          .post('/projects')
          .set(r.member.auth)
          .send({ workspace_id: ws, name: 'support bot 2', sut_ids: [sutId] })
          .expect(201)
      ).body.id;
      await t.http
        .put(`/projects/${second}/test-plan`)
        .set(r.member.auth)
        .send({ test_plan: 'support release' })
        .expect(200);
      const ambiguous = await t.http.get(`/runs/${runs.unchanged.id}/gate`).set(r.viewer.auth);
      expectProblem(ambiguous, 400, 'project_ambiguous');
      expect(ambiguous.body.project_ids.sort()).toEqual([projectId, second].sort());
      await t.http.delete(`/projects/${second}/test-plan`).set(r.member.auth).expect(200);
      // Another workspace's member sees nothing.
      const other = await t.factory.workspaceWithRoles();
      expectProblem(await t.http.get(`/runs/${runs.unchanged.id}/gate`).set(other.viewer.auth), 403);
    });
  });
});
