import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { queryBuilder } from '#libs/database/typed-queries.js';
import type { JobOf } from '#libs/queue/job.types.js';
import type { RUN_JOB } from '#src/modules/runs/runs.jobs.js';
import { JobInterrupted, type InterruptionReason } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import type { CreatePartitionRequest } from '#src/modules/datasets/dto/dimensions.dto.js';
import { PartitionsService } from '#src/modules/datasets/dimensions/partitions.service.js';
import { RunSourceService } from '#src/modules/datasets/run-source.service.js';
import { VersionsService } from '#src/modules/datasets/versions/versions.service.js';
import type { CreateRunRequest } from '#src/modules/runs/dto/run.dto.js';
import { RunExecutor } from '#src/modules/runs/execution/run-executor.job.js';
import { RunPlanner, type RunInputs } from '#src/modules/runs/execution/run-planner.service.js';
import { RUNS, RunsRepository } from '#src/modules/runs/runs.repository.js';
import { RunsService } from '#src/modules/runs/runs.service.js';
import { ConnectionsService } from '#src/modules/suts/connections.service.js';
import { SutsService } from '#src/modules/suts/suts.service.js';
import { chatCompletion, FakeUpstream, type RecordedRequest } from '../utils/fake-upstream.js';
import { domainError, startMedium, type Caller, type Medium, type UploadedRows } from './medium.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { RunsModule } from '#src/modules/runs/runs.module.js';
import { SutsModule } from '#src/modules/suts/suts.module.js';

type Messages = Array<{ role: string; content: string }>;
const asked = (req: RecordedRequest) => (req.body as { messages: Messages }).messages.at(-1)!.content;

/** Items the executor reads at a time (the least RUN_PAGE_SIZE allows): 23 rows take three pages. */
const PAGE = 10;
const N = 23;
const ROWS = Array.from({ length: N }, (_, i) => ({
  input: `q${i}`,
  expected_output: i === N - 1 ? 'something else' : `reply to: q${i}`,
  topic: i % 2 ? 'odd' : 'even',
}));

/**
 * RunPlanner, RunsService.create and RunExecutor called directly over the real database: the
 * planner's resolution errors, the rows a run selects, and the executor driving a local SUT
 * through pages, a crash and a resume, a cancellation and failing calls. RUN_WORKERS=false: the
 * test runs the job handler itself, as the queue would, and stops it as the queue would.
 */
