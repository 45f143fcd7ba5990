import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chatCompletion, FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { followLocation } from '../../utils/accepted.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

type Actor = Awaited<ReturnType<TestApp['factory']['actor']>>;
type JudgeRun = {
  id: string;
  queue_id: string;
  state: string;
  failure: { code: string; message: string } | null;
  items: number;
  graded: number;
  ungraded: number;
  unlabelled: number;
  errors: Array<{ item_id: string; code: string; message: string }>;
  validation_id: string | null;
  config_name: string;
  config_version: number;
  rubric_version: number;
};

const RUBRIC = {
  fields: [
    { name: 'correct', type: 'pass_fail', required: true },
    { name: 'tone', type: 'categorical', required: false, options: ['curt', 'neutral', 'warm'] },
    { name: 'note', type: 'free_text' },
  ],
};

/**
 * A judge applied to a review queue's finally labelled items, against a planted judge (a local
 * server speaking the OpenAI chat protocol) that answers by the item's input text. 20 items;
 * humans pass items 0..11 and fail 12..19 (two reviewers, who disagree on items 0 and 5, which an
 * admin adjudicates). The judge passes items 0..9 and 12..14: 10 true positives, 2 false
 * negatives, 3 false positives and 5 true negatives.
 */
describe('review queues: judge runs validate a judge on the finally labelled items', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let judge: FakeUpstream;
  let reviewers: Actor[];
  let versionId: string;
  let queueId: string;
  let emptyQueueId: string;
  let itemOf: Map<number, string>;
  const HUMAN_PASSES = (i: number) => i < 12;
  const JUDGE_PASSES = (i: number) => i < 10 || (i >= 12 && i < 15);
  const DISAGREE = new Set([0, 5]);
  /** Items the flaky judge cannot grade: 1 (a true positive) and 13 (a false positive). */
  const FLAKY = new Set([1, 13]);
  /** How long the slow judge takes per answer. */
  const SLOW_MS = 1500;
  const rows = Array.from({ length: 20 }, (_, n) => ({
    n,
    input: `question ${n}`,
    expected_output: `answer ${n}`,
    output: `reply ${n}`,
  }));

  const start = (body: object, auth = r.member.auth, queue = queueId) =>
    t.http.post(`/review-queues/${queue}/judge-runs`).set(auth).send(body);
  const next = (queue: string, who: Actor) => t.http.post(`/review-queues/${queue}/items:next`).set(who.auth).send();

  async function settled(queue: string, id: string): Promise<JudgeRun> {
    for (let waited = 0; waited < 60_000; waited += 100) {
      const res = await t.http.get(`/review-queues/${queue}/judge-runs/${id}`).set(r.viewer.auth).expect(200);
      if (['succeeded', 'failed', 'cancelled'].includes(res.body.state)) return res.body as JudgeRun;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`judge run ${id} did not end within 60 s`);
  }

  async function judgeConnection(name: string, maxConcurrency: number): Promise<string> {
    return (
      await t.http
        .post('/judges')
        .set(r.member.auth)
        .send({
          workspace_id: r.workspace.id,
          name,
          provider: 'openai_compatible',
          base_url: judge.url('/v1'),
          model: 'j',
          max_attempts: 1,
          max_concurrency: maxConcurrency,
        })
        .expect(201)
    ).body.id as string;
  }

  async function judgedConfig(name: string, rubric: string, judgeId: string): Promise<void> {
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({
        workspace_id: r.workspace.id,
        name,
        kind: 'judged',
        metric: 'llm_judge',
        judged: { rubric, scale: { type: 'numeric', min: 1, max: 5 }, pass_threshold: 0.75, judge_id: judgeId },
      })
      .expect(201);
  }

  /** A queue over a source holding the items a filter selects. */
  async function queueOver(
    source: { kind: string; id: string },
    settings: { overlap?: number; reviewers: string[] },
    filter: object,
  ): Promise<string> {
    const queue = (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ workspace_id: r.workspace.id, name: `over ${source.kind}`, rubric: RUBRIC, source, ...settings })
        .expect(201)
    ).body.id as string;
    await t.http.post(`/review-queues/${queue}/items`).set(r.member.auth).send({ filter }).expect(200);
    return queue;
  }

  beforeAll(async () => {
    t = await startTestApp();
    judge = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    reviewers = [];
    for (let k = 0; k < 2; k++) {
      const actor = await t.factory.actor();
      await t.factory.addMember(r.workspace.id, actor.id, 'member');
      reviewers.push(actor);
    }
    judge.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
      const prompt = (req.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content).join('\n');
      const n = Number(/question (\d+)/.exec(prompt)?.[1]);
      if (prompt.includes('unreachable') || (prompt.includes('flaky') && FLAKY.has(n)))
        return { status: 503, json: { error: 'overloaded' } };
      return {
        json: chatCompletion(JUDGE_PASSES(n) ? '{"score": 5, "reason": "right"}' : '{"score": 1, "reason": "wrong"}'),
        ...(prompt.includes('slowly') ? { delayMs: SLOW_MS } : {}),
      };
    });
    const upload = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from(rows.map((row) => JSON.stringify(row)).join('\n')), 'rows.jsonl')
      .expect(201);
    versionId = upload.body.latest_version.id;
    const planted = await judgeConnection('planted', 4);
    await judgedConfig('grader', 'Is {{output}} right for {{input}}?', planted);
    await judgedConfig('flaky-grader', 'Is {{output}} right for {{input}}? (flaky)', planted);
    await judgedConfig('down-grader', 'Is {{output}} right for {{input}}? (unreachable)', planted);
    await judgedConfig(
      'slow-grader',
      'Is {{output}} right for {{input}}? Answer slowly.',
      await judgeConnection('one at a time', 1),
    );
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({ workspace_id: r.workspace.id, name: 'exact', kind: 'deterministic', metric: 'exact_match' })
      .expect(201);

    const twoReviewers = { overlap: 2, reviewers: [reviewers[0].id, reviewers[1].id] };
    const everyRow = { field: 'n', op: 'gte', value: 0 };
    queueId = await queueOver({ kind: 'dataset_version', id: versionId }, twoReviewers, everyRow);
    emptyQueueId = await queueOver({ kind: 'dataset_version', id: versionId }, twoReviewers, everyRow);
    itemOf = new Map();
    // Both reviewers label every item through the API; they disagree on items 0 and 5.
    for (const [k, who] of reviewers.entries()) {
      for (;;) {
        const res = await next(queueId, who);
        if (res.status === 204) break;
        expect(res.status).toBe(200);
        const n = res.body.item.context.row.n as number;
        itemOf.set(n, res.body.item.id);
        const correct = k === 1 && DISAGREE.has(n) ? !HUMAN_PASSES(n) : HUMAN_PASSES(n);
        await t.http
          .post(`/review-queues/${queueId}/items/${res.body.item.id}/labels`)
          .set(who.auth)
          .send({ values: { correct } })
          .expect(201);
      }
    }
    const disagreements = await t.http.get(`/review-queues/${queueId}/disagreements`).set(r.admin.auth).expect(200);
    expect(disagreements.body.total).toBe(DISAGREE.size);
    for (const d of disagreements.body.items as Array<{ item: { id: string; context: { row: { n: number } } } }>)
      await t.http
        .post(`/review-queues/${queueId}/items/${d.item.id}/adjudication`)
        .set(r.admin.auth)
        .send({ values: { correct: HUMAN_PASSES(d.item.context.row.n) } })
        .expect(200);
  });
  afterAll(async () => {
    await judge?.close();
    await t?.close();
  });

  it('applies the judge to every finally labelled item and records the validation as planted', async () => {
    const res = await start({ metric_config: { name: 'grader' }, field: 'correct', seed: 3 });
    expect(res.body).toEqual(
      expect.objectContaining({
        queue_id: queueId,
        state: expect.stringMatching(/^(queued|running|succeeded)$/),
        config_name: 'grader',
        config_version: 1,
        field: 'correct',
        rubric_version: 1,
        confidence: 0.95,
        seed: 3,
        validation_id: null,
      }),
    );
    await followLocation(t, res, r.viewer.auth);
    const run = await settled(queueId, res.body.id);
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        failure: null,
        items: 20,
        graded: 20,
        ungraded: 0,
        unlabelled: 0,
        errors: [],
        validation_id: expect.any(String),
      }),
    );
    const validation = (await t.http.get(`/judge-validations/${run.validation_id}`).set(r.viewer.auth).expect(200))
      .body;
    expect(validation.result.confusion).toEqual({
      true_positive: 10,
      false_positive: 3,
      true_negative: 5,
      false_negative: 2,
      items: 20,
    });
    expect(validation.source).toEqual(
      expect.objectContaining({
        run_id: null,
        kind: 'review_judge_run',
        field: 'correct',
        queue_id: queueId,
        rubric_version: 1,
        judge_run_id: run.id,
      }),
    );
    expect(validation).toEqual(expect.objectContaining({ config_name: 'grader', config_version: 1, seed: 3 }));
    // Each reviewer's label is kept with the pair: they agree on 18 of the 20 items.
    expect(validation.result.human_agreement).toEqual(
      expect.objectContaining({ reviewers: 2, items: 20, percent_agreement: expect.objectContaining({ value: 0.9 }) }),
    );
    // The pairs are keyed by the items' rows.
    expect(validation.pairs.map((p: { item: string }) => p.item).sort()).toHaveLength(20);

    const listed = await t.http.get(`/review-queues/${queueId}/judge-runs`).set(r.viewer.auth).expect(200);
    expect(listed.body.items.map((x: { id: string }) => x.id)).toContain(run.id);
  });

  it('counts and lists the items the judge could not grade and validates the rest', async () => {
    const res = await start({ metric_config: { name: 'flaky-grader', version: 1 }, field: 'correct' }).expect(202);
    const run = await settled(queueId, res.body.id);
    expect(run).toEqual(expect.objectContaining({ state: 'succeeded', items: 20, graded: 18, ungraded: 2 }));
    expect(run.errors.map((e) => e.item_id).sort()).toEqual([itemOf.get(1), itemOf.get(13)].sort());
    expect(run.errors[0].code).toEqual(expect.any(String));
    const validation = (await t.http.get(`/judge-validations/${run.validation_id}`).set(r.viewer.auth).expect(200))
      .body;
    expect(validation.result.confusion).toEqual({
      true_positive: 9,
      false_positive: 2,
      true_negative: 5,
      false_negative: 2,
      items: 18,
    });
  });

  it('fails with a clear reason when no item has a final label, or the judge answers none', async () => {
    const empty = await settled(
      emptyQueueId,
      (await start({ metric_config: { name: 'grader' }, field: 'correct' }, r.member.auth, emptyQueueId).expect(202))
        .body.id,
    );
    expect(empty).toEqual(
      expect.objectContaining({
        state: 'failed',
        failure: expect.objectContaining({ code: 'no_final_labels' }),
        validation_id: null,
      }),
    );
    const down = await settled(
      queueId,
      (await start({ metric_config: { name: 'down-grader' }, field: 'correct' }).expect(202)).body.id,
    );
    expect(down).toEqual(
      expect.objectContaining({
        state: 'failed',
        failure: expect.objectContaining({ code: 'judge_unreachable' }),
        items: 20,
        graded: 0,
        ungraded: 20,
        validation_id: null,
      }),
    );
    expect(down.errors).toHaveLength(20);
  });

  it('cancels a running judge run; an ended one cannot be cancelled', async () => {
    const res = await start({ metric_config: { name: 'slow-grader' }, field: 'correct' }).expect(202);
    const cancel = (auth = r.member.auth) =>
      t.http.post(`/review-queues/${queueId}/judge-runs/${res.body.id}:cancel`).set(auth).send();
    expectProblem(await cancel(r.viewer.auth), 403);
    const cancelled = await cancel().expect(200);
    expect(['cancelled', 'running']).toContain(cancelled.body.state);
    const run = await settled(queueId, res.body.id);
    expect(run).toEqual(expect.objectContaining({ state: 'cancelled', validation_id: null }));
    expect(run.graded).toBeLessThan(20);
    expectProblem(await cancel(), 409, 'judge_run_finished');
    // The planted judge's delayed answers to the calls cancelled in flight end before it closes.
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 100));
  });

  it("asks the judge about a trace's root span: its input and output", async () => {
    // Traces 8..19: humans pass 8..11; the judge passes 8, 9 and 12..14.
    const traces = Array.from({ length: 12 }, (_, k) => k + 8);
    const span = (n: number, root: boolean) => ({
      trace_id: `trace-${n}`,
      span_id: `span-${n}-${root ? 0 : 1}`,
      parent_span_id: root ? null : `span-${n}-0`,
      name: root ? 'agent' : 'llm',
      start_time: `2025-06-01T10:00:0${root ? 0 : 1}Z`,
      end_time: `2025-06-01T10:00:0${root ? 2 : 1}Z`,
      attributes: {
        'openinference.span.kind': root ? 'CHAIN' : 'LLM',
        'input.value': root ? `question ${n}` : `prompt ${n}`,
        'output.value': root ? `reply ${n}` : `completion ${n}`,
      },
    });
    const started = await t.http
      .post('/traces/land:inline')
      .set(r.member.auth)
      .send({
        workspace_id: r.workspace.id,
        dataset_name: 'production',
        records: traces.flatMap((n) => [span(n, true), span(n, false)]),
      })
      .expect(202);
    const landed = await landingSettled(t, r.viewer.auth, started.body.id);
    expect(landed.state).toBe('succeeded');
    const queue = await queueOver(
      { kind: 'traces', id: landed.version_id as string },
      { reviewers: [reviewers[0].id] },
      { field: 'name', op: 'eq', value: 'agent' },
    );
    for (;;) {
      const res = await next(queue, reviewers[0]);
      if (res.status === 204) break;
      const n = Number(/question (\d+)/.exec(res.body.item.context.input as string)?.[1]);
      await t.http
        .post(`/review-queues/${queue}/items/${res.body.item.id}/labels`)
        .set(reviewers[0].auth)
        .send({ values: { correct: HUMAN_PASSES(n) } })
        .expect(201);
    }
    const asked = judge.requests.length;
    const run = await settled(
      queue,
      (await start({ metric_config: { name: 'grader' }, field: 'correct' }, r.member.auth, queue).expect(202)).body.id,
    );
    expect(run).toEqual(expect.objectContaining({ state: 'succeeded', items: 12, graded: 12 }));
    const prompts = judge.requests.slice(asked).map((req) => JSON.stringify(req.body));
    expect(prompts.filter((p) => p.includes('reply 8') && p.includes('question 8'))).toHaveLength(1);
    expect(prompts.filter((p) => p.includes('completion') || p.includes('prompt 8'))).toEqual([]);
    const validation = (await t.http.get(`/judge-validations/${run.validation_id}`).set(r.viewer.auth).expect(200))
      .body;
    expect(validation.result.confusion).toEqual({
      true_positive: 2,
      false_positive: 3,
      true_negative: 5,
      false_negative: 2,
      items: 12,
    });
    expect(validation.pairs.map((p: { item: string }) => p.item).sort()).toEqual(
      traces.map((n) => `trace-${n}`).sort(),
    );
  });

  it('is the workspace’s own: another workspace cannot start, list or read it', async () => {
    const mine = (await t.http.get(`/review-queues/${queueId}/judge-runs`).set(r.viewer.auth).expect(200)).body.items[0]
      .id as string;
    // A user of another workspace is told the queue's workspace is not theirs, and learns nothing of its runs.
    expectProblem(await start({ metric_config: { name: 'grader' }, field: 'correct' }, r.outsider.auth), 403);
    expectProblem(await t.http.get(`/review-queues/${queueId}/judge-runs`).set(r.outsider.auth), 403);
    const read = await t.http.get(`/review-queues/${queueId}/judge-runs/${mine}`).set(r.outsider.auth);
    expectProblem(read, 403);
    expect(JSON.stringify(read.body)).not.toContain(mine);
    // Through another queue, even of the same workspace, a judge run is not found.
    expectProblem(await t.http.get(`/review-queues/${emptyQueueId}/judge-runs/${mine}`).set(r.viewer.auth), 404);
    expectProblem(await start({ metric_config: { name: 'grader' }, field: 'correct' }, r.viewer.auth), 403);
  });

  it('answers 4xx for bad bodies, unknown configs and fields that cannot validate a judge', async () => {
    const base = { metric_config: { name: 'grader' }, field: 'correct' };
    expectProblem(await start({ field: 'correct' }), 400, 'validation_failed');
    expectProblem(await start({ ...base, extra: 1 }), 400, 'validation_failed');
    expectProblem(await start({ ...base, seed: -1 }), 400, 'validation_failed');
    expectProblem(await start({ ...base, confidence: 1.5 }), 400, 'validation_failed');
    expectProblem(await start({ ...base, metric_config: { name: 'grader', version: 0 } }), 400, 'validation_failed');
    expectProblem(await start({ ...base, metric_config: [] }), 400, 'validation_failed');
    expectProblem(await start({ ...base, positive: [] }), 400, 'validation_failed');
    expectProblem(await start({ ...base, metric_config: { name: 'nobody' } }), 404);
    expectProblem(await start({ ...base, metric_config: { name: 'grader', version: 9 } }), 404);
    expectProblem(await start({ ...base, metric_config: { name: 'exact' } }), 422, 'judge_run_metric_invalid');
    expectProblem(await start({ ...base, field: 'missing' }), 422, 'judge_run_field_invalid');
    expectProblem(await start({ ...base, field: 'note' }), 422, 'judge_run_field_invalid');
    expectProblem(await start({ ...base, field: 'tone' }), 422, 'judge_run_field_invalid');
    expectProblem(await start({ ...base, field: 'tone', positive: ['loud'] }), 422, 'judge_run_field_invalid');
    expectProblem(await start({ ...base, positive: ['true'] }), 422, 'judge_run_field_invalid');
    expectProblem(
      await t.http.get(`/review-queues/${queueId}/judge-runs/not-a-uuid`).set(r.viewer.auth),
      400,
      'invalid_identifier',
    );
  });
});
