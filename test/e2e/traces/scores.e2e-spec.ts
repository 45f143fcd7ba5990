import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { type NewTraceScore, TraceScoresService } from '#src/modules/traces/scores/scores.service.js';
import { uploadRows } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';
import { type ReferenceBucket, TRACE_SCORES_REFERENCE as REF } from '../../statistics/trace-scores-reference.js';

const EVALUATOR = 'answer-quality';
const METRIC = 'helpfulness';
const TOLERANCE = 1e-9;

/** One LLM span, the whole of its trace, as a plain span record. */
const span = (traceId: string, startTime: string, spanId = 'c0de000000000001') => ({
  trace_id: traceId,
  span_id: spanId,
  name: 'ChatCompletion',
  start_time: startTime,
  end_time: new Date(Date.parse(startTime) + 400).toISOString(),
  attributes: { 'openinference.span.kind': 'LLM', 'input.value': 'hi', 'output.value': 'hello' },
});

/** A bucket as the service answers it, against the reference's numbers (counts exact, the rest within 1e-9). */
function expectBucket(got: Record<string, any>, want: ReferenceBucket, what: string): void {
  const { pass_rate, pass_rate_interval, mean, mean_interval, sd, ...exact } = want;
  expect({ what, ...pick(got, Object.keys(exact)) }).toEqual({ what, ...exact });
  const close = (a: number | null | undefined, b: number | null) =>
    b === null ? a === null : typeof a === 'number' && Math.abs(a - b) < TOLERANCE;
  const numbers = {
    pass_rate: close(got.pass_rate, pass_rate),
    pass_low: close(got.pass_rate_interval?.low ?? null, pass_rate_interval?.low ?? null),
    pass_high: close(got.pass_rate_interval?.high ?? null, pass_rate_interval?.high ?? null),
    mean: close(got.mean, mean),
    mean_low: close(got.mean_interval?.low ?? null, mean_interval?.low ?? null),
    mean_high: close(got.mean_interval?.high ?? null, mean_interval?.high ?? null),
    sd: close(got.sd, sd),
  };
  expect({ what, got, numbers }).toEqual({
    what,
    got,
    numbers: Object.fromEntries(Object.keys(numbers).map((k) => [k, true])),
  });
}