describe('service tier: run planning and execution', () => {
  let s: Medium;
  let sut: FakeUpstream;
  let c: Caller;
  let data: UploadedRows;
  let sutId: string;
  let connectionId: string;
  /** What the SUT does with each question; the default answers "reply to: <question>". */
  let answer: (req: RecordedRequest, nth: number) => { status?: number; json?: unknown; delayMs?: number } = (req) => ({
    json: chatCompletion(`reply to: ${asked(req)}`),
  });

  beforeAll(async () => {
    sut = await FakeUpstream.start();
    sut.on('POST', '/v1/chat/completions', (req, nth) => answer(req, nth));
    s = await startMedium([RunsModule, DatasetsModule, SutsModule], { RUN_PAGE_SIZE: String(PAGE) });
    c = await s.caller();
    data = await s.dataset(c, ROWS);
    sutId = (await s.get(SutsService).create(c.access, { workspace_id: c.workspaceId, name: 'chat' }, c.principal)).id;
    connectionId = await connection('chat', sut.url('/v1'));
  });
  afterAll(async () => {
    await s?.close();
    await sut?.close();
  });

  async function connection(name: string, baseUrl: string, forSut = sutId): Promise<string> {
    return (
      await s.get(ConnectionsService).create(
        c.access,
        forSut,
        {
          name,
          kind: 'openai_chat',
          openai_chat: { base_url: baseUrl, model: 'bot' },
          retry: { max_attempts: 1 },
          max_concurrency: 1,
        } as never,
        c.principal,
      )
    ).id;
  }

  const create = (body: Partial<CreateRunRequest> = {}) =>
    s.get(RunsService).create(
      c.access,
      {
        workspace_id: c.workspaceId,
        dataset_id: data.datasetId,
        sut_id: sutId,
        connection_id: connectionId,
        metrics: ['exact_match'],
        ...body,
      } as CreateRunRequest,
      c.principal,
    );

  /** One attempt of the run's job, as the queue makes it: the run marked running, then the handler; `stop` aborts it. */
  async function attempt(runId: string, stop?: { afterCalls: number; reason: InterruptionReason }) {
    await s.get(TrackedRecords).start(RUNS, runId);
    const controller = new AbortController();
    const reports: Array<Record<string, unknown>> = [];
    const before = sut.requests.length;
    const previous = answer;
    if (stop)
      answer = (req, nth) => {
        if (sut.requests.length - before === stop.afterCalls + 1) {
          controller.abort(new JobInterrupted(stop.reason, `test: ${stop.reason}`));
          return { json: chatCompletion('too late'), delayMs: 2000 };
        }
        return previous(req, nth);
      };
    try {
      const result = await s
        .get(RunExecutor)
        .execute({
          job: {} as JobOf<typeof RUN_JOB>,
          payload: { run_id: runId },
          signal: controller.signal,
          progress: async (p) => void reports.push(p),
        })
        .then(
          (value) => ({ value, error: null }),
          (error: unknown) => ({ value: null, error }),
        );
      return { ...result, reports, asked: sut.requests.slice(before).map(asked) };
    } finally {
      answer = previous;
    }
  }

  const items = (runId: string) =>
    s.query<{ input: string; status: string; output: string | null; error: unknown; passed: boolean | null }>(
      `SELECT data ->> 'input' AS input, status, output, error, passed FROM run_items WHERE run_id = $1 ORDER BY ordinal, repetition`,
      [runId],
    );
  const runRow = async (runId: string) =>
    (
      await s.query<{
        state: string;
        failure: unknown;
        completed: number;
        errored: number;
        passed: boolean | null;
        summary: Record<string, unknown> | null;
        progress: Record<string, unknown> | null;
      }>('SELECT state, failure, completed, errored, passed, summary, progress FROM runs WHERE id = $1', [runId])
    )[0];
  const stateEvents = async (runId: string) =>
    (
      await s.query<{ data: { from: string | null; to: string } }>(
        `SELECT data FROM run_events WHERE run_id = $1 AND type = 'state_changed' ORDER BY id`,
        [runId],
      )
    ).map((e) => `${e.data.from}->${e.data.to}`);

  describe('RunSourceService.resolve and RunPlanner.snapshot', () => {
    const inputs = (over: Partial<RunInputs> = {}): RunInputs => ({
      sutId,
      connectionId,
      metrics: ['exact_match'],
      ...over,
    });

    it('resolves the current version and plans a built-in metric with its default threshold and pass rule', async () => {
      const source = await s.get(RunSourceService).resolve(c.workspaceId, data.datasetId);
      expect(source).toEqual({
        datasetId: data.datasetId,
        datasetName: expect.any(String),
        versionId: data.versionId,
        versionNumber: 1,
        partitionId: null,
        // A JSON upload maps nothing: rows are read by their column names (input, expected_output).
        mapping: {},
        where: expect.anything(),
      });
      // Every row of the version: the filter is TRUE, with nothing bound.
      expect(sql`${source.where}`.compile(queryBuilder)).toMatchObject({ sql: 'TRUE', parameters: [] });
      const snapshot = await s.get(RunPlanner).snapshot(c.workspaceId, source, inputs());
      expect(snapshot.dataset).toEqual({
        id: data.datasetId,
        name: source.datasetName,
        version_id: data.versionId,
        version_number: 1,
        partition_id: null,
      });
      expect(snapshot.sut).toEqual({ id: sutId, name: 'chat' });
      expect(snapshot.adapter.revision).toBe(0);
      expect(snapshot.eval_config).toBeNull();
      expect(snapshot.pass_rule).toEqual({ row: 'all', min_pass_rate: 1, errors_fail: true });
      expect(snapshot.metrics).toEqual([
        expect.objectContaining({
          name: 'exact_match',
          metric: 'exact_match',
          config: null,
          threshold: 1,
          judge: null,
          custom_op: null,
          gating: true,
          better: 'higher',
        }),
      ]);
    });

    it('refuses sources that are not the workspace’s, naming the field', async () => {
      const sources = s.get(RunSourceService);
      await domainError(sources.resolve(c.workspaceId, randomUUID()), 'unknown_row_source', { field: 'dataset_id' });
      await domainError(sources.resolve(c.workspaceId, data.datasetId, randomUUID()), 'unknown_row_source', {
        field: 'version_id',
      });
      await domainError(
        sources.resolve(c.workspaceId, data.datasetId, data.versionId, randomUUID()),
        'unknown_row_source',
        { field: 'partition_id' },
      );
      const other = await s.caller();
      await domainError(sources.resolve(other.workspaceId, data.datasetId), 'unknown_row_source', {
        field: 'dataset_id',
      });
    });

    it('refuses an unknown SUT, connection, eval config, metric or judge, naming the field', async () => {
      const source = await s.get(RunSourceService).resolve(c.workspaceId, data.datasetId);
      const plan = (over: Partial<RunInputs>) => s.get(RunPlanner).snapshot(c.workspaceId, source, inputs(over));
      await domainError(plan({ sutId: randomUUID() }), 'run_input_invalid', { field: 'sut_id' });
      await domainError(plan({ connectionId: randomUUID() }), 'run_input_invalid', { field: 'connection_id' });
      // A connection of another SUT of the workspace is no connection of this one.
      const otherSut = (
        await s.get(SutsService).create(c.access, { workspace_id: c.workspaceId, name: 'other' }, c.principal)
      ).id;
      const foreign = await connection('foreign', sut.url('/v1'), otherSut);
      await domainError(plan({ connectionId: foreign }), 'run_input_invalid', { field: 'connection_id' });
      await domainError(plan({ evalConfigId: randomUUID() }), 'run_input_invalid', { field: 'eval_config_id' });
      await domainError(plan({ metrics: [] }), 'metrics_required');
      await domainError(plan({ metrics: ['exact_match', 'no_such_metric'] }), 'run_input_invalid', {
        field: 'metrics.1',
      });
      await domainError(plan({ metrics: ['correctness'] }), 'judge_required');
      await domainError(plan({ metrics: ['correctness'], judgeId: randomUUID() }), 'run_input_invalid', {
        field: 'judge_id',
      });
    });

    it('leaves nothing behind when planning fails inside RunsService.create', async () => {
      const count = async () =>
        (
          await s.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1', [c.workspaceId])
        )[0].n;
      const before = await count();
      await domainError(create({ metrics: ['no_such_metric'] }), 'run_input_invalid', { field: 'metrics.0' });
      await domainError(create({ sut_id: randomUUID() }), 'run_input_invalid', { field: 'sut_id' });
      expect(await count()).toBe(before);
      const jobs = await s.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE workspace_id = $1 AND type = 'runs.execute'`,
        [c.workspaceId],
      );
      expect(jobs[0].n).toBe(before);
    });
  });

  describe('RunsService.create: the rows a run selects', () => {
    it('materialises every row of the version per repetition, in dataset order', async () => {
      const run = await create({ repetitions: 2 });
      expect(run.state).toBe('queued');
      expect(run.progress).toEqual({ total: 2 * N, completed: 0, errored: 0, pending: 2 * N, percent: 0 });
      const rows = await s.query<{ row_id: string; repetition: number; status: string }>(
        'SELECT row_id, repetition, status FROM run_items WHERE run_id = $1 ORDER BY ordinal, repetition',
        [run.id],
      );
      expect(rows).toEqual(
        data.rowIds.flatMap((row_id) => [1, 2].map((repetition) => ({ row_id, repetition, status: 'pending' }))),
      );
    });

    it('samples by the seed: the rows whose md5(row id, seed) sort first, the same for the same seed', async () => {
      const seeded = (seed: number, size: number) =>
        data.rowIds
          .map((id) => ({ id, key: createHash('md5').update(`${id}${seed}`).digest('hex') }))
          .sort((a, b) => (a.key < b.key ? -1 : 1))
          .slice(0, size)
          .map((r) => r.id)
          .sort();
      for (const seed of [7, 8]) {
        const run = await create({ sample: { size: 3, seed } });
        expect(run.sample).toEqual({ size: 3, seed });
        expect(run.progress.total).toBe(3);
        const chosen = await s.query<{ row_id: string }>(
          'SELECT row_id FROM run_items WHERE run_id = $1 ORDER BY row_id',
          [run.id],
        );
        expect(chosen.map((r) => r.row_id)).toEqual(seeded(seed, 3));
      }
      // A sample larger than the version takes every row once.
      expect((await create({ sample: { size: 50, seed: 1 } })).progress.total).toBe(N);
    });

    it('selects a partition’s rows by its filter, and refuses a partition that selects none', async () => {
      const dataset = await s.get(DatasetsService).require(c.access, data.datasetId);
      const version = (await s.get(VersionsService).find(c.workspaceId, data.datasetId, data.versionId))!;
      // A partition of the version whose filter keeps the rows of one topic.
      const partition = (topic: string) =>
        s
          .get(PartitionsService)
          .create(
            c.access,
            dataset,
            version,
            { name: topic, filter: { field: 'topic', op: 'eq', value: topic } } as CreatePartitionRequest,
            c.principal,
          );
      const odd = await partition('odd');
      const run = await create({ version_id: data.versionId, partition_id: odd.id });
      expect(run.partition_id).toBe(odd.id);
      const chosen = await s.query<{ input: string }>(
        `SELECT data ->> 'input' AS input FROM run_items WHERE run_id = $1 ORDER BY ordinal`,
        [run.id],
      );
      expect(chosen.map((r) => r.input)).toEqual(ROWS.filter((_, i) => i % 2).map((r) => r.input));
      const none = await partition('neither');
      await domainError(create({ partition_id: none.id }), 'run_input_invalid', { field: 'partition_id' });
    });
  });

  describe('RunExecutor', () => {
    it('asks every row once a page at a time, scores it, and ends with its summary, progress and events', async () => {
      const run = await create();
      let lastReport: Record<string, unknown> | undefined;
      const pages = jest.spyOn(s.get(RunsRepository), 'conversations');
      try {
        const done = await attempt(run.id);
        expect(done.error).toBeNull();
        expect(done.value).toEqual({ state: 'succeeded', items: N });
        lastReport = done.reports.at(-1);
        expect(done.asked).toEqual(ROWS.map((r) => r.input));
        // 23 items, ten a page: three reads, each after the last item of the page before, the last one short.
        expect(pages.mock.calls.filter(([id]) => id === run.id).map(([, from]) => from?.row_id ?? null)).toEqual([
          null,
          data.rowIds[9],
          data.rowIds[19],
        ]);
      } finally {
        pages.mockRestore();
      }
      expect(await items(run.id)).toEqual(
        ROWS.map((r, i) => ({
          input: r.input,
          status: 'done',
          output: `reply to: ${r.input}`,
          error: null,
          passed: i !== N - 1,
        })),
      );
      const ended = await runRow(run.id);
      expect(ended).toEqual(
        expect.objectContaining({ state: 'succeeded', failure: null, completed: N, errored: 0, passed: false }),
      );
      expect(ended.summary).toEqual(
        expect.objectContaining({
          rows: N,
          completed: N,
          errored: 0,
          passed_rows: N - 1,
          failed_rows: 1,
          passed: false,
        }),
      );
      // The handler reports progress to the queue (which writes the run's progress column): the last report is whole.
      expect(ended.progress).toBeNull();
      expect(lastReport).toEqual(expect.objectContaining({ done: N, total: N, completed: N, errored: 0 }));
      expect(await stateEvents(run.id)).toEqual(['null->queued', 'queued->running', 'running->succeeded']);
    });

    it('resumes after a crash without asking again what was answered', async () => {
      const run = await create();
      // The worker stops (shutdown) while the fourth row is asked: three answers are written.
      const crashed = await attempt(run.id, { afterCalls: 3, reason: 'shutdown' });
      expect(crashed.error).toBeInstanceOf(JobInterrupted);
      expect(crashed.asked).toEqual(['q0', 'q1', 'q2', 'q3']);
      expect((await items(run.id)).map((i) => i.status)).toEqual(ROWS.map((_, i) => (i < 3 ? 'done' : 'pending')));
      // The third answer is written; whether it was scored before the stop is a race the resume does not care about.
      expect(await runRow(run.id)).toEqual(expect.objectContaining({ state: 'running', failure: null, summary: null }));

      const resumed = await attempt(run.id);
      expect(resumed.error).toBeNull();
      expect(resumed.asked).toEqual(ROWS.slice(3).map((r) => r.input));
      // Progress counts on from the three finished before the crash.
      expect(resumed.reports.at(-1)).toEqual(expect.objectContaining({ done: N, total: N, completed: N, errored: 0 }));
      expect((await items(run.id)).map((i) => i.output)).toEqual(ROWS.map((r) => `reply to: ${r.input}`));
      expect(await runRow(run.id)).toEqual(expect.objectContaining({ state: 'succeeded', completed: N, errored: 0 }));
      expect(await stateEvents(run.id)).toEqual(['null->queued', 'queued->running', 'running->succeeded']);
    });

    it('ends cancelled with what was done kept when cancelled mid-run', async () => {
      const run = await create();
      const cancelled = await attempt(run.id, { afterCalls: 2, reason: 'cancelled' });
      expect(cancelled.error).toBeInstanceOf(JobInterrupted);
      expect(cancelled.asked).toEqual(['q0', 'q1', 'q2']);
      expect((await items(run.id)).filter((i) => i.status === 'done').map((i) => i.input)).toEqual(['q0', 'q1']);
      const ended = await runRow(run.id);
      expect(ended).toEqual(
        expect.objectContaining({
          state: 'cancelled',
          failure: { code: 'cancelled', message: 'cancelled by request; what was done is kept' },
          completed: 2,
          errored: 0,
          passed: null,
        }),
      );
      expect(ended.summary).toEqual(expect.objectContaining({ rows: 2, completed: 2, errored: 0 }));
      expect(await stateEvents(run.id)).toEqual(['null->queued', 'queued->running', 'running->cancelled']);
      // A later attempt of a cancelled run asks nothing.
      const again = await attempt(run.id);
      expect(again.asked).toEqual([]);
      expect(again.value).toEqual({ state: 'cancelled', items: 0 });
    });

    it('records a failing call on its item, with its error, and counts it in the summary', async () => {
      const run = await create();
      const previous = answer;
      answer = (req, nth) =>
        ['q2', 'q5'].includes(asked(req)) ? { status: 500, json: { error: 'boom' } } : previous(req, nth);
      let done: Awaited<ReturnType<typeof attempt>>;
      try {
        done = await attempt(run.id);
      } finally {
        answer = previous;
      }
      expect(done.value).toEqual({ state: 'succeeded', items: N });
      const failed = (await items(run.id)).filter((i) => i.status === 'error');
      expect(failed).toEqual(
        ['q2', 'q5'].map((input) => ({
          input,
          status: 'error',
          output: null,
          error: { code: 'http_status', message: expect.stringContaining('500') },
          // A row without an answer is not scored; the pass rule counts it as failed (errors_fail).
          passed: null,
        })),
      );
      const errors = await s.query<{ data: Record<string, unknown> }>(
        `SELECT data FROM run_events WHERE run_id = $1 AND type = 'row_error' ORDER BY id`,
        [run.id],
      );
      expect(errors.map((e) => [e.data.code, e.data.status_code])).toEqual([
        ['http_status', 500],
        ['http_status', 500],
      ]);
      const ended = await runRow(run.id);
      expect(ended).toEqual(
        expect.objectContaining({ state: 'succeeded', completed: N - 2, errored: 2, passed: false }),
      );
      expect(ended.summary).toEqual(
        expect.objectContaining({ rows: N, completed: N - 2, errored: 2, passed_rows: N - 3, failed_rows: 3 }),
      );
    });
  });
});
