import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { plantedGrader } from '../../utils/planted-judge.js';
import { expectProblem } from '../../utils/problem.js';
import { runToEnd } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type Run = { id: string; state: string };
type Rate = { value: number; successes: number; trials: number; interval: { low: number; high: number } };
type Validation = {
  id: string;
  metric_config_id: string;
  config_name: string;
  config_version: number;
  items: number;
  source: Record<string, unknown>;
  result: {
    confusion: Record<string, number>;
    true_positive_rate: Rate;
    true_negative_rate: Rate;
    accuracy: Rate;
    kappa: { value: number; interval: { low: number; high: number } | null };
    by_dimension: { dimension: string; groups: Array<{ value: string; confusion: Record<string, number> }> } | null;
    human_agreement: { reviewers: number; items: number; percent_agreement: { value: number } } | null;
  };
  pairs?: Array<{ item: string; judge_passed: boolean; human_passed: boolean }>;
};
type Check = {
  kind: string;
  status: string;
  blocking: boolean;
  metric: string | null;
  message: string;
  observed: number | null;
};
type Gate = { verdict: string; failures: number; warnings: number; checks: Check[] };

/**
 * Judge validity against a local fake SUT and a planted judge (a local server speaking the
 * OpenAI chat protocol). 20 rows; humans pass rows 0..11 and fail 12..19 (`human_verdict`).
 * Rubric v1's judge passes rows 0..9 and 12..14: 10 true positives, 2 false negatives, 3 false
 * positives and 5 true negatives. Rubric v2 (its rubric says "strictly") agrees with humans on
 * every row.
 */