function pick(o: Record<string, any>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

describe('trace scores', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let other: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let datasetId: string;
  let versionId: string;
  let otherDatasetId: string;
  let evaluatorId: string;
  const byTrace = new Map(REF.scores.map((s) => [s.trace_id, s]));
  const failedTraces = REF.scores.filter((s) => s.passed === false).map((s) => s.trace_id);

  const record = (rows: NewTraceScore[]) =>
    t.app.get(TransactionRunner).run(() => t.app.get(TraceScoresService).record(rows));

  /** Lands spans into a trace dataset of the workspace; answers the dataset and version. */
  async function land(
    auth: Record<string, string>,
    workspaceId: string,
    name: string,
    records: unknown[],
  ): Promise<{ dataset_id: string; version_id: string }> {
    const run = (
      await t.http
        .post('/traces/land:inline')
        .set(auth)
        .send({ workspace_id: workspaceId, dataset_name: name, records })
        .expect(202)
    ).body;
    const done = await landingSettled(t, auth, run.id);
    expect(done.state).toBe('succeeded');
    return done as { dataset_id: string; version_id: string };
  }

  const scoreRow = (
    trace: (typeof REF.traces)[number],
    overrides: Partial<NewTraceScore> = {},
    dataset = datasetId,
    workspace = ws,
  ): NewTraceScore => {
    const s = byTrace.get(trace.trace_id)!;
    return {
      workspace_id: workspace,
      dataset_id: dataset,
      evaluator_id: evaluatorId,
      evaluator_name: EVALUATOR,
      evaluator_version: 1,
      level: 'trace',
      target_key: trace.trace_id,
      trace_id: trace.trace_id,
      session_id: `session-${trace.trace_id.slice(-1)}`,
      metric: METRIC,
      score: s.score,
      passed: s.passed,
      label: s.label,
      reason: s.error ? null : 'graded against the question',
      error: s.error,
      service_name: trace.service,
      model: trace.model,
      cost_usd: 0.0002,
      observed_at: new Date(trace.start_time),
      ...overrides,
    };
  };

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    other = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    ({ dataset_id: datasetId, version_id: versionId } = await land(
      r.member.auth,
      ws,
      'scored-traces',
      REF.traces.map((trace) => span(trace.trace_id, trace.start_time)),
    ));
    // The evaluator the scores name: the workspace's own (a filter naming another's is a 404).
    evaluatorId = (
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: datasetId,
          name: EVALUATOR,
          metrics: [{ name: 'exact_match' }],
          state: 'paused',
        })
        .expect(201)
    ).body.id;
    for (const tag of ['vip', 'beta'])
      await t.http
        .put(`/datasets/${datasetId}/versions/${versionId}/trace-tags`)
        .set(r.member.auth)
        .send({ trace_ids: REF.traces.filter((x) => x.tags.includes(tag)).map((x) => x.trace_id), tags: [tag] })
        .expect(200);
    expect(await record(REF.traces.map((trace) => scoreRow(trace)))).toBe(REF.traces.length);
    // A retry of the same scores keeps none twice.
    expect(await record(REF.traces.slice(0, 3).map((trace) => scoreRow(trace)))).toBe(0);
    // Another workspace scores the same trace ids with the same evaluator name: never seen from this one.
    otherDatasetId = (
      await land(other.member.auth, other.workspace.id, 'their-traces', [span(REF.traces[0].trace_id, REF.from)])
    ).dataset_id;
    await record([
      scoreRow(
        REF.traces[0],
        { evaluator_id: randomUUID(), score: 0.01, passed: false },
        otherDatasetId,
        other.workspace.id,
      ),
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const list = (query: Record<string, unknown>, auth = r.viewer.auth) =>
    t.http
      .get('/traces/scores')
      .query({ workspace_id: ws, ...query })
      .set(auth);
  const traceIdsOf = (page: { items: Array<{ trace_id: string }> }) => page.items.map((i) => i.trace_id).sort();
  const allOf = (predicate: (s: (typeof REF.scores)[number]) => boolean) =>
    REF.scores
      .filter(predicate)
      .map((s) => s.trace_id)
      .sort();

  it('lists score records newest observed first, paged, with every member', async () => {
    const page = (await list({ page_size: 200 }).expect(200)).body;
    expect(page.total).toBe(REF.traces.length);
    const observed = page.items.map((i: { observed_at: string }) => i.observed_at);
    expect(observed).toEqual([...observed].sort().reverse());
    const first = REF.traces.find((x) => x.start_time === observed[0])!;
    expect(page.items[0]).toEqual({
      id: expect.any(String),
      workspace_id: ws,
      dataset_id: datasetId,
      evaluator_id: evaluatorId,
      evaluator_name: EVALUATOR,
      evaluator_version: 1,
      level: 'trace',
      target_key: first.trace_id,
      trace_id: first.trace_id,
      span_id: null,
      session_id: `session-${first.trace_id.slice(-1)}`,
      metric: METRIC,
      score: byTrace.get(first.trace_id)!.score,
      passed: byTrace.get(first.trace_id)!.passed,
      label: byTrace.get(first.trace_id)!.label,
      reason: expect.anything(),
      error: byTrace.get(first.trace_id)!.error,
      detail: null,
      service_name: first.service,
      model: first.model,
      cost_usd: 0.0002,
      observed_at: first.start_time,
      scored_at: expect.any(String),
    });
    const second = (await list({ page: 2, page_size: 7 }).expect(200)).body;
    expect(second).toMatchObject({ total: REF.traces.length, page: 2, page_size: 7 });
    expect(second.items.map((i: { id: string }) => i.id)).toEqual(
      page.items.slice(7, 14).map((i: { id: string }) => i.id),
    );
    // An API key of the workspace reads it without naming it.
    const key = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(r.admin.auth)
        .send({ name: 'dashboards', role: 'viewer' })
        .expect(201)
    ).body.key;
    expect(
      (
        await t.http
          .get('/traces/scores')
          .set({ Authorization: `Bearer ${key}` })
          .expect(200)
      ).body.total,
    ).toBe(REF.traces.length);
  });

  it('filters by each member', async () => {
    const ids = async (query: Record<string, unknown>) =>
      traceIdsOf((await list({ page_size: 200, ...query }).expect(200)).body);
    const everyTrace = allOf(() => true);
    expect(await ids({ dataset_id: datasetId })).toEqual(everyTrace);
    expect(await ids({ evaluator_id: evaluatorId })).toEqual(everyTrace);
    expect((await list({ evaluator_id: randomUUID() })).status).toBe(404);
    expect(await ids({ evaluator_name: EVALUATOR, metric: METRIC })).toEqual(everyTrace);
    expect(await ids({ metric: 'faithfulness' })).toEqual([]);
    expect(await ids({ trace_id: REF.traces[4].trace_id })).toEqual([REF.traces[4].trace_id]);
    expect(await ids({ session_id: 'session-1' })).toEqual(everyTrace.filter((id) => id.endsWith('1')));
    expect(await ids({ passed: 'false' })).toEqual(allOf((s) => s.passed === false));
    expect(await ids({ passed: 'true' })).toEqual(allOf((s) => s.passed === true));
    expect(await ids({ min_score: 0.4, max_score: 0.7 })).toEqual(
      allOf((s) => s.score !== null && s.score >= 0.4 && s.score <= 0.7),
    );
    expect(await ids({ has_error: 'true' })).toEqual(allOf((s) => s.error !== null));
    expect(await ids({ has_error: 'false' })).toEqual(allOf((s) => s.error === null));
    const day2 = '2026-11-02T00:00:00.000Z';
    const day3 = '2026-11-03T00:00:00.000Z';
    expect(await ids({ observed_after: day2, observed_before: day3 })).toEqual(
      REF.traces
        .filter((x) => x.start_time >= day2 && x.start_time < day3)
        .map((x) => x.trace_id)
        .sort(),
    );
  });

  it('refuses bad filters with 4xx problems', async () => {
    expectProblem(await list({ passed: 'maybe' }), 400, 'validation_failed');
    expectProblem(await list({ min_score: 'NaN' }), 400, 'validation_failed');
    expectProblem(await list({ has_error: 1 }), 400, 'validation_failed');
    expectProblem(await list({ observed_after: 'yesterday' }), 400, 'validation_failed');
    expectProblem(await list({ evaluator_id: 'x' }), 400, 'validation_failed');
    expectProblem(await list({ page_size: 201 }), 400, 'validation_failed');
    expectProblem(await list({ sort: 'score' }), 400, 'validation_failed');
    // A dataset of another workspace is not found; a test-case dataset holds no scores.
    expectProblem(await list({ dataset_id: otherDatasetId }), 404, 'not_found');
    expectProblem(await list({ dataset_id: randomUUID() }), 404, 'not_found');
    const cases = await uploadRows(t, r.member.auth, ws, [{ q: 'a' }], 'cases.json');
    expect((await list({ dataset_id: cases.datasetId }).expect(200)).body.total).toBe(0);
  });

  describe('aggregates', () => {
    const aggregate = (query: Record<string, unknown>, auth = r.viewer.auth) =>
      t.http
        .get('/traces/scores:aggregate')
        .query({ workspace_id: ws, evaluator_id: evaluatorId, metric: METRIC, from: REF.from, to: REF.to, ...query })
        .set(auth);

    it.each(REF.aggregates.map((a) => [a.bucket, a.group_by ?? 'no group', a] as const))(
      'by %s and %s: the counts and intervals the Python reference computed',
      async (bucket, _, reference) => {
        const res = await aggregate({ bucket, ...(reference.group_by ? { group_by: reference.group_by } : {}) }).expect(
          200,
        );
        expect(res.body).toMatchObject({
          evaluator_id: evaluatorId,
          metric: METRIC,
          from: REF.from,
          to: REF.to,
          bucket,
          group_by: reference.group_by,
        });
        expect(res.body.buckets).toHaveLength(reference.buckets.length);
        reference.buckets.forEach((want, i) =>
          expectBucket(res.body.buckets[i], want, `${bucket}/${want.group}/${want.start}`),
        );
      },
    );

    it('counts a narrower window, one dataset, and nothing for an unknown evaluator or metric', async () => {
      const day2 = (await aggregate({ from: '2026-11-02T00:00:00Z', to: '2026-11-03T00:00:00Z' }).expect(200)).body;
      const reference = REF.aggregates.find((a) => a.bucket === 'day' && a.group_by === null)!.buckets[1];
      expectBucket(
        day2.buckets[0],
        { ...reference, start: '2026-11-02T00:00:00.000Z', end: '2026-11-03T00:00:00.000Z' },
        'day 2',
      );
      const all = REF.aggregates[0].buckets[0];
      expectBucket((await aggregate({ dataset_id: datasetId }).expect(200)).body.buckets[0], all, 'one dataset');
      expectBucket((await aggregate({ evaluator_version: 1 }).expect(200)).body.buckets[0], all, 'version 1');
      expect((await aggregate({ evaluator_version: 2 }).expect(200)).body.buckets).toEqual([]);
      expect((await aggregate({ metric: 'faithfulness' }).expect(200)).body.buckets).toEqual([]);
      expectProblem(await aggregate({ evaluator_id: randomUUID() }), 404);
    });

    it('refuses a window backwards or of too many buckets, and bad members', async () => {
      expectProblem(await aggregate({ from: REF.to, to: REF.from }), 400, 'trace_score_window_invalid');
      expectProblem(await aggregate({ to: REF.from }), 400, 'trace_score_window_invalid');
      // 60 days of hours: 1440 buckets, past 1000; of days, 60.
      const far = { from: '2026-09-01T00:00:00Z', to: '2026-10-31T00:00:00Z' };
      const refused = await aggregate({ ...far, bucket: 'hour' });
      expectProblem(refused, 400, 'trace_score_window_invalid');
      expect(refused.body.field).toBe('bucket');
      await aggregate({ ...far, bucket: 'day' }).expect(200);
      expectProblem(await aggregate({ bucket: 'week' }), 400, 'validation_failed');
      expectProblem(await aggregate({ group_by: 'user' }), 400, 'validation_failed');
      expectProblem(await aggregate({ evaluator_version: 0 }), 400, 'validation_failed');
      expectProblem(await aggregate({ evaluator_id: 'answer-quality' }), 400, 'validation_failed');
      expectProblem(await aggregate({ metric: undefined }), 400, 'validation_failed');
      expectProblem(await aggregate({ from: '2026-11-01', to: 'soon' }), 400, 'validation_failed');
      expectProblem(await aggregate({ dataset_id: otherDatasetId }), 404, 'not_found');
    });
  });

  describe('with a trace', () => {
    const base = () => `/datasets/${datasetId}/versions/${versionId}/trace-enrichment`;
    const results = async (query: Record<string, unknown> = {}) =>
      (
        await t.http
          .get(`${base()}/results`)
          .query({ limit: 100, ...query })
          .set(r.viewer.auth)
          .expect(200)
      ).body;

    beforeAll(async () => {
      for (let i = 0; i < 400; i++) {
        if ((await t.http.get(base()).set(r.viewer.auth).expect(200)).body.state === 'succeeded') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A second version of the evaluator rescored the first trace: its newer score is the one shown.
      await record([
        scoreRow(REF.traces[0], { evaluator_version: 2, score: 0.05, passed: false, label: 'unhelpful' }),
        scoreRow(REF.traces[0], { evaluator_name: 'tone', metric: 'politeness', score: 1, passed: true, label: null }),
      ]);
    });

    it("shows each trace's newest score per evaluator and metric beside its enrichment", async () => {
      const items = (await results()).items as Array<{ trace_id: string; scores: Record<string, unknown> }>;
      expect(items).toHaveLength(REF.traces.length);
      const scores = Object.fromEntries(items.map((i) => [i.trace_id, i.scores]));
      expect(scores[REF.traces[0].trace_id]).toEqual({
        [EVALUATOR]: { [METRIC]: { score: 0.05, passed: false, label: 'unhelpful', evaluator_version: 2 } },
        tone: { politeness: { score: 1, passed: true, label: null, evaluator_version: 1 } },
      });
      const s = byTrace.get(REF.traces[1].trace_id)!;
      expect(scores[REF.traces[1].trace_id]).toEqual({
        [EVALUATOR]: { [METRIC]: { score: s.score, passed: s.passed, label: s.label, evaluator_version: 1 } },
      });
    });

    it('selects traces by their scores', async () => {
      const ids = async (query: Record<string, unknown>) =>
        ((await results(query)).items as Array<{ trace_id: string }>).map((i) => i.trace_id).sort();
      const failedNow = [...new Set([...failedTraces, REF.traces[0].trace_id])].sort();
      expect(await ids({ score_evaluator: EVALUATOR, score_passed: 'false' })).toEqual(failedNow);
      expect(await ids({ score_metric: 'politeness' })).toEqual([REF.traces[0].trace_id]);
      expect(await ids({ score_evaluator: 'tone', score_passed: 'false' })).toEqual([]);
      // The newest version's 0.05, not the first version's score.
      expect(await ids({ score_metric: METRIC, score_max: 0.1 })).toEqual(
        [
          REF.traces[0].trace_id,
          ...allOf((x) => x.score !== null && x.score <= 0.1 && x.trace_id !== REF.traces[0].trace_id),
        ].sort(),
      );
      expect(await ids({ score_evaluator: 'nobody' })).toEqual([]);
      expectProblem(
        await t.http.get(`${base()}/results`).query({ score_passed: 'no' }).set(r.viewer.auth),
        400,
        'validation_failed',
      );
      expectProblem(
        await t.http.get(`${base()}/results`).query({ score_max: 'low' }).set(r.viewer.auth),
        400,
        'validation_failed',
      );
    });

    it('matches spans by their trace’s score in the query language, names bound, NOT exact', async () => {
      const query = async (filter: unknown, path = `/datasets/${datasetId}/query`) => {
        const versioned = path.includes('/versions/');
        return t.http
          .post(path)
          .set(r.viewer.auth)
          .send({ filter, limit: 200, ...(versioned ? {} : { version_id: versionId }) });
      };
      const traceIds = async (filter: unknown, path?: string) => {
        const res = await query(filter, path);
        expect([res.status, res.body.detail]).toEqual([200, undefined]);
        return (res.body.items as Array<{ trace_id: string }>).map((row) => row.trace_id).sort();
      };
      const failed = { score: { evaluator: EVALUATOR, metric: METRIC }, field: 'passed', op: 'eq', value: false };
      const failedNow = [...new Set([...failedTraces, REF.traces[0].trace_id])].sort();
      expect(await traceIds(failed)).toEqual(failedNow);
      expect(await traceIds(failed, `/datasets/${datasetId}/versions/${versionId}/query`)).toEqual(failedNow);
      // NOT is exact: every other span, those whose score has no verdict (an error) included.
      expect(await traceIds({ not: failed })).toEqual(allOf((s) => !failedNow.includes(s.trace_id)));
      expect(
        await traceIds({ score: { evaluator: EVALUATOR, metric: METRIC }, field: 'score', op: 'gte', value: 0.8 }),
      ).toEqual(allOf((s) => s.score !== null && s.score >= 0.8 && s.trace_id !== REF.traces[0].trace_id));
      expect(
        await traceIds({
          and: [
            { score: { evaluator: EVALUATOR, metric: METRIC }, field: 'label', op: 'eq', value: 'helpful' },
            { score: { evaluator: 'tone', metric: 'politeness' }, field: 'score', op: 'eq', value: 1 },
          ],
        }),
      ).toEqual([]);
      expect(
        await traceIds({ score: { evaluator: EVALUATOR, metric: METRIC }, field: 'label', op: 'is_null' }),
      ).toEqual(allOf((s) => s.error !== null));
      // A hostile name is a value like any other: it matches no score and changes nothing.
      const hostile = "answer-quality'); DELETE FROM trace_scores; --";
      expect(
        await traceIds({ score: { evaluator: hostile, metric: METRIC }, field: 'score', op: 'gte', value: 0 }),
      ).toEqual([]);
      expect(
        await traceIds({
          not: { score: { evaluator: hostile, metric: hostile }, field: 'passed', op: 'eq', value: true },
        }),
      ).toHaveLength(REF.traces.length);
      expect((await list({ page_size: 1 }).expect(200)).body.total).toBe(REF.traces.length + 2);
      for (const [filter, pointer] of [
        [
          { score: { evaluator: EVALUATOR, metric: METRIC, version: 2 }, field: 'score', op: 'gt', value: 0 },
          '/filter/score/version',
        ],
        [{ score: { evaluator: EVALUATOR, metric: METRIC }, field: 'reason', op: 'eq', value: 'x' }, '/filter/field'],
        [{ score: { evaluator: '', metric: METRIC }, field: 'score', op: 'gt', value: 0 }, '/filter/score/evaluator'],
        [{ score: [EVALUATOR, METRIC], field: 'score', op: 'gt', value: 0 }, '/filter/score'],
        [{ score: { evaluator: EVALUATOR, metric: METRIC }, field: 'score', op: 'near', value: 0 }, '/filter/op'],
      ] as const) {
        const res = await query(filter);
        expectProblem(res, 400, 'invalid_filter');
        expect(res.body.pointer).toBe(pointer);
      }
    });
  });

  it("keeps workspaces apart: another workspace's scores are never seen", async () => {
    expectProblem(await list({}, other.admin.auth), 403, 'forbidden');
    expectProblem(await list({}, r.outsider.auth), 403, 'forbidden');
    const theirs = (
      await t.http.get('/traces/scores').query({ workspace_id: other.workspace.id }).set(other.viewer.auth).expect(200)
    ).body;
    expect(theirs.items.map((i: { workspace_id: string; score: number }) => [i.workspace_id, i.score])).toEqual([
      [other.workspace.id, 0.01],
    ]);
    // Our evaluator and dataset, asked from their workspace: an evaluator and a dataset they do not have.
    expectProblem(
      await t.http
        .get('/traces/scores:aggregate')
        .query({
          workspace_id: other.workspace.id,
          evaluator_id: evaluatorId,
          metric: METRIC,
          from: REF.from,
          to: REF.to,
        })
        .set(other.viewer.auth),
      404,
    );
    expectProblem(
      await t.http
        .get('/traces/scores')
        .query({ workspace_id: other.workspace.id, dataset_id: datasetId })
        .set(other.viewer.auth),
      404,
      'not_found',
    );
    // Their score of the same trace id does not show with our trace.
    const mine = (await list({ trace_id: REF.traces[0].trace_id, page_size: 200 }).expect(200)).body;
    expect(mine.items.every((i: { workspace_id: string }) => i.workspace_id === ws)).toBe(true);
  });

  it("deletes the scores of traces older than the dataset's retention with its spans", async () => {
    const aged = 'a9ed0000000000000000000000000001';
    const now = Date.now();
    const old = new Date(now - 40 * 86_400_000).toISOString();
    const recent = new Date(now - 86_400_000).toISOString();
    const target = await land(r.member.auth, ws, 'retained-scores', [
      span(aged, old),
      span('a9ed0000000000000000000000000002', recent),
    ]);
    const trace = REF.traces[5];
    await record([
      scoreRow(trace, { trace_id: aged, target_key: aged, observed_at: new Date(old) }, target.dataset_id),
      scoreRow(
        trace,
        { trace_id: 'a9ed0000000000000000000000000002', target_key: 'recent', observed_at: new Date(recent) },
        target.dataset_id,
      ),
    ]);
    await t.http
      .put(`/traces/datasets/${target.dataset_id}/retention`)
      .set(r.admin.auth)
      .send({ retention_days: 30 })
      .expect(200);
    const swept = (await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(r.admin.auth).expect(200)).body;
    expect(swept.datasets).toEqual([
      expect.objectContaining({ dataset_id: target.dataset_id, spans_deleted: 1, scores_deleted: 1 }),
    ]);
    const left = (await list({ dataset_id: target.dataset_id }).expect(200)).body;
    expect(left.items.map((i: { trace_id: string }) => i.trace_id)).toEqual(['a9ed0000000000000000000000000002']);
    // The other dataset keeps no retention of its own: its scores stay.
    expect((await list({ dataset_id: datasetId, page_size: 1 }).expect(200)).body.total).toBe(REF.traces.length + 2);
    const audit = await t.dataSource.query(
      `SELECT details FROM audit_events WHERE action = 'trace_retention.swept' AND target_id = $1`,
      [target.dataset_id],
    );
    expect(audit).toEqual([{ details: expect.objectContaining({ spans_deleted: 1, scores_deleted: 1 }) }]);
  });
});
