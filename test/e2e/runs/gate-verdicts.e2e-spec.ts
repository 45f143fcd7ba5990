import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { runToEnd, sutWithConnection } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type Run = { id: string; state: string };
type Verdict = {
  id: string;
  run_id: string;
  label: string | null;
  project_id: string | null;
  test_plan_id: string | null;
  baseline_run_id: string | null;
  alpha: number;
  verdict: string;
  failures: number;
  warnings: number;
  passed: number;
  skipped: number;
  recorded_by: string | null;
  recorded_at: string;
};
type Recorded = { verdict: string; failures: number; checks: Array<{ kind: string; status: string }>; record: Verdict };

/**
 * Recorded gate verdicts (POST /runs/{run_id}/gate, GET /runs/{run_id}/gate-verdicts, the gate
 * filters of GET /runs) against a local fake SUT: 24 rows, answered right, or (mode `regressed`)
 * wrong on the first twelve, which the run's own pass rule (row pass rate 0.5) still lets pass
 * and the baseline comparison does not.
 */
describe('recorded gate verdicts', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let sutId: string;
  let connectionId: string;
  let evalConfigId: string;
  let mode: 'right' | 'regressed' = 'right';
  const ROWS = Array.from({ length: 24 }, (_, i) => ({ input: `question ${i}`, expected_output: `answer ${i}` }));
  let base: Run;
  let regressed: Run;

  const run = (): Promise<Run> =>
    runToEnd<Run>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      eval_config_id: evalConfigId,
    });

  const record = (runId: string, body: object, auth = r.member.auth) =>
    t.http.post(`/runs/${runId}/gate`).set(auth).send(body);
  /** The ids of the SUT's runs on the dataset that the gate filters keep, newest first. */
  const kept = async (query: object) =>
    (
      await t.http
        .get('/runs')
        .query({ workspace_id: ws, sut_id: sutId, dataset_id: data.datasetId, ...query })
        .set(r.viewer.auth)
        .expect(200)
    ).body.items.map((x: Run) => x.id) as string[];

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const i = Number(/question (\d+)/.exec((req.body as { question: string }).question)?.[1]);
      return { json: { answer: mode === 'regressed' && i < 12 ? `not ${i}` : `answer ${i}` } };
    });
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'questions.json');
    ({ sutId, connectionId } = await sutWithConnection(t, r.member.auth, ws, {
      name: 'bot',
      connection: { name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 4 },
    }));
    evalConfigId = (
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'rule',
          metrics: [{ config_name: 'exact_match' }],
          pass_rule: { min_pass_rate: 0.5 },
        })
        .expect(201)
    ).body.id;
    base = await run();
    mode = 'regressed';
    regressed = await run();
  });
  afterAll(async () => {
    await sut?.close();
    await t?.close();
  });

  it('records the verdict with its label (201), answers the same record for the same inputs (200), and GET records nothing', async () => {
    await t.http.get(`/runs/${base.id}/gate`).set(r.viewer.auth).expect(200);
    expect((await t.http.get(`/runs/${base.id}/gate-verdicts`).set(r.viewer.auth).expect(200)).body).toEqual([]);

    const first = await record(base.id, { label: 'main' }).expect(201);
    const body = first.body as Recorded;
    expect(body).toEqual(
      expect.objectContaining({
        run_id: base.id,
        verdict: 'pass',
        failures: 0,
        test_plan: null,
        baseline_run_id: null,
      }),
    );
    expect(body.record).toEqual({
      id: expect.any(String),
      run_id: base.id,
      label: 'main',
      project_id: null,
      test_plan_id: null,
      test_plan_name: null,
      test_plan_version: null,
      baseline_run_id: null,
      alpha: 0.05,
      min_rows: null,
      verdict: 'pass',
      failures: 0,
      warnings: 0,
      passed: body.checks.filter((c) => c.status === 'pass').length,
      skipped: 0,
      recorded_by: r.member.id,
      recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const again = await record(base.id, { label: 'main' }).expect(200);
    expect(again.body.record).toEqual(body.record);
    expect((await t.http.get(`/runs/${base.id}/gate-verdicts`).set(r.viewer.auth).expect(200)).body).toEqual([
      body.record,
    ]);
  });

  it('finds the last run whose recorded gate passed: not a run whose gate failed, per label', async () => {
    // Against the baseline the regression fails the gate; without one the run's own pass rule lets it pass.
    const failed = (await record(regressed.id, { label: 'main', baseline_run_id: base.id }).expect(201))
      .body as Recorded;
    expect(failed.verdict).toBe('fail');
    expect(failed.checks).toContainEqual(expect.objectContaining({ kind: 'regression', status: 'fail' }));
    expect(failed.record).toEqual(
      expect.objectContaining({ label: 'main', verdict: 'fail', baseline_run_id: base.id, failures: failed.failures }),
    );
    expect(await kept({ gate_verdict: 'pass', gate_label: 'main' })).toEqual([base.id]);
    expect(await kept({ gate_verdict: 'fail', gate_label: 'main' })).toEqual([regressed.id]);

    const nightly = (await record(regressed.id, { label: 'nightly' }).expect(201)).body as Recorded;
    expect(nightly.record.verdict).toBe('pass');
    // Without a label the run's newest verdict counts; with one, its newest verdict of that label.
    expect(await kept({ gate_verdict: 'pass' })).toEqual([regressed.id, base.id]);
    expect(await kept({ gate_verdict: 'pass', gate_label: 'main' })).toEqual([base.id]);
    expect(await kept({ gate_label: 'nightly' })).toEqual([regressed.id]);
    expect(await kept({ gate_verdict: 'pass', gate_label: 'release' })).toEqual([]);
    expect(
      (await t.http.get(`/runs/${regressed.id}/gate-verdicts`).set(r.viewer.auth).expect(200)).body.map(
        (v: Verdict) => [v.label, v.verdict],
      ),
    ).toEqual([
      ['nightly', 'pass'],
      ['main', 'fail'],
    ]);
  });

  it('lets viewers read and members record; refuses what is not ended, not valid or not in the workspace', async () => {
    expectProblem(await record(base.id, { label: 'main' }, r.viewer.auth), 403);
    await t.http.get(`/runs/${base.id}/gate-verdicts`).set(r.viewer.auth).expect(200);
    // A caller outside the workspace neither records nor reads, nor finds the runs through the filters.
    expectProblem(await record(base.id, {}, r.outsider.auth), 403);
    expectProblem(await t.http.get(`/runs/${base.id}/gate-verdicts`).set(r.outsider.auth), 403);
    expectProblem(
      await t.http.get('/runs').query({ workspace_id: ws, gate_verdict: 'pass' }).set(r.outsider.auth),
      403,
    );
    const elsewhere = await t.factory.workspaceWithRoles();
    expect(
      (await t.http.get('/runs').query({ gate_verdict: 'pass' }).set(elsewhere.owner.auth).expect(200)).body.items,
    ).toEqual([]);
    // A run of another workspace is no baseline: 404, as for a run that does not exist.
    const theirs = await uploadRows(t, elsewhere.member.auth, elsewhere.workspace.id, ROWS.slice(0, 2));
    const offline = await sutWithConnection(t, elsewhere.member.auth, elsewhere.workspace.id, {
      name: 'bot',
      connection: { name: 'uploads', kind: 'offline' },
    });
    const waiting = (
      await t.http
        .post('/runs')
        .set(elsewhere.member.auth)
        .send({
          workspace_id: elsewhere.workspace.id,
          dataset_id: theirs.datasetId,
          sut_id: offline.sutId,
          connection_id: offline.connectionId,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body.id as string;
    expectProblem(await record(regressed.id, { baseline_run_id: waiting }), 404);
    expectProblem(await record(regressed.id, { baseline_run_id: '00000000-0000-4000-8000-000000000000' }), 404);
    // A run that has not ended is judged by GET, never recorded.
    expectProblem(await record(waiting, { label: 'main' }, elsewhere.member.auth), 409, 'gate_run_not_finished');
    expect((await t.http.get(`/runs/${waiting}/gate-verdicts`).set(elsewhere.viewer.auth).expect(200)).body).toEqual(
      [],
    );
    for (const bad of [
      { label: '' },
      { label: 'has space' },
      { label: 'x'.repeat(65) },
      { alpha: 2 },
      { format: 'junit' },
    ])
      expectProblem(await record(base.id, bad), 400, 'validation_failed');
    for (const bad of [{ gate_verdict: 'maybe' }, { gate_label: '-main' }])
      expectProblem(
        await t.http
          .get('/runs')
          .query({ workspace_id: ws, ...bad })
          .set(r.viewer.auth),
        400,
        'validation_failed',
      );
    // Nothing of the refused requests was recorded.
    expect((await t.http.get(`/runs/${base.id}/gate-verdicts`).set(r.viewer.auth).expect(200)).body).toHaveLength(1);
  });
});
