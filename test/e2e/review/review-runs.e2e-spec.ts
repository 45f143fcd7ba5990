import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReviewLabelsService } from '#src/modules/review/review-labels.service.js';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { runToEnd } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** A queue over a run's rows: its failures, a filter over its dataset version, ids; the final labels other families read. */
describe('review queues over a run', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let runId: string;
  let queueId: string;

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    // q3 and q5 are answered wrong: exact_match fails them.
    sut.on('POST', '/answer', (req) => {
      const input = (req.body as { input: string }).input;
      return { json: { output: ['q3', 'q5'].includes(input) ? 'wrong' : `echo ${input}` } };
    });
    r = await t.factory.workspaceWithRoles();
    const ws = r.workspace.id;
    data = await uploadRows(
      t,
      r.member.auth,
      ws,
      Array.from({ length: 8 }, (_, i) => ({ input: `q${i}`, expected_output: `echo q${i}` })),
    );
    const sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'echo' }).expect(201))
      .body.id;
    const connectionId = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'api', kind: 'http', http: { url: sut.url('/answer') } })
        .expect(201)
    ).body.id;
    const run = await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['exact_match'],
    });
    expect(run.state).toBe('succeeded');
    runId = run.id;
    queueId = (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'Run failures',
          rubric: { fields: [{ name: 'judge_right', type: 'pass_fail', required: true }] },
          source: { kind: 'run', id: runId },
        })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await sut?.close();
    await t?.close();
  });

  it("adds a run's failures with their output and verdicts, then rows by a filter and by ids", async () => {
    const failures = await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ run_failures: { metric: 'exact_match' } })
      .expect(200);
    expect(failures.body).toEqual({ added: 2, skipped: 0, not_found: [], total: 2 });
    const items = (await t.http.get(`/review-queues/${queueId}/items`).set(r.viewer.auth).expect(200)).body.items;
    expect(items.map((i: { context: { input: string } }) => i.context.input)).toEqual(['q3', 'q5']);
    expect(items[0]).toEqual(expect.objectContaining({ run_id: runId }));
    // Blind to the run's verdicts unless the queue shows them: labels seen beside a judge's verdict lean towards it.
    expect(items[0].context).toEqual({ input: 'q3', expected_output: 'echo q3', output: 'wrong' });
    const shown = await t.http
      .patch(`/review-queues/${queueId}`)
      .set(r.member.auth)
      .send({ show_verdicts: true })
      .expect(200);
    expect(shown.body.show_verdicts).toBe(true);
    const withVerdicts = (await t.http.get(`/review-queues/${queueId}/items`).set(r.viewer.auth).expect(200)).body
      .items;
    expect(withVerdicts[0].context).toEqual(
      expect.objectContaining({
        expected_output: 'echo q3',
        output: 'wrong',
        passed: false,
        scores: { exact_match: expect.objectContaining({ passed: false }) },
      }),
    );
    await t.http.patch(`/review-queues/${queueId}`).set(r.member.auth).send({ show_verdicts: false }).expect(200);
    const filtered = await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'input', op: 'in', value: ['q1', 'q3'] } })
      .expect(200);
    expect(filtered.body).toEqual({ added: 1, skipped: 1, not_found: [], total: 3 });
    const unknown = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a99';
    const byId = await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ ids: [items[1].ref, unknown] })
      .expect(200);
    expect(byId.body).toEqual({ added: 0, skipped: 1, not_found: [unknown], total: 3 });
  });

  it('hands other families the final labels with their run and row references', async () => {
    for (;;) {
      const res = await t.http.post(`/review-queues/${queueId}/items:next`).set(r.member.auth).send();
      if (res.status === 204) break;
      await t.http
        .post(`/review-queues/${queueId}/items/${res.body.item.id}/labels`)
        .set(r.member.auth)
        .send({ values: { judge_right: res.body.item.context.input !== 'q5' } })
        .expect(201);
    }
    const finals = await t.app.get(ReviewLabelsService).finalLabels(r.workspace.id, queueId);
    expect(finals).toEqual(
      expect.objectContaining({
        queueId,
        source: { kind: 'run', id: runId },
        rubricVersion: 1,
        rubric: [{ name: 'judge_right', type: 'pass_fail', required: true }],
      }),
    );
    expect(finals!.items).toHaveLength(3);
    expect(finals!.items[0]).toEqual(
      expect.objectContaining({
        reference: { runId, rowId: expect.any(String), traceId: null, sessionId: null },
        values: { judge_right: true },
        source: 'consensus',
      }),
    );
    expect(await t.app.get(ReviewLabelsService).finalLabels(r.workspace.id, runId)).toBeNull();
    const other = await t.factory.workspaceWithRoles();
    expect(await t.app.get(ReviewLabelsService).finalLabels(other.workspace.id, queueId)).toBeNull();
    // In place: the run's dataset gets the label column in its next (candidate) version.
    const exported = await t.http.post(`/review-queues/${queueId}/exports`).set(r.member.auth).send({}).expect(201);
    expect(exported.body).toEqual(
      expect.objectContaining({ dataset_id: data.datasetId, rows: 3, version_number: 2, missing_rows: [] }),
    );
    const rows = await t.http
      .post(`/datasets/${data.datasetId}/versions/${exported.body.version_id}/query`)
      .set(r.viewer.auth)
      .send({ filter: { field: 'label_judge_right', op: 'is_null', value: false } })
      .expect(200);
    expect(
      rows.body.items.map((row: { input: string; label_judge_right: boolean }) => [row.input, row.label_judge_right]),
    ).toEqual([
      ['q1', true],
      ['q3', true],
      ['q5', false],
    ]);
    // The agreement of one reviewer: no pairs, every figure null with its reason.
    const agreement = await t.http.get(`/review-queues/${queueId}/agreement`).set(r.viewer.auth).expect(200);
    expect(agreement.body.fields[0].cohens_kappa).toEqual({ value: null, interval: null, reason: expect.any(String) });
    expectProblem(
      await t.http.get(`/review-queues/${queueId}/agreement`).query({ confidence: 2 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
  });
});
