import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ItemResult, PassRule, RunMetricSpec } from '#libs/evaluation/runs/run.types.js';
import { summarize } from '#libs/evaluation/runs/summary.js';
import { MATERIALIZE_PAGES } from '#src/modules/runs/runs.service.js';
import { uploadRows } from '../../utils/datasets.js';
import { chatCompletion, FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { restartableApps, type TestApp } from '../../utils/test-app.js';
import { endedRun } from '../../utils/suts.js';

type Messages = Array<{ role: string; content: string }>;
type Run = {
  id: string;
  state: string;
  progress: { total: number; completed: number; errored: number; pending: number };
  summary: Record<string, unknown> | null;
};

/** Items a worker reads at a time here: a run of 2,100 items takes eleven pages. */
const PAGE = 200;
// One set of keys for the processes that follow each other on the database: tokens and secrets outlive a restart.
const FAST = {
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  RUN_PAGE_SIZE: String(PAGE),
  QUEUE_POLL_INTERVAL_MS: '100',
  QUEUE_SHUTDOWN_GRACE_SECONDS: '1',
};

const lastMessage = (req: RecordedRequest) => (req.body as { messages: Messages }).messages.at(-1)!.content;

/** The summary the run's items give when summarised all at once, read straight from the database. */
async function summaryOfAllItems(dataSource: DataSource, runId: string): Promise<unknown> {
  const [{ snapshot }] = await dataSource.query('SELECT snapshot FROM runs WHERE id = $1', [runId]);
  const rows: Array<Omit<ItemResult, 'scores'> & { scores: ItemResult['scores'] | null }> = await dataSource.query(
    `SELECT row_id, repetition, status, output, latency_ms, cost_usd, error, scores, passed, dimensions FROM run_items WHERE run_id = $1 AND status <> 'pending' ORDER BY ordinal, repetition`,
    [runId],
  );
  return summarize(
    rows.map((r) => ({ ...r, scores: r.scores ?? {} })),
    snapshot.metrics as RunMetricSpec[],
    snapshot.pass_rule as PassRule,
  );
}

/**
 * Runs larger than a page (RUN_PAGE_SIZE): the worker reads a run's items a page at a time, a
 * conversation whole in the page of its first turn, and the summary a page at a time at the end.
 */
// 2,100 items through a local SUT on the embedded database outlasted 120 s once on a loaded 2-core machine: 5 min per test.
describe('runs: executed a page at a time', () => {
  const apps = restartableApps(FAST);
  let sut: FakeUpstream;

  beforeAll(async () => {
    await apps.create();
    sut = await FakeUpstream.start();
  });
  afterAll(async () => {
    await sut?.close();
    await apps.closeAll();
  });

  async function setUp(t: TestApp, rows: Array<Record<string, unknown>>, connection: Record<string, unknown>) {
    const owner = await t.factory.actor();
    const ws = (
      await t.http
        .post('/workspaces')
        .set(owner.auth)
        .send({ name: `paging-${Math.random().toString(36).slice(2, 8)}` })
        .expect(201)
    ).body.id;
    const data = await uploadRows(t, owner.auth, ws, rows);
    if (rows.some((row) => row.conv))
      await t.http
        .post(`/datasets/${data.datasetId}/versions/${data.versionId}/map`)
        .set(owner.auth)
        .send({ input: 'input', expected_output: 'expected_output', session_id: 'conv' })
        .expect(200);
    const sutId = (await t.http.post('/suts').set(owner.auth).send({ workspace_id: ws, name: 'chat' }).expect(201)).body
      .id;
    const connectionId = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(owner.auth)
        .send({
          name: 'chat',
          kind: 'openai_chat',
          openai_chat: { base_url: sut.url('/v1'), model: 'bot' },
          retry: { max_attempts: 1 },
          ...connection,
        })
        .expect(201)
    ).body.id;
    return { owner, ws, datasetId: data.datasetId, sutId, connectionId };
  }

  const settled = (t: TestApp, auth: Record<string, string>, id: string) => endedRun<Run>(t, auth, id, 120_000);

  it('calls every item once, conversations in order across pages, and summarises as the whole list would', async () => {
    const t = await apps.start();
    try {
      // 1,050 rows, twice each: 2,100 items. Every seventh row is a turn of one of 13 conversations spread over the
      // whole dataset (so over every page); a quarter expect another answer; every 50th fails; every 10th is flaky.
      const rows = Array.from({ length: 1050 }, (_, i) => ({
        input: `q${i}`,
        expected_output: i % 4 === 0 ? 'something else' : `reply to: q${i}`,
        ...(i % 7 === 2 ? { conv: `s${i % 13}` } : {}),
      }));
      const calls = new Map<string, number>();
      sut.on('POST', '/v1/chat/completions', (req) => {
        const input = lastMessage(req);
        const nth = (calls.get(input) ?? 0) + 1;
        calls.set(input, nth);
        const i = Number(input.slice(1));
        if (i % 50 === 7) return { status: 500, json: { error: 'down' } };
        return { json: chatCompletion(i % 10 === 3 && nth === 2 ? 'a wrong reply' : `reply to: ${input}`) };
      });
      const { owner, ws, datasetId, sutId, connectionId } = await setUp(t, rows, { max_concurrency: 8 });
      const created = (
        await t.http
          .post('/runs')
          .set(owner.auth)
          .send({
            workspace_id: ws,
            dataset_id: datasetId,
            sut_id: sutId,
            connection_id: connectionId,
            metrics: ['exact_match'],
            repetitions: 2,
          })
          .expect(202)
      ).body;
      const run = await settled(t, owner.auth, created.id);

      // Every input was sent once per repetition: no item skipped at a page boundary, none sent twice.
      expect(calls.size).toBe(1050);
      expect([...calls.values()].every((n) => n === 2)).toBe(true);
      // Each turn carried its conversation so far, in dataset order, though its earlier turns were pages before.
      const turns = new Map<string, string[]>();
      rows.forEach((row) => row.conv && turns.set(row.conv, [...(turns.get(row.conv) ?? []), row.input]));
      for (const req of sut.received('POST', '/v1/chat/completions')) {
        const row = rows[Number(lastMessage(req).slice(1))];
        const messages = (req.body as { messages: Messages }).messages;
        const earlier = row.conv ? turns.get(row.conv)!.slice(0, turns.get(row.conv)!.indexOf(row.input)) : [];
        expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([...earlier, row.input]);
      }

      const failing = rows.filter((_, i) => i % 50 === 7).length;
      const passedItems = rows.reduce((n, _, i) => n + (i % 50 === 7 || i % 4 === 0 ? 0 : i % 10 === 3 ? 1 : 2), 0);
      expect(run).toEqual(
        expect.objectContaining({
          state: 'succeeded',
          progress: expect.objectContaining({
            total: 2100,
            completed: 2100 - 2 * failing,
            errored: 2 * failing,
            pending: 0,
          }),
        }),
      );
      expect(run.summary).toEqual(
        expect.objectContaining({
          rows: 2100,
          completed: 2100 - 2 * failing,
          errored: 2 * failing,
          passed_rows: passedItems,
          failed_rows: 2100 - passedItems,
          pass_rate: passedItems / 2100,
        }),
      );
      const flaky = rows.filter((_, i) => i % 50 !== 7 && i % 4 !== 0 && i % 10 === 3).length;
      expect(run.summary!.trials).toEqual(
        expect.objectContaining({ repetitions: 2, rows: 1050, repeated_rows: 1050, flaky_rows: flaky }),
      );
      // Its items were created MATERIALIZE_PAGES pages of rows a statement (1,000 of the 1,050 rows, then 50):
      // every item once, and each conversation's turns count on across the two, 1, 2, 3… in the rows' order.
      const [{ items, distinct }] = await t.dataSource.query(
        'SELECT count(*)::int AS items, count(DISTINCT (row_id, repetition))::int AS distinct FROM run_items WHERE run_id = $1',
        [run.id],
      );
      expect({ items, distinct }).toEqual({ items: 2100, distinct: 2100 });
      const sessions: Array<{ session_id: string; turns: number[]; inputs: string[] }> = await t.dataSource.query(
        `SELECT session_id, repetition, array_agg(turn ORDER BY ordinal) AS turns, array_agg(data ->> 'input' ORDER BY ordinal) AS inputs
           FROM run_items WHERE run_id = $1 AND session_id IS NOT NULL GROUP BY session_id, repetition`,
        [run.id],
      );
      expect(sessions).toHaveLength(2 * 13);
      for (const session of sessions) {
        expect(session.turns).toEqual(session.turns.map((_, i) => i + 1));
        expect(session.inputs).toEqual(turns.get(session.session_id));
      }
      expect(sessions.some((s) => s.inputs.some((input) => Number(input.slice(1)) >= MATERIALIZE_PAGES * PAGE))).toBe(
        true,
      );
      // The run of eleven pages refreshed the items' statistics: a page after a key is read down the page index, not
      // found among every item after it and sorted (a read of the rest of the run per page).
      const [{ 'QUERY PLAN': plan }] = await t.dataSource.query(
        `EXPLAIN (FORMAT JSON) SELECT * FROM run_items WHERE run_id = $1 AND (ordinal, row_id, repetition) > (0, '00000000-0000-0000-0000-000000000000'::uuid, 1)
          ORDER BY ordinal, row_id, repetition LIMIT ${PAGE}`,
        [run.id],
      );
      const nodes = JSON.stringify(typeof plan === 'string' ? JSON.parse(plan) : plan);
      expect(nodes).toContain('"Index Name":"run_items_page_idx"');
      expect(nodes).not.toContain('"Node Type":"Sort"');
      // And again once its items were answered: the statistics know them answered, so the summary's pages (the
      // answered items after a key) are read down the same index, not planned as a scan and sort of the whole table.
      const [{ common }] = await t.dataSource.query(
        `SELECT most_common_vals::text AS common FROM pg_stats WHERE tablename = 'run_items' AND attname = 'status'`,
      );
      expect(String(common)).toContain('done');
      const [{ 'QUERY PLAN': answered }] = await t.dataSource.query(
        `EXPLAIN (FORMAT JSON) SELECT * FROM run_items WHERE run_id = $1 AND (ordinal, row_id, repetition) > (0, '00000000-0000-0000-0000-000000000000'::uuid, 1)
          AND status <> 'pending' ORDER BY ordinal, row_id, repetition LIMIT ${4 * PAGE}`,
        [run.id],
      );
      const answeredNodes = JSON.stringify(typeof answered === 'string' ? JSON.parse(answered) : answered);
      expect(answeredNodes).toContain('"Index Name":"run_items_page_idx"');
      expect(answeredNodes).not.toContain('"Node Type":"Sort"');
      // Summarised a page at a time, the summary is the one of all the items at once, to the last digit.
      expect(run.summary).toEqual(await summaryOfAllItems(t.dataSource, run.id));
      const results = (await t.http.get(`/runs/${run.id}/results`).set(owner.auth).expect(200)).body;
      expect(results).toEqual(expect.objectContaining({ items: 2100, scored: 2100, summary: run.summary }));

      // Progress counted each item once.
      const events = (await t.http.get(`/runs/${run.id}/events`).query({ limit: 1000 }).set(owner.auth).expect(200))
        .body as Array<{ type: string; data: { done?: number; total?: number } }>;
      const progress = events.filter((e) => e.type === 'progress');
      expect(progress.at(-1)!.data).toEqual(expect.objectContaining({ done: 2100, total: 2100 }));
      expect(progress.every((e) => e.data.done! <= 2100)).toBe(true);
    } finally {
      await apps.stop(t);
    }
  }, 300_000);

  it('resumes after a restart mid-run without calling an answered item again', async () => {
    // The SUT answers the first 700 calls; later ones hang until the worker is stopped (its calls in flight are
    // aborted, never answered), then the next worker's calls are answered.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let restarted = false;
    const before: string[] = [];
    const after: string[] = [];
    sut.on('POST', '/v1/chat/completions', (req, nth) => {
      const input = lastMessage(req);
      if (restarted) {
        after.push(input);
        return { json: chatCompletion(`reply to: ${input}`) };
      }
      before.push(input);
      return nth < 700
        ? { json: chatCompletion(`reply to: ${input}`) }
        : { until: held, json: chatCompletion('too late') };
    });
    const rows = Array.from({ length: 2100 }, (_, i) => ({
      input: `q${i}`,
      expected_output: i % 3 === 0 ? 'other' : `reply to: q${i}`,
    }));
    const first = await apps.start();
    let setup: Awaited<ReturnType<typeof setUp>>;
    let runId: string;
    let answeredFirst: Set<string>;
    try {
      setup = await setUp(first, rows, { max_concurrency: 6 });
      runId = (
        await first.http
          .post('/runs')
          .set(setup.owner.auth)
          .send({
            workspace_id: setup.ws,
            dataset_id: setup.datasetId,
            sut_id: setup.sutId,
            connection_id: setup.connectionId,
            metrics: ['exact_match'],
          })
          .expect(202)
      ).body.id;
      const answered = async () =>
        (
          await first.dataSource.query(
            `SELECT count(*)::int AS n FROM run_items WHERE run_id = $1 AND status <> 'pending'`,
            [runId],
          )
        )[0].n as number;
      for (let i = 0; i < 1200 && ((await answered()) < 700 || before.length < 706); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await answered()).toBe(700);
      answeredFirst = new Set<string>(
        (
          await first.dataSource.query(
            `SELECT data ->> 'input' AS input FROM run_items WHERE run_id = $1 AND status <> 'pending'`,
            [runId],
          )
        ).map((r: { input: string }) => r.input),
      );
    } finally {
      await apps.stop(first);
      restarted = true;
      release();
    }

    const second = await apps.start();
    try {
      expect(answeredFirst.size).toBe(700);
      const run = await settled(second, setup.owner.auth, runId);
      expect(run).toEqual(
        expect.objectContaining({
          state: 'succeeded',
          progress: expect.objectContaining({ total: 2100, completed: 2100, errored: 0 }),
        }),
      );
      // Nothing answered before the restart was sent again; what the second worker sent, it sent once.
      expect(after.filter((input) => answeredFirst.has(input))).toEqual([]);
      expect(new Set(after).size).toBe(after.length);
      expect(new Set([...answeredFirst, ...after]).size).toBe(2100);
      // Sent twice: only the calls in flight when the first worker stopped, never answered (at most its concurrency).
      const again = after.filter((input) => before.includes(input));
      expect(again.length).toBeLessThanOrEqual(6);
      expect(again.every((input) => before.indexOf(input) >= 700)).toBe(true);

      const passing = rows.filter((_, i) => i % 3 !== 0).length;
      expect(run.summary).toEqual(
        expect.objectContaining({
          rows: 2100,
          passed_rows: passing,
          failed_rows: 2100 - passing,
          pass_rate: passing / 2100,
        }),
      );
      expect(run.summary).toEqual(await summaryOfAllItems(second.dataSource, runId));
      const events = (
        await second.http.get(`/runs/${runId}/events`).query({ limit: 1000 }).set(setup.owner.auth).expect(200)
      ).body as Array<{ type: string; data: { to?: string; done?: number } }>;
      expect(events.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
        'queued',
        'running',
        'succeeded',
      ]);
      expect(events.filter((e) => e.type === 'progress').at(-1)!.data.done).toBe(2100);
    } finally {
      await apps.stop(second);
    }
  }, 300_000);
});