describe('judge validity: validations, corrected pass rates and the gate', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let judge: FakeUpstream;
  let data: UploadedDataset;
  let sutId: string;
  let connectionId: string;
  let v1Run: Run;
  let v2Run: Run;
  let failProject: string;
  let warnProject: string;
  const HUMAN_PASSES = (i: number) => i < 12;
  const V1_PASSES = (i: number) => i < 10 || (i >= 12 && i < 15);
  const ROWS = Array.from({ length: 20 }, (_, i) => ({
    input: `question ${i}`,
    expected_output: `answer ${i}`,
    human_verdict: HUMAN_PASSES(i) ? 'pass' : 'fail',
    // A second reviewer who disagrees with the first on row 0 only.
    reviewer_b: HUMAN_PASSES(i) !== (i === 0) ? 'pass' : 'fail',
    topic: i % 2 ? 'billing' : 'shipping',
  }));

  const run = (): Promise<Run> =>
    runToEnd<Run>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['grader'],
    });
  const validate = (runId: string, body: object, auth = r.member.auth) =>
    t.http.post(`/runs/${runId}/judge-validations`).set(auth).send(body);
  const gate = async (runId: string, projectId: string, format?: string) =>
    await t.http
      .get(`/runs/${runId}/gate`)
      .query({ project_id: projectId, ...(format ? { format } : {}) })
      .set(r.viewer.auth)
      .expect(200);
  const plan = async (name: string, validation: object) =>
    (
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name,
          datasets: [{ dataset_id: data.datasetId }],
          metrics: [{ name: 'grader', threshold: { operator: '>=', value: 0 }, validation }],
        })
        .expect(201)
    ).body.id as string;
  const project = async (name: string, planId: string) => {
    const id = (
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name, sut_ids: [sutId] })
        .expect(201)
    ).body.id as string;
    await t.http.put(`/projects/${id}/test-plan`).set(r.member.auth).send({ test_plan: planId }).expect(200);
    return id;
  };

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    judge = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'labelled.json');
    ({ sutId, connectionId } = await plantedGrader(t, r.member.auth, ws, {
      sut,
      judge,
      passes: (i, prompt) => (prompt.includes('strictly') ? HUMAN_PASSES(i) : V1_PASSES(i)),
    }));
    v1Run = await run();
    failProject = await project(
      'strict gate',
      await plan('validated judges', { min_kappa_lower: 0.5, on_failure: 'fail' }),
    );
    warnProject = await project(
      'lenient gate',
      await plan('judges noted', { min_kappa_lower: 0.5, on_failure: 'warn' }),
    );
  });
  afterAll(async () => {
    await sut?.close();
    await judge?.close();
    await t?.close();
  });

  it('refuses an unvalidated judge under a plan requiring validation (fail), and warns under on_failure warn', async () => {
    expect(v1Run.state).toBe('succeeded');
    const planned = (
      await t.http.get('/test-plans/validated judges').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body as { metrics: Array<{ name: string; validation?: unknown }> };
    expect(planned.metrics[0].validation).toEqual({ min_kappa_lower: 0.5, min_rates_lower: null, on_failure: 'fail' });
    const strict = (await gate(v1Run.id, failProject)).body as Gate;
    expect(strict.verdict).toBe('fail');
    expect(strict.checks).toContainEqual(
      expect.objectContaining({
        kind: 'judge_validity',
        status: 'fail',
        blocking: true,
        metric: 'grader',
        message: expect.stringContaining('the judge of grader (grader v1) is unvalidated'),
      }),
    );
    const lenient = (await gate(v1Run.id, warnProject)).body as Gate;
    expect(lenient).toEqual(expect.objectContaining({ verdict: 'pass', failures: 0, warnings: 1 }));
    expect(lenient.checks.find((c) => c.kind === 'judge_validity')).toEqual(
      expect.objectContaining({ status: 'fail', blocking: false, message: expect.stringContaining('warning only') }),
    );
    // No validation, no corrected pass rate: the run's judged metric says so with null.
    const answer = (await t.http.get(`/runs/${v1Run.id}`).set(r.viewer.auth).expect(200)).body;
    expect(answer.summary.metrics.find((m: { name: string }) => m.name === 'grader').corrected).toBeNull();
  });

  let poor: Validation;
  it('validates the planted judge against the human labels: exactly the planted confusion matrix and rates', async () => {
    const res = await validate(v1Run.id, {
      metric: 'grader',
      human: { field: 'human_verdict', reviewer_fields: ['reviewer_b'] },
      by_dimension: 'topic',
    }).expect(201);
    poor = res.body as Validation;
    expect(poor).toEqual(
      expect.objectContaining({
        config_name: 'grader',
        config_version: 1,
        metric: 'grader',
        items: 20,
        source: {
          run_id: v1Run.id,
          kind: 'field',
          field: 'human_verdict',
          repetition: 'first',
          unlabelled_rows: 0,
          unmatched_labels: 0,
        },
      }),
    );
    expect(poor.result.confusion).toEqual({
      true_positive: 10,
      false_positive: 3,
      true_negative: 5,
      false_negative: 2,
      items: 20,
    });
    expect(poor.result.true_positive_rate).toEqual(
      expect.objectContaining({ value: 10 / 12, successes: 10, trials: 12 }),
    );
    expect(poor.result.true_negative_rate).toEqual(expect.objectContaining({ value: 5 / 8, successes: 5, trials: 8 }));
    expect(poor.result.accuracy.value).toBe(15 / 20);
    // Cohen's kappa: observed 0.75, chance 13/20 x 12/20 + 7/20 x 8/20 = 0.53.
    expect(poor.result.kappa.value).toBeCloseTo((0.75 - 0.53) / (1 - 0.53), 12);
    // Wilson's interval of 10/12, written out: centre and half-width at z = 1.959964.
    const z = 1.959963984540054;
    const p = 10 / 12;
    const n = 12;
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
    expect(poor.result.true_positive_rate.interval.low).toBeCloseTo(centre - half, 9);
    expect(poor.result.true_positive_rate.interval.high).toBeCloseTo(centre + half, 9);
    // Per topic (odd rows are billing): billing has human passes 1,3,..,11 and the judge passes 1,3,5,7,9,13.
    // The reviewers agree on 19 of 20 rows: the ceiling a judge can reach.
    expect(poor.result.human_agreement).toEqual(
      expect.objectContaining({
        reviewers: 2,
        items: 20,
        percent_agreement: expect.objectContaining({ value: 19 / 20 }),
      }),
    );
    const billing = poor.result.by_dimension!.groups.find((g) => g.value === 'billing')!;
    expect(billing.confusion).toEqual({
      true_positive: 5,
      false_positive: 1,
      true_negative: 3,
      false_negative: 1,
      items: 10,
    });

    const listed = await t.http
      .get('/metric-configs/grader/1/validations')
      .query({ workspace_id: ws })
      .set(r.viewer.auth)
      .expect(200);
    expect(listed.body).toEqual(
      expect.objectContaining({ total: 1, items: [expect.not.objectContaining({ pairs: expect.anything() })] }),
    );
    const one = (await t.http.get(`/judge-validations/${poor.id}`).set(r.viewer.auth).expect(200)).body as Validation;
    expect(one.pairs).toHaveLength(20);
    expect(one.pairs!.filter((x) => x.judge_passed !== x.human_passed).map((x) => x.item)).toHaveLength(5);
  });

  it('reports the pass rate corrected for the judge (Rogan-Gladen), and fails a gate whose kappa bound is not met', async () => {
    const grader = (await t.http.get(`/runs/${v1Run.id}`).set(r.viewer.auth).expect(200)).body.summary.metrics.find(
      (m: { name: string }) => m.name === 'grader',
    );
    // Written out: the judge passed 13 of 20; Se = 10/12, Sp = 5/8; pi = (p + Sp - 1) / (Se + Sp - 1).
    const observed = 13 / 20;
    const [se, sp] = [10 / 12, 5 / 8];
    expect(grader.pass_rate).toBe(observed);
    expect(grader.corrected).toEqual(
      expect.objectContaining({
        validation_id: poor.id,
        level: 0.95,
        method: 'rogan_gladen_lang_reiczigel',
        observed,
        sensitivity: se,
        specificity: sp,
      }),
    );
    expect(grader.corrected.pass_rate).toBeCloseTo((observed + sp - 1) / (se + sp - 1), 12);
    expect(grader.corrected.pass_rate).toBeCloseTo(0.6, 12);
    expect(grader.corrected.interval.low).toBeLessThan(0.6);
    expect(grader.corrected.interval.high).toBeGreaterThan(0.6);
    const results = (await t.http.get(`/runs/${v1Run.id}/results`).set(r.viewer.auth).expect(200)).body;
    expect(results.summary.metrics.find((m: { name: string }) => m.name === 'grader').corrected).toEqual(
      grader.corrected,
    );

    // Kappa 0.47 on 20 items: its lower bound is far from 0.5.
    const strict = (await gate(v1Run.id, failProject)).body as Gate;
    expect(strict.verdict).toBe('fail');
    expect(strict.checks.find((c) => c.kind === 'judge_validity')!.message).toMatch(
      /is not valid enough: kappa's lower bound is/,
    );
    expect(strict.checks).toContainEqual(
      expect.objectContaining({
        kind: 'corrected_pass_rate',
        status: 'pass',
        blocking: false,
        metric: 'grader',
        observed: grader.corrected.pass_rate,
      }),
    );
    const markdown = (await gate(v1Run.id, failProject, 'markdown')).text;
    expect(markdown).toContain('corrected for the judge');
    const junit = (await gate(v1Run.id, failProject, 'junit')).text;
    expect(junit).toContain('classname="ews.gate.judge_validity"');
    expect(junit).toContain('classname="ews.gate.corrected_pass_rate"');
  });

  it('passes the gate once a good validation exists (labels handed in, as a review queue would)', async () => {
    // Labels that agree with the judge on every row: kappa 1, its interval 1..1.
    const labels = ROWS.map((_, i) => ({ row_id: '', value: V1_PASSES(i) }));
    const rows = (await t.http.get(`/judge-validations/${poor.id}`).set(r.viewer.auth).expect(200)).body
      .pairs as Array<{ item: string; judge_passed: boolean }>;
    rows.forEach((p, i) => Object.assign(labels[i], { row_id: p.item, value: p.judge_passed }));
    const good = (await validate(v1Run.id, { metric: 'grader', human: { labels }, seed: 7 }).expect(201))
      .body as Validation;
    expect(good.source).toEqual(expect.objectContaining({ kind: 'labels', field: null }));
    expect(good.result.kappa.value).toBe(1);
    const strict = (await gate(v1Run.id, failProject)).body as Gate;
    expect(strict.checks.find((c) => c.kind === 'judge_validity')).toEqual(
      expect.objectContaining({ status: 'pass', message: expect.stringContaining('is validated') }),
    );
    expect(strict.verdict).toBe('pass');
    // Recorded, the verdict's answer carries the same checks.
    const recorded = (
      await t.http
        .post(`/runs/${v1Run.id}/gate`)
        .set(r.member.auth)
        .send({ project_id: failProject, label: 'main' })
        .expect(201)
    ).body as Gate & { record: { verdict: string } };
    expect(recorded.record.verdict).toBe('pass');
    expect(recorded.checks.map((c) => c.kind)).toEqual(
      expect.arrayContaining(['judge_validity', 'corrected_pass_rate']),
    );
    // The corrected pass rate follows the newest validation: a perfect judge's is its own.
    const grader = (await t.http.get(`/runs/${v1Run.id}`).set(r.viewer.auth).expect(200)).body.summary.metrics.find(
      (m: { name: string }) => m.name === 'grader',
    );
    expect(grader.corrected).toEqual(
      expect.objectContaining({ validation_id: good.id, sensitivity: 1, specificity: 1 }),
    );
    expect(grader.corrected.pass_rate).toBeCloseTo(13 / 20, 12);
  });

  it('compares two rubric versions on the same items (exact McNemar)', async () => {
    await t.http
      .post(`/workspaces/${ws}/metric-configs/grader/versions`)
      .set(r.member.auth)
      .send({ judged: { rubric: 'Judge strictly: is {{output}} right?' } })
      .expect(201);
    v2Run = await run();
    const v2 = (await validate(v2Run.id, { metric: 'grader', human: { field: 'human_verdict' } }).expect(201))
      .body as Validation;
    expect(v2).toEqual(expect.objectContaining({ config_version: 2 }));
    expect(v2.result.confusion).toEqual({
      true_positive: 12,
      false_positive: 0,
      true_negative: 8,
      false_negative: 0,
      items: 20,
    });
    const compared = await t.http
      .post('/judge-validations:compare')
      .query({ workspace_id: ws })
      .set(r.viewer.auth)
      .send({ base_validation_id: poor.id, candidate_validation_id: v2.id })
      .expect(200);
    expect(compared.body).toEqual(
      expect.objectContaining({
        base: { id: poor.id, config_name: 'grader', config_version: 1 },
        candidate: { id: v2.id, config_name: 'grader', config_version: 2 },
        shared_items: 20,
        human_label_conflicts: 0,
        items: 20,
        only_base_correct: 0,
        only_candidate_correct: 5,
        difference: 0.25,
        significant: false,
      }),
    );
    // Exact McNemar: 0 against 5 discordant items, two-sided: 2 x 0.5^5.
    expect(compared.body.mcnemar.p_value).toBeCloseTo(2 * 0.5 ** 5, 12);

    // The diff corrects each side by its own config version's newest validation.
    const diff = await t.http
      .get('/runs/diff')
      .query({ base: v1Run.id, candidate: v2Run.id })
      .set(r.viewer.auth)
      .expect(200);
    const grader = diff.body.summary.metrics.find((m: { name: string }) => m.name === 'grader');
    expect(grader.base_corrected).toEqual(expect.objectContaining({ sensitivity: 1, specificity: 1 }));
    expect(grader.base_corrected.pass_rate).toBeCloseTo(13 / 20, 12);
    expect(grader.candidate_corrected).toEqual(expect.objectContaining({ validation_id: v2.id, sensitivity: 1 }));
    expect(grader.candidate_corrected.pass_rate).toBeCloseTo(12 / 20, 12);
  });

  it("shows the corrected pass rate in a report's metric table", async () => {
    const report = (await t.http.post(`/reports/${v1Run.id}`).set(r.member.auth).send({}).expect(201)).body as {
      sections: Array<{
        key: string;
        data: { metrics: Array<Record<string, unknown>> };
        markdown: string;
      }>;
    };
    const overview = report.sections.find((x) => x.key === 'metrics_overview')!;
    expect(overview.data.metrics[0]).toEqual(
      expect.objectContaining({ name: 'grader', corrected: expect.objectContaining({ pass_rate: 0.65 }) }),
    );
    // The metric table gains the column; the narrative says it in words.
    expect(overview.markdown).toContain('Corrected pass rate');
    expect(overview.markdown).toContain("corrected for its judge's errors");
  });

  it('answers 4xx problems for what cannot be validated, and keeps to the roles and the workspace', async () => {
    expectProblem(
      await validate(v1Run.id, { metric: 'nope', human: { field: 'human_verdict' } }),
      422,
      'validation_metric_invalid',
    );
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { field: 'topic' } }),
      422,
      'validation_no_overlap',
    );
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { labels: [{ row_id: 'no-such-row', value: true }] } }),
      422,
      'validation_no_overlap',
    );
    const few = (await t.http.get(`/judge-validations/${poor.id}`).set(r.viewer.auth).expect(200)).body.pairs
      .slice(0, 3)
      .map((p: { item: string }) => ({ row_id: p.item, value: 'pass' }));
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { labels: few } }),
      422,
      'validation_too_few_pairs',
    );
    expectProblem(await validate(v1Run.id, { metric: 'grader', human: {} }), 400, 'validation_labels_invalid');
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { field: 'x', labels: few } }),
      400,
      'validation_labels_invalid',
    );
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { field: 'x' }, extra: 1 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { field: 'human_verdict' } }, r.viewer.auth),
      403,
    );
    expectProblem(
      await validate(v1Run.id, { metric: 'grader', human: { field: 'human_verdict' } }, r.outsider.auth),
      403,
    );
    expectProblem(await t.http.get(`/judge-validations/${poor.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get('/judge-validations/00000000-0000-4000-8000-000000000000').set(r.viewer.auth), 404);
    expectProblem(
      await t.http.get('/metric-configs/grader/9/validations').query({ workspace_id: ws }).set(r.viewer.auth),
      404,
    );
    const elsewhere = await t.factory.workspaceWithRoles();
    expectProblem(
      await t.http
        .post('/judge-validations:compare')
        .query({ workspace_id: elsewhere.workspace.id })
        .set(elsewhere.owner.auth)
        .send({ base_validation_id: poor.id, candidate_validation_id: poor.id }),
      404,
    );
  });
});
