import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows } from '../../utils/datasets.js';
import type { FakeUpstream } from '../../utils/fake-upstream.js';
import { exportAnswers, exportingWorkspace, gradingWorld, until } from '../../utils/online.js';
import { endedRun, sutWithConnection } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const GOOD = 'Your order ships tomorrow.';
const BAD = 'BAD: I cannot help with that.';

interface ResultItem {
  row_id: string;
  status: string;
  output: string | null;
  passed: boolean | null;
  row: Record<string, unknown>;
  scores: Record<string, { score: number | null; passed: boolean | null }>;
}

/**
 * Runs over recorded traces: production traces (exported by the OpenTelemetry SDK) are the rows,
 * scored with the usual metrics and judges without calling anything, and two such runs compare
 * with the usual diff and statistics, rows paired by trace.
 */
describe('runs: over recorded traces', () => {
  let t: TestApp;
  let judge: FakeUpstream;
  let world: Awaited<ReturnType<typeof exportingWorkspace>>;
  let datasetId: string;
  let sut: { sutId: string; connectionId: string };
  let ids: Map<number, string>;

  // The dataset shows no version until its first landing has written one.
  const spansLanded = (n: number) =>
    until(
      `${n} spans landed`,
      async () => {
        const res = await t.http.post(`/datasets/${datasetId}/query`).set(world.r.viewer.auth).send({ limit: 1 });
        return res.status === 200 ? (res.body.total as number) : res.status;
      },
      (total) => total === n,
      60_000,
    );
  const currentVersion = async () =>
    (await t.http.get(`/datasets/${datasetId}`).set(world.r.viewer.auth).expect(200)).body.latest_version.id as string;
  const results = async (runId: string) =>
    (await t.http.post(`/runs/${runId}/results/query`).set(world.r.viewer.auth).send({ limit: 500 }).expect(200)).body
      .items as ResultItem[];

  beforeAll(async () => {
    t = await startTestApp();
    world = await exportingWorkspace(t);
    const { r } = world;
    judge = await gradingWorld(t, { admin: r.admin.auth, member: r.member.auth }, r.workspace.id);
    ids = await exportAnswers({
      url: world.url,
      key: world.key,
      dataset: 'support-bot-production',
      from: 0,
      to: 30,
      answer: (i) => (i % 5 === 0 ? BAD : GOOD),
    });
    const list = await t.http.get('/datasets').query({ workspace_id: r.workspace.id }).set(r.viewer.auth).expect(200);
    datasetId = list.body.items.find((d: { name: string }) => d.name === 'support-bot-production').id;
    await spansLanded(60);
    sut = await sutWithConnection(t, r.member.auth, r.workspace.id, {
      name: 'support-bot',
      connection: { name: 'production', kind: 'offline' },
    });
  });
  afterAll(async () => {
    await judge?.close();
    await t?.close();
  });

  const start = (versionId: string, extra: Record<string, unknown> = {}) =>
    t.http
      .post('/runs')
      .set(world.r.member.auth)
      .send({
        workspace_id: world.r.workspace.id,
        dataset_id: datasetId,
        version_id: versionId,
        sut_id: sut.sutId,
        connection_id: sut.connectionId,
        metrics: ['grader', 'mentions_order'],
        traces: { level: 'trace' },
        ...extra,
      });

  it('scores each recorded trace as a row, with judges, without calling anything, and diffs two versions by trace', async () => {
    const { r } = world;
    // Yesterday's traffic is a sealed version.
    await t.http.post(`/traces/datasets/${datasetId}/live:seal`).set(r.member.auth).expect(200);
    const versionA = await currentVersion();
    const started = await start(versionA).expect(202);
    expect(started.body.state).toBe('queued');
    const base = await endedRun<{ id: string; state: string; summary: { pass_rate: number } }>(
      t,
      r.viewer.auth,
      started.body.id,
    );
    expect(base.state).toBe('succeeded');
    const items = await results(base.id);
    expect(items).toHaveLength(30);
    const byTrace = new Map(items.map((i) => [i.row.trace_id, i]));
    for (const [i, traceId] of ids) {
      const item = byTrace.get(traceId)!;
      expect(item.output).toBe(i % 5 === 0 ? BAD : GOOD);
      expect(item.row.input).toBe(`question ${i}`);
      // The judge fails the planted bad answers, and only them; the deterministic metric agrees.
      expect(item.scores.grader.passed).toBe(i % 5 !== 0);
      expect(item.scores.mentions_order.passed).toBe(i % 5 !== 0);
      expect(item.passed).toBe(i % 5 !== 0);
    }
    expect(judge.received('POST', '/v1/chat/completions')).toHaveLength(30);
    expect(base.summary.pass_rate).toBeCloseTo(24 / 30, 10);

    // Today's traffic lands: the next version holds yesterday's traces and today's.
    const today = await exportAnswers({
      url: world.url,
      key: world.key,
      dataset: 'support-bot-production',
      from: 30,
      to: 60,
      answer: (i) => (i % 2 === 0 ? BAD : GOOD),
    });
    await spansLanded(120);
    const versionB = await currentVersion();
    expect(versionB).not.toBe(versionA);
    const candidate = await endedRun<{ id: string; state: string; summary: { pass_rate: number } }>(
      t,
      r.viewer.auth,
      (await start(versionB).expect(202)).body.id,
    );
    expect(candidate.state).toBe('succeeded');
    expect(candidate.summary.pass_rate).toBeCloseTo((24 + 15) / 60, 10);

    // Rows pair by trace: yesterday's 30 are in both runs, today's 30 only in the candidate.
    const diff = await t.http
      .get('/runs/diff')
      .query({ base: base.id, candidate: candidate.id, limit: 100 })
      .set(r.viewer.auth)
      .expect(200);
    expect(diff.body.summary).toMatchObject({ new: 30, unchanged: 30, regressed: 0, improved: 0, missing: 0 });
    expect(diff.body.statistics.matched_rows).toBe(30);
    const added = diff.body.rows.filter((row: { status: string }) => row.status === 'new');
    expect(new Set(added.map((row: { row_id: string }) => row.row_id)).size).toBe(30);
    expect(today.size).toBe(30);

    // A rerun scores the same recorded answers again (the judge is called again), and calls nothing else.
    const rerun = await t.http.post(`/runs/${base.id}/rerun`).set(r.member.auth).send({}).expect(202);
    const again = await endedRun<{ id: string; state: string; summary: { pass_rate: number } }>(
      t,
      r.viewer.auth,
      rerun.body.id,
    );
    expect(again.state).toBe('succeeded');
    expect(again.summary.pass_rate).toBeCloseTo(24 / 30, 10);
  });

  it('refuses what a run over recorded traces cannot be', async () => {
    const { r } = world;
    const version = await currentVersion();
    const cases = await uploadRows(t, r.member.auth, r.workspace.id, [{ input: 'a question' }], 'cases.json');
    const testCases = await t.http
      .post('/runs')
      .set(r.member.auth)
      .send({
        workspace_id: r.workspace.id,
        dataset_id: cases.datasetId,
        sut_id: sut.sutId,
        connection_id: sut.connectionId,
        metrics: ['mentions_order'],
        traces: {},
      })
      .expect(400);
    expect(testCases.body.error_code).toBe('trace_dataset_invalid');
    const sampled = await start(version, { sample: { size: 5 } }).expect(400);
    expect(sampled.body).toMatchObject({ error_code: 'run_input_invalid' });
    const online = await sutWithConnection(t, r.member.auth, r.workspace.id, {
      name: 'support-bot-staging',
      connection: { name: 'staging', kind: 'http', http: { url: 'http://127.0.0.1:9/answer', method: 'POST' } },
    });
    const calling = await start(version, { sut_id: online.sutId, connection_id: online.connectionId }).expect(400);
    expect(calling.body).toMatchObject({ error_code: 'run_input_invalid' });
    const badMapping = await start(version, {
      traces: { mapping: { output: { pick: 'somewhere', field: 'output' } } },
    });
    expect(badMapping.status).toBe(400);
  });
});
