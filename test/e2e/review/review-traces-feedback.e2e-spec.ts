import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

const RUBRIC = {
  fields: [
    { name: 'failed', type: 'pass_fail', required: true },
    { name: 'expected_answer', type: 'free_text', required: false },
  ],
};

/**
 * Trace queues fed by end-user feedback (the traces of the version that have such feedback, or
 * their sessions), and a traces queue's final labels written as the trace version's next
 * ground truth. Four traces land: trace-1 and trace-2 in session-a, trace-3 in session-b,
 * trace-4 in session-c.
 */
describe('review queues: feedback items and trace ground truth', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let versionId: string;
  let key: Record<string, string>;

  const span = (trace: number, id: number, parent: number | null) => ({
    trace_id: `trace-${trace}`,
    span_id: `span-${trace}-${id}`,
    parent_span_id: parent === null ? null : `span-${trace}-${parent}`,
    name: parent === null ? 'agent' : 'llm',
    start_time: `2025-06-01T10:00:0${id}Z`,
    end_time: `2025-06-01T10:00:0${id + 1}Z`,
    attributes: {
      'session.id': trace <= 2 ? 'session-a' : trace === 3 ? 'session-b' : 'session-c',
      'openinference.span.kind': parent === null ? 'CHAIN' : 'LLM',
      'input.value': `question ${trace}`,
      'output.value': `answer ${trace}`,
    },
  });
  const queue = async (kind: string, id = versionId) =>
    (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: `${kind} ${Math.random()}`, rubric: RUBRIC, source: { kind, id } })
        .expect(201)
    ).body.id as string;
  const add = (queueId: string, body: object) =>
    t.http.post(`/review-queues/${queueId}/items`).set(r.member.auth).send(body);
  const refs = async (queueId: string) =>
    (
      (await t.http.get(`/review-queues/${queueId}/items`).set(r.viewer.auth).expect(200)).body.items as Array<{
        ref: string;
      }>
    ).map((i) => i.ref);

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const records = [1, 2, 3, 4].flatMap((n) => [span(n, 0, null), span(n, 1, 0)]);
    const started = await t.http
      .post('/traces/land:inline')
      .set(r.member.auth)
      .send({ workspace_id: ws, dataset_name: 'production', records })
      .expect(202);
    const landed = await landingSettled(t, r.viewer.auth, started.body.id);
    expect(landed.state).toBe('succeeded');
    versionId = landed.version_id;
    key = {
      Authorization: `Bearer ${
        (
          await t.http
            .post(`/workspaces/${ws}/api-keys`)
            .set(r.member.auth)
            .send({ name: 'app-backend', role: 'member' })
            .expect(201)
        ).body.key
      }`,
    };
    const feedback = [
      { trace_id: 'trace-1', span_id: 'span-1-1', name: 'thumbs', value: false },
      { trace_id: 'trace-1', name: 'thumbs', value: false },
      { trace_id: 'trace-2', name: 'thumbs', value: true },
      { trace_id: 'trace-3', name: 'thumbs', value: false },
      { trace_id: 'trace-4', name: 'rating', value: 1 },
      { trace_id: 'trace-2', name: 'rating', value: 2 },
      { trace_id: 'trace-3', name: 'rating', value: 5 },
      // Feedback on a trace the version does not hold.
      { trace_id: 'trace-99', name: 'thumbs', value: false },
    ];
    await t.http.post('/traces/feedback:batch').set(key).send({ items: feedback }).expect(200);
  });
  afterAll(async () => t?.close());

  it("adds the version's traces that have such feedback, by value or by a score range with a seeded sample", async () => {
    const traces = await queue('traces');
    const down = await add(traces, { feedback: { name: 'thumbs', value: false } }).expect(200);
    expect(down.body).toEqual({ added: 2, skipped: 0, not_found: [], total: 2 });
    expect(await refs(traces)).toEqual(['trace-1', 'trace-3']);
    const rated = await add(traces, { feedback: { name: 'rating', min: 1, max: 2 } }).expect(200);
    expect(rated.body).toEqual({ added: 2, skipped: 0, not_found: [], total: 4 });
    // A seeded sample of the low ratings: the same seed, the same draw.
    const sampled = await queue('traces');
    const body = { feedback: { name: 'rating', max: 2 }, sample: { size: 1, seed: 7 } };
    expect((await add(sampled, body).expect(200)).body.added).toBe(1);
    const again = await queue('traces');
    await add(again, body).expect(200);
    expect(await refs(again)).toEqual(await refs(sampled));
    expect(['trace-2', 'trace-4']).toContain((await refs(sampled))[0]);
  });

  it('adds the sessions of the traces with such feedback to a sessions queue', async () => {
    const sessions = await queue('sessions');
    const added = await add(sessions, { feedback: { name: 'thumbs', value: false } }).expect(200);
    expect(added.body).toEqual({ added: 2, skipped: 0, not_found: [], total: 2 });
    expect(await refs(sessions)).toEqual(['session-a', 'session-b']);
    const none = await add(sessions, { feedback: { name: 'no such feedback' } }).expect(200);
    expect(none.body).toEqual({ added: 0, skipped: 0, not_found: [], total: 2 });
  });

  it('refuses feedback for a dataset or run source, beside another selection, or malformed', async () => {
    const upload = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .attach('file', Buffer.from('{"input":"a"}\n'), 'rows.jsonl')
      .expect(201);
    const rows = await queue('dataset_version', upload.body.latest_version.id);
    expectProblem(await add(rows, { feedback: { name: 'thumbs' } }), 400, 'item_selection_invalid');
    const traces = await queue('traces');
    expectProblem(await add(traces, { feedback: { name: 'thumbs' }, ids: ['trace-1'] }), 400, 'item_selection_invalid');
    expectProblem(await add(traces, { feedback: { value: false } }), 400, 'validation_failed');
    expectProblem(await add(traces, { feedback: { name: 'thumbs', min: 'low' } }), 400, 'validation_failed');
    expectProblem(await add(traces, { feedback: { name: 'thumbs', extra: 1 } }), 400, 'validation_failed');
    // A judge is validated on a run's rows: a traces queue has none.
    expectProblem(
      await t.http
        .post(`/review-queues/${traces}/judge-validations`)
        .set(r.member.auth)
        .send({ metric: 'grader', field: 'failed' }),
      422,
      'judge_validation_source_invalid',
    );
  });

  it("writes a traces queue's final labels as the version's next ground truth, merged with the newest", async () => {
    const path = `/traces/versions/${versionId}/ground-truth`;
    await t.http
      .post(path)
      .set(r.member.auth)
      .send({
        items: [
          { trace_id: 'trace-1', expected_output: 'old answer 1' },
          { trace_id: 'trace-2', expected_output: 'old answer 2', notes: 'kept' },
        ],
      })
      .expect(201);
    const traces = await queue('traces');
    await add(traces, { ids: ['trace-1', 'trace-3', 'trace-4'] }).expect(200);
    // trace-3's label has no expected answer, and trace-3 no earlier ground truth: it is left out.
    const labels: Record<string, object> = {
      'trace-1': { failed: true, expected_answer: 'new answer 1' },
      'trace-3': { failed: false },
      'trace-4': { failed: true, expected_answer: 'new answer 4' },
    };
    for (;;) {
      const res = await t.http.post(`/review-queues/${traces}/items:next`).set(r.member.auth).send();
      if (res.status === 204) break;
      await t.http
        .post(`/review-queues/${traces}/items/${res.body.item.id}/labels`)
        .set(r.member.auth)
        .send({ values: labels[res.body.item.ref] })
        .expect(201);
    }
    const exportOf = (body: object, queueId = traces) =>
      t.http.post(`/review-queues/${queueId}/exports`).set(r.member.auth).send(body);
    expectProblem(await exportOf({ ground_truth: { expected_output_field: 'failed' } }), 422, 'export_field_invalid');
    expectProblem(
      await exportOf({ ground_truth: { expected_output_field: 'expected_answer' }, dataset_name: 'x' }),
      409,
      'export_target_invalid',
    );
    expectProblem(await exportOf({ ground_truth: {} }), 400, 'validation_failed');
    const exported = await exportOf({ ground_truth: { expected_output_field: 'expected_answer' } }).expect(201);
    expect(exported.body).toEqual(
      expect.objectContaining({
        version_id: versionId,
        version_number: 1,
        rows: 2,
        missing_rows: ['trace-3'],
        ground_truth_number: 2,
      }),
    );
    const truth = (await t.http.get(path).set(r.viewer.auth).expect(200)).body;
    expect(truth).toEqual(
      expect.objectContaining({ number: 2, item_count: 3, message: expect.stringContaining('review queue') }),
    );
    expect(truth.versions).toEqual([2, 1]);
    const byTrace = Object.fromEntries(truth.items.map((i: { trace_id: string }) => [i.trace_id, i]));
    expect(byTrace).toEqual({
      'trace-1': { trace_id: 'trace-1', expected_output: 'new answer 1', labels: labels['trace-1'] },
      'trace-2': { trace_id: 'trace-2', expected_output: 'old answer 2', notes: 'kept' },
      'trace-4': { trace_id: 'trace-4', expected_output: 'new answer 4', labels: labels['trace-4'] },
    });
    // A sessions queue has no traces to write.
    const sessions = await queue('sessions');
    await add(sessions, { ids: ['session-b'] }).expect(200);
    const next = await t.http.post(`/review-queues/${sessions}/items:next`).set(r.member.auth).send().expect(200);
    await t.http
      .post(`/review-queues/${sessions}/items/${next.body.item.id}/labels`)
      .set(r.member.auth)
      .send({ values: { failed: false } })
      .expect(201);
    expectProblem(
      await exportOf({ ground_truth: { expected_output_field: 'expected_answer' } }, sessions),
      409,
      'export_target_invalid',
    );
  });
});
