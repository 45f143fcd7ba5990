import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parquetReadObjects } from 'hyparquet';
import { diffRows, diffToCsv } from '#libs/evaluation/runs/diff.js';
import { diffStatistics } from '#libs/evaluation/runs/diff-statistics.js';
import type { ItemResult, RunMetricSpec } from '#libs/evaluation/runs/run.types.js';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { endedRun } from '../../utils/suts.js';

type Run = { id: string; state: string; progress: Record<string, number> };
type Item = ItemResult & { ordinal: string; data: Record<string, unknown> };
type Snapshot = {
  metrics: RunMetricSpec[];
  pass_rule: { errors_fail: boolean };
  mapping: { input?: string; expected_output?: string };
};

/** Items read at a time here: each run of 300 items is eight pages. */
const PAGE = 40;

/**
 * The read side of a run in pages (RUN_PAGE_SIZE): the diff, its statistics and exports, one
 * diff row, the Parquet export and GET /runs/{id}'s counts give what reading every item at once
 * gave, on runs several pages long.
 */
describe('runs: read a page at a time', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let mode: 'base' | 'candidate' = 'base';
  const calls = new Map<string, number>();
  const runs: Record<string, Run> = {};
  const ROWS = Array.from({ length: 150 }, (_, i) => ({
    input: `${['billing', 'shipping', 'returns'][i % 3]} question ${i}`,
    expected_output: `the answer to question ${i} is ${i}`,
    topic: ['billing', 'shipping', 'returns'][i % 3],
  }));

  /** Answers that move between the runs: right, partly right (fractional token F1), wrong, failed, flaky per call. */
  function answer(i: number, call: number): { status?: number; json: unknown } {
    const shift = mode === 'candidate' ? 1 : 0;
    if ((i + shift) % 23 === 0) return { status: 500, json: { error: 'down' } };
    if ((i + shift) % 7 === 0) return { json: { answer: `no idea about ${i}` } };
    if ((i * (shift + 1)) % 5 === 0) return { json: { answer: `the answer to question ${i} is maybe ${i}` } };
    if (i % 11 === 0 && call % 2 === 0) return { json: { answer: `answer ${i}?` } };
    return { json: { answer: `the answer to question ${i} is ${i}` } };
  }

  const settled = (id: string) => endedRun<Run>(t, r.viewer.auth, id, 120_000);

  beforeAll(async () => {
    t = await startTestApp({ RUN_PAGE_SIZE: String(PAGE) });
    sut = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    const ws = r.workspace.id;
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const question = (req.body as { question: string }).question;
      const call = (calls.get(`${mode}:${question}`) ?? 0) + 1;
      calls.set(`${mode}:${question}`, call);
      return answer(Number(/question (\d+)/.exec(question)?.[1]), call);
    });
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'support.json');
    for (const topic of ['billing', 'shipping', 'returns'])
      await t.http
        .post(`/datasets/${data.datasetId}/dimensions:assign`)
        .set(r.member.auth)
        .send({ dimension: 'topic', value: topic, rule: { field: 'topic', op: 'eq', value: topic } })
        .expect(201);
    const sutId = (
      await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'support-bot' }).expect(201)
    ).body.id;
    const connectionId = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({
          name: 'api',
          kind: 'http',
          http: { url: sut.url('/answer') },
          max_concurrency: 8,
          retry: { max_attempts: 1 },
        })
        .expect(201)
    ).body.id;
    await t.http
      .post(`/suts/${sutId}/connections/${connectionId}/adapter`)
      .set(r.member.auth)
      .send({ request: { body: { question: '{{input}}' } }, response: { language: 'jsonpath', output: '$.answer' } })
      .expect(201);
    for (const which of ['base', 'candidate'] as const) {
      mode = which;
      const created = await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: connectionId,
          metrics: ['exact_match', 'token_f1'],
          repetitions: 2,
        })
        .expect(202);
      runs[which] = await settled(created.body.id);
    }
  });
  afterAll(async () => {
    await sut?.close();
    await t?.close();
  });

  /** Every item of a run at once, straight from the database, as the diff read them before it read pages. */
  async function allItems(runId: string): Promise<{ items: Item[]; snapshot: Snapshot }> {
    const [{ snapshot }] = await t.dataSource.query('SELECT snapshot FROM runs WHERE id = $1', [runId]);
    const items = await t.dataSource.query(
      'SELECT * FROM run_items WHERE run_id = $1 ORDER BY ordinal, row_id, repetition',
      [runId],
    );
    return { items, snapshot };
  }

  /** The diff as it was computed from every item at once (the code before the diff read pages). */
  async function wholeDiff(tolerance?: number) {
    const base = await allItems(runs.base.id);
    const candidate = await allItems(runs.candidate.id);
    const byName = new Map<string, RunMetricSpec>();
    for (const m of [...base.snapshot.metrics, ...candidate.snapshot.metrics])
      if (!byName.has(m.name))
        byName.set(m.name, { name: m.name, better: m.better, gating: m.gating, min_pass_rate: m.min_pass_rate });
    const metrics = [...byName.values()];
    const done = (run: { items: Item[]; snapshot: Snapshot }) =>
      run.items
        .filter((i) => (i.status as string) !== 'pending')
        .map((i) => ({
          ...i,
          scores: i.scores ?? {},
          passed: i.status === 'error' && run.snapshot.pass_rule.errors_fail ? false : i.passed,
        }));
    const diff = diffRows(done(base), done(candidate), metrics, { tolerance });
    const ordinal = new Map([...base.items, ...candidate.items].map((i) => [i.row_id, Number(i.ordinal)]));
    const rank = new Map(diff.rows.map((row, i) => [row.row_id, i]));
    diff.rows.sort((a, b) =>
      a.status === b.status
        ? ordinal.get(a.row_id)! - ordinal.get(b.row_id)!
        : rank.get(a.row_id)! - rank.get(b.row_id)!,
    );
    const dimensions = new Map<string, Record<string, string | null>>();
    for (const item of [...base.items, ...candidate.items])
      if (item.dimensions) dimensions.set(item.row_id, item.dimensions);
    const statistics = diffStatistics(diff.rows, metrics, {
      seedKey: `${runs.base.id}:${runs.candidate.id}`,
      dimensionsOf: (rowId) => dimensions.get(rowId),
    });
    return { diff, metrics, statistics, base, candidate };
  }

  const download = (path: string, query: Record<string, unknown> = {}) =>
    t.http
      .get(path)
      .query(query)
      .set(r.viewer.auth)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);

  it('diffs, tests and exports two runs of several pages as it did from every item at once', async () => {
    expect(runs.base.state).toBe('succeeded');
    expect(runs.candidate.state).toBe('succeeded');
    const whole = await wholeDiff();
    const q = { base: runs.base.id, candidate: runs.candidate.id };
    // Rows of every kind, over more than a page: the comparison means something.
    expect(whole.diff.rows).toHaveLength(150);
    expect(whole.diff.summary.regressed).toBeGreaterThan(0);
    expect(whole.diff.summary.improved).toBeGreaterThan(0);
    expect(whole.diff.rows.some((row) => row.output_changed)).toBe(true);
    expect(whole.statistics.by_dimension[0].values).toHaveLength(3);

    const page = (
      await t.http
        .get('/runs/diff')
        .query({ ...q, limit: 1000 })
        .set(r.viewer.auth)
        .expect(200)
    ).body;
    expect(page.summary).toEqual(whole.diff.summary);
    expect(page.rows).toEqual(whole.diff.rows);
    expect(page.statistics).toEqual(whole.statistics);
    const regressed = (
      await t.http
        .get('/runs/diff')
        .query({ ...q, status: 'regressed', offset: 1, limit: 3 })
        .set(r.viewer.auth)
        .expect(200)
    ).body;
    const allRegressed = whole.diff.rows.filter((row) => row.status === 'regressed');
    expect(regressed.rows).toEqual(allRegressed.slice(1, 4));
    expect(regressed.total).toBe(allRegressed.length);

    const csv = await download('/runs/diff/export', { ...q, format: 'csv' });
    expect((csv.body as Buffer).toString('utf8')).toBe(
      diffToCsv(
        whole.diff.rows,
        whole.metrics.map((m) => m.name),
      ),
    );
    const json = await download('/runs/diff/export', { ...q, format: 'json' });
    expect((json.body as Buffer).toString('utf8')).toBe(
      JSON.stringify({
        base_run_id: runs.base.id,
        candidate_run_id: runs.candidate.id,
        metrics: whole.metrics.map((m) => m.name),
        summary: whole.diff.summary,
        statistics: whole.statistics,
        rows: whole.diff.rows,
      }),
    );

    // One row, read alone, is the row of the whole diff.
    for (const status of ['regressed', 'improved', 'unchanged']) {
      const row = whole.diff.rows.find((x) => x.status === status)!;
      const one = (
        await t.http
          .get('/runs/diff/row')
          .query({ ...q, row_id: row.row_id })
          .set(r.viewer.auth)
          .expect(200)
      ).body;
      expect(one).toEqual(expect.objectContaining({ row_id: row.row_id, status, metrics: row.metrics }));
      const baseItem = whole.base.items.find((i) => i.row_id === row.row_id)!;
      expect(one.base).toEqual(expect.objectContaining({ output: baseItem.output, passed: baseItem.passed }));
    }
  });

  it('exports a run of several pages to Parquet, every item once in order', async () => {
    const { items } = await allItems(runs.candidate.id);
    const link = await t.http.get(`/runs/${runs.candidate.id}/parquet-url`).set(r.viewer.auth).expect(200);
    const url = new URL(link.body.url);
    const file = (await download(url.pathname + url.search)).body as Buffer;
    const parquet = await parquetReadObjects({
      file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer,
    });
    expect(parquet).toHaveLength(300);
    expect(parquet.map((p) => [p.row_id, p.repetition, p.status, p.output, p.passed, p.score_token_f1])).toEqual(
      items.map((i) => [i.row_id, i.repetition, i.status, i.output, i.passed, i.scores?.token_f1?.score ?? null]),
    );
    expect(parquet.map((p) => JSON.parse(p.row_json as string))).toEqual(items.map((i) => i.data));
  });

  it('counts a run’s items by status as counting every item would', async () => {
    for (const run of [runs.base, runs.candidate]) {
      const [counted] = await t.dataSource.query(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'done')::int AS completed,
                count(*) FILTER (WHERE status = 'error')::int AS errored, count(*) FILTER (WHERE status = 'pending')::int AS pending
           FROM run_items WHERE run_id = $1`,
        [run.id],
      );
      expect(counted.errored).toBeGreaterThan(0);
      const got = (await t.http.get(`/runs/${run.id}`).set(r.viewer.auth).expect(200)).body as Run;
      expect(got.progress).toEqual(expect.objectContaining(counted));
    }
  });
});
