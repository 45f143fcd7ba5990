import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { plantedGrader } from '../../utils/planted-judge.js';
import { expectProblem } from '../../utils/problem.js';
import { runToEnd } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type Actor = Awaited<ReturnType<TestApp['factory']['actor']>>;
type Check = { kind: string; status: string; metric: string | null; message: string };
type Gate = { verdict: string; checks: Check[] };

const RUBRIC = {
  fields: [
    { name: 'correct', type: 'pass_fail', required: true },
    { name: 'note', type: 'free_text', required: false },
  ],
};

/**
 * A review queue's final labels validate a planted judge (a local server speaking the OpenAI chat
 * protocol). 20 rows; the humans pass rows 0..11. The judge passes rows 0..10 and 12: 11 true
 * positives, 1 false negative (row 11), 1 false positive (row 12), 7 true negatives. Two
 * reviewers label every row through the queue; the second disagrees on rows 3 and 15, which an
 * admin adjudicates to the humans' verdict.
 */
describe('review queues validate a judge', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let judge: FakeUpstream;
  let data: UploadedDataset;
  let reviewers: Actor[];
  let runId: string;
  let queueId: string;
  let projectId: string;
  const HUMAN_PASSES = (i: number) => i < 12;
  const JUDGE_PASSES = (i: number) => i < 11 || i === 12;
  const DISAGREED = new Set([3, 15]);
  const ROWS = Array.from({ length: 20 }, (_, i) => ({ input: `question ${i}`, expected_output: `answer ${i}` }));
  const indexOf = (input: string) => Number(/question (\d+)/.exec(input)![1]);

  const validate = (queue: string, body: object, auth = r.member.auth) =>
    t.http.post(`/review-queues/${queue}/judge-validations`).set(auth).send(body);
  const gate = async () =>
    (await t.http.get(`/runs/${runId}/gate`).query({ project_id: projectId }).set(r.viewer.auth).expect(200))
      .body as Gate;
  const queue = async (source: object, extra: object = {}) =>
    (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: `queue ${Math.random()}`, rubric: RUBRIC, source, ...extra })
        .expect(201)
    ).body.id as string;

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    judge = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    reviewers = [];
    for (let n = 0; n < 2; n++) {
      const actor = await t.factory.actor();
      await t.factory.addMember(ws, actor.id, 'member');
      reviewers.push(actor);
    }
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'questions.json');
    const { sutId, connectionId } = await plantedGrader(t, r.member.auth, ws, {
      sut,
      judge,
      passes: JUDGE_PASSES,
    });
    const run = await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['grader'],
    });
    expect(run.state).toBe('succeeded');
    runId = run.id;
    const planId = (
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'validated judges',
          datasets: [{ dataset_id: data.datasetId }],
          metrics: [
            {
              name: 'grader',
              threshold: { operator: '>=', value: 0 },
              validation: { min_kappa_lower: 0.3, on_failure: 'fail' },
            },
          ],
        })
        .expect(201)
    ).body.id;
    projectId = (
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'gated', sut_ids: [sutId] })
        .expect(201)
    ).body.id;
    await t.http.put(`/projects/${projectId}/test-plan`).set(r.member.auth).send({ test_plan: planId }).expect(200);
    queueId = await queue(
      { kind: 'run', id: runId },
      { overlap: 2, reviewers: reviewers.map((x) => x.id), adjudicators: [r.admin.id] },
    );
  });
  afterAll(async () => {
    await sut?.close();
    await judge?.close();
    await t?.close();
  });

  it('refuses to validate before any final label, and the gate refuses the unvalidated judge', async () => {
    expectProblem(await validate(queueId, { metric: 'grader', field: 'correct' }), 409, 'no_final_labels');
    const before = await gate();
    expect(before.verdict).toBe('fail');
    expect(before.checks).toContainEqual(
      expect.objectContaining({
        kind: 'judge_validity',
        status: 'fail',
        message: expect.stringContaining('unvalidated'),
      }),
    );
  });

  it('takes two reviewers labels through the queue and an adjudication of their disagreements', async () => {
    const added = await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'input', op: 'is_null', value: false } })
      .expect(200);
    expect(added.body).toEqual(expect.objectContaining({ added: 20, total: 20 }));
    for (const [n, reviewer] of reviewers.entries())
      for (;;) {
        const res = await t.http.post(`/review-queues/${queueId}/items:next`).set(reviewer.auth).send();
        if (res.status === 204) break;
        expect(res.status).toBe(200);
        const i = indexOf(res.body.item.context.input);
        const verdict = n === 1 && DISAGREED.has(i) ? !HUMAN_PASSES(i) : HUMAN_PASSES(i);
        await t.http
          .post(`/review-queues/${queueId}/items/${res.body.item.id}/labels`)
          .set(reviewer.auth)
          .send({ values: { correct: verdict, note: `row ${i}` } })
          .expect(201);
      }
    const disagreements = (await t.http.get(`/review-queues/${queueId}/disagreements`).set(r.admin.auth).expect(200))
      .body.items as Array<{ item: { id: string; context: { input: string } } }>;
    expect(disagreements.map((d) => indexOf(d.item.context.input)).sort((a, b) => a - b)).toEqual([3, 15]);
    for (const d of disagreements)
      await t.http
        .post(`/review-queues/${queueId}/items/${d.item.id}/adjudication`)
        .set(r.admin.auth)
        .send({ values: { correct: HUMAN_PASSES(indexOf(d.item.context.input)) } })
        .expect(200);
  });

  let validationId: string;
  it("validates the judge against the queue's final labels: exactly the planted confusion matrix, the reviewers' agreement as the ceiling", async () => {
    const res = await validate(queueId, { metric: 'grader', field: 'correct', seed: 3 }).expect(201);
    validationId = res.body.id;
    expect(res.body).toEqual(
      expect.objectContaining({
        config_name: 'grader',
        config_version: 1,
        metric: 'grader',
        items: 20,
        seed: 3,
        source: {
          run_id: runId,
          kind: 'review_queue',
          field: 'correct',
          queue_id: queueId,
          rubric_version: 1,
          repetition: 'first',
          unlabelled_rows: 0,
          unmatched_labels: 0,
        },
      }),
    );
    const result = res.body.result;
    expect(result.confusion).toEqual({
      true_positive: 11,
      false_positive: 1,
      true_negative: 7,
      false_negative: 1,
      items: 20,
    });
    expect(result.true_positive_rate).toEqual(expect.objectContaining({ value: 11 / 12, successes: 11, trials: 12 }));
    expect(result.true_negative_rate).toEqual(expect.objectContaining({ value: 7 / 8, successes: 7, trials: 8 }));
    expect(result.accuracy.value).toBe(18 / 20);
    // Cohen's kappa: observed 0.9, chance 12/20 x 12/20 + 8/20 x 8/20 = 0.52.
    expect(result.kappa.value).toBeCloseTo((0.9 - 0.52) / (1 - 0.52), 12);
    // The two reviewers agree on 18 of 20 rows.
    expect(result.human_agreement).toEqual(
      expect.objectContaining({
        reviewers: 2,
        items: 20,
        percent_agreement: expect.objectContaining({ value: 18 / 20 }),
      }),
    );
    // The pairs of the disagreed rows carry both reviewers' verdicts.
    const kept = (await t.http.get(`/judge-validations/${validationId}`).set(r.viewer.auth).expect(200)).body;
    expect(kept.source).toEqual(res.body.source);
    const split = kept.pairs.filter((p: { reviews: boolean[] }) => p.reviews[0] !== p.reviews[1]);
    expect(split).toHaveLength(2);
  });

  it('reports the pass rate corrected for the judge (Rogan-Gladen) and the gate passes the validated judge', async () => {
    const grader = (await t.http.get(`/runs/${runId}`).set(r.viewer.auth).expect(200)).body.summary.metrics.find(
      (m: { name: string }) => m.name === 'grader',
    );
    // Written out: the judge passed 12 of 20; Se = 11/12, Sp = 7/8; pi = (p + Sp - 1) / (Se + Sp - 1).
    const observed = 12 / 20;
    const [se, sp] = [11 / 12, 7 / 8];
    expect(grader.pass_rate).toBe(observed);
    expect(grader.corrected).toEqual(
      expect.objectContaining({ validation_id: validationId, observed, sensitivity: se, specificity: sp }),
    );
    expect(grader.corrected.pass_rate).toBeCloseTo((observed + sp - 1) / (se + sp - 1), 12);
    const after = await gate();
    expect(after.checks.find((c) => c.kind === 'judge_validity')).toEqual(
      expect.objectContaining({ status: 'pass', message: expect.stringContaining('is validated') }),
    );
    expect(after.verdict).toBe('pass');
  });

  it('answers 4xx problems for a field, a run or a queue that cannot validate a judge', async () => {
    expectProblem(await validate(queueId, { metric: 'grader', field: 'note' }), 422, 'rubric_field_not_rated');
    expectProblem(await validate(queueId, { metric: 'grader', field: 'nope' }), 422, 'rubric_field_not_rated');
    expectProblem(await validate(queueId, { metric: 'nope', field: 'correct' }), 422, 'validation_metric_invalid');
    expectProblem(await validate(queueId, { metric: 'grader', field: 'correct', extra: 1 }), 400, 'validation_failed');
    expectProblem(await validate(queueId, { metric: 'grader', field: 'correct' }, r.viewer.auth), 403);
    expectProblem(await validate(queueId, { metric: 'grader', field: 'correct' }, r.outsider.auth), 403);
    // A dataset-version queue names its run, which must be over that version.
    const sameVersion = await queue({ kind: 'dataset_version', id: data.versionId });
    expectProblem(
      await validate(sameVersion, { metric: 'grader', field: 'correct' }),
      422,
      'judge_validation_source_invalid',
    );
    expectProblem(
      await validate(sameVersion, { metric: 'grader', field: 'correct', run_id: runId }),
      409,
      'no_final_labels',
    );
    const other = await uploadRows(t, r.member.auth, ws, [{ input: 'x', expected_output: 'y' }], 'other.json');
    const otherVersion = await queue({ kind: 'dataset_version', id: other.versionId });
    const refused = await validate(otherVersion, { metric: 'grader', field: 'correct', run_id: runId });
    expectProblem(refused, 422, 'judge_validation_source_invalid');
    expect(refused.body.detail).toContain('another dataset version');
    expectProblem(
      await validate(otherVersion, {
        metric: 'grader',
        field: 'correct',
        run_id: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a99',
      }),
      404,
    );
  });
});
