import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { JobOf } from '#libs/queue/job.types.js';
import type { RUN_JOB } from '#src/modules/runs/runs.jobs.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { CataloguesModule } from '#src/modules/catalogues/catalogues.module.js';
import { EvalConfigsService } from '#src/modules/catalogues/eval-configs/eval-configs.service.js';
import { MetricConfigsService } from '#src/modules/catalogues/metrics/metric-configs.service.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { DiffService } from '#src/modules/runs/results/diff.service.js';
import { GateService } from '#src/modules/runs/gate/gate.service.js';
import type { CreateRunRequest, RunResponse } from '#src/modules/runs/dto/run.dto.js';
import { ResultsService } from '#src/modules/runs/results/results.service.js';
import { RunExecutor } from '#src/modules/runs/execution/run-executor.job.js';
import { RunQueueService } from '#src/modules/runs/run-queue.service.js';
import { RUNS } from '#src/modules/runs/runs.repository.js';
import { RunsModule } from '#src/modules/runs/runs.module.js';
import { RunsService } from '#src/modules/runs/runs.service.js';
import { ConnectionsService } from '#src/modules/suts/connections.service.js';
import { SutsModule } from '#src/modules/suts/suts.module.js';
import { SutsService } from '#src/modules/suts/suts.service.js';
import { FakeUpstream, type RecordedRequest } from '../utils/fake-upstream.js';
import { domainError, startMedium, type Caller, type Medium, type UploadedRows } from './medium.js';
import { CAPITAL_ROWS, CAPITALS_EVAL_CONFIG, capitalAnswers } from '../factories/capitals.js';

const question = (req: RecordedRequest) => (req.body as { question: string }).question;

/**
 * The rules of the runs family's services over the real database: an eval config's verdict and
 * summary, the results and table queries, events, lists, reruns and diffs, cancellation, and the
 * offline upload. RUN_WORKERS=false: the test runs the job handler itself, as the queue would.
 */
describe('service tier: run rules', () => {
  let s: Medium;
  let sut: FakeUpstream;
  let c: Caller;
  let data: UploadedRows;
  let sutId: string;
  let connectionId: string;
  let evalConfigId: string;
  /** The SUT under test: right for most rows, wrong for Peru and Chile, and a 500 for Fiji. */
  let answers = capitalAnswers();
  let first: RunResponse;

  beforeAll(async () => {
    sut = await FakeUpstream.start();
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const answer = answers[/of (\w+)\?/.exec(question(req))?.[1] ?? ''];
      return answer === null || answer === undefined
        ? { status: 500, text: 'model crashed' }
        : { json: { answer, usage: { in: 10, out: 2 } } };
    });
    s = await startMedium([RunsModule, DatasetsModule, SutsModule, CataloguesModule]);
    c = await s.caller();
    data = await s.dataset(c, CAPITAL_ROWS, 'capitals');
    sutId = (await s.get(SutsService).create(c.access, { workspace_id: c.workspaceId, name: 'geo-bot' }, c.principal))
      .id;
    connectionId = await connection({
      name: 'api',
      kind: 'http',
      http: { url: sut.url('/answer') },
      max_concurrency: 4,
      retry: { max_attempts: 2, initial_backoff_ms: 1 },
    });
    await s.get(ConnectionsService).createAdapter(
      c.access,
      sutId,
      connectionId,
      {
        request: { body: { question: '{{input}}' } },
        response: {
          language: 'jsonpath',
          output: '$.answer',
          usage: { prompt_tokens: '$.usage.in', completion_tokens: '$.usage.out' },
        },
      } as never,
      c.principal,
    );
    await s
      .get(MetricConfigsService)
      .create(
        c.access,
        { workspace_id: c.workspaceId, name: 'f1', kind: 'deterministic', metric: 'token_f1', threshold: 0.5 } as never,
        c.principal,
      );
    evalConfigId = (
      await s.get(EvalConfigsService).create(
        c.access,
        {
          workspace_id: c.workspaceId,
          ...CAPITALS_EVAL_CONFIG,
        } as never,
        c.principal,
      )
    ).id;
  });
  afterAll(async () => {
    await s?.close();
    await sut?.close();
  });

  async function connection(body: Record<string, unknown>): Promise<string> {
    return (await s.get(ConnectionsService).create(c.access, sutId, body as never, c.principal)).id;
  }

  const create = (body: Partial<CreateRunRequest> = {}) =>
    s.get(RunsService).create(
      c.access,
      {
        workspace_id: c.workspaceId,
        dataset_id: data.datasetId,
        sut_id: sutId,
        connection_id: connectionId,
        ...body,
      } as CreateRunRequest,
      c.principal,
    );

  /** The run's job as the queue runs it: marked running, then the handler to its end. */
  async function execute(runId: string): Promise<RunResponse> {
    await s.get(TrackedRecords).start(RUNS, runId);
    await s.get(RunExecutor).execute({
      job: {} as JobOf<typeof RUN_JOB>,
      payload: { run_id: runId },
      signal: new AbortController().signal,
      progress: async () => undefined,
    });
    return s.get(RunsService).get(c.access, runId);
  }

  const audit = (runId: string) =>
    s.query<{ action: string; details: Record<string, unknown> }>(
      `SELECT action, details FROM audit_events WHERE target_id = $1 ORDER BY created_at`,
      [runId],
    );

  describe('an eval config’s verdict and summary', () => {
    beforeAll(async () => {
      const calls = sut.requests.length;
      const created = await create({ eval_config_id: evalConfigId, tags: ['nightly', 'nightly'] });
      expect(created.tags).toEqual(['nightly']);
      expect(created.metrics.map((m) => `${m.name}:${m.source}`)).toEqual([
        'exact_match:builtin',
        'f1:latest_version',
        'latency:builtin',
      ]);
      first = await execute(created.id);
      // Fiji was asked twice (the retry policy) and recorded as an error; the others once.
      const asked = sut.requests.slice(calls).map(question);
      expect(asked.filter((q) => q.includes('Fiji'))).toHaveLength(2);
      expect(asked).toHaveLength(7);
    });

    it('passes on the eval config’s pass rate, counting a failed call as a failed row', async () => {
      expect(first).toEqual(
        expect.objectContaining({
          state: 'succeeded',
          passed: true,
          progress: { total: 6, completed: 5, errored: 1, pending: 0, percent: 100 },
        }),
      );
      const summary = first.summary as {
        pass_rate: number;
        metrics: Array<{ name: string; mean: number; pass_rate: number }>;
      };
      // 3 of 6 rows pass (the 500 counts as failed): 0.5 meets min_pass_rate 0.5.
      expect(summary.pass_rate).toBe(0.5);
      expect(summary.metrics.find((m) => m.name === 'exact_match')).toEqual(
        expect.objectContaining({ mean: 0.6, pass_rate: 0.6 }),
      );
      expect(summary.metrics.find((m) => m.name === 'f1')).toEqual(
        expect.objectContaining({ mean: 0.6, pass_rate: 0.6 }),
      );
      const results = await s.get(ResultsService).results(c.access, first.id);
      expect(results).toEqual(
        expect.objectContaining({
          final: true,
          items: 6,
          scored: 6,
          summary: expect.objectContaining({ completed: 5, errored: 1 }),
        }),
      );
      expect(await s.get(ResultsService).analysis(c.access, first.id)).toEqual(
        expect.objectContaining({
          rows: 6,
          failed_rows: 3,
          errors: [expect.objectContaining({ code: 'http_status', count: 1, example_row_ids: [data.rowIds[5]] })],
        }),
      );
    });

    it('freezes the metric config version the run used, naming the run', async () => {
      expect(
        await s.query(
          `SELECT config_version, first_used_by_run FROM metric_configs WHERE workspace_id = $1 AND name = 'f1'`,
          [c.workspaceId],
        ),
      ).toEqual([{ config_version: 1, first_used_by_run: first.id }]);
      const frozen = await s.get(MetricConfigsService).get(c.access, 'f1', '1');
      expect(frozen).toEqual(expect.objectContaining({ frozen: true, first_used_by_run: first.id }));
    });

    it('records the run’s events in order, the row error and the last progress, and pages them after a seq', async () => {
      const runs = s.get(RunsService);
      const events = await runs.events(c.access, first.id, {} as never);
      expect(events.every((e, i) => Number.isInteger(e.seq) && (i === 0 || e.seq > events[i - 1].seq))).toBe(true);
      expect(events.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
        'queued',
        'running',
        'succeeded',
      ]);
      expect(events.find((e) => e.type === 'row_error')?.data).toEqual(
        expect.objectContaining({ code: 'http_status', status_code: 500, row_id: data.rowIds[5] }),
      );
      expect(events.filter((e) => e.type === 'progress').at(-1)?.data).toEqual(
        expect.objectContaining({ done: 6, total: 6 }),
      );
      const after = await runs.events(c.access, first.id, { after: events[1].seq } as never);
      expect(after.map((e) => e.seq)).toEqual(events.slice(2).map((e) => e.seq));
      expect(await audit(first.id)).toEqual([
        {
          action: 'run.created',
          details: { sut_id: sutId, dataset_id: data.datasetId, version_id: data.versionId, items: 6 },
        },
      ]);
    });

    it('filters and sorts results on their fields, and the table on its columns', async () => {
      const results = s.get(ResultsService);
      const failed = await results.queryResults(c.access, first.id, {
        filter: { field: 'passed', op: 'eq', value: false },
        sort: [{ field: 'row.input', direction: 'asc' }],
      } as never);
      expect(failed.items.map((i) => i.output)).toEqual(['Valparaiso', 'Cusco']);
      expect(failed.items[0]).toEqual(
        expect.objectContaining({
          status: 'done',
          row: CAPITAL_ROWS[4],
          scores: expect.objectContaining({ exact_match: expect.objectContaining({ score: 0 }) }),
        }),
      );
      const errored = await results.queryTable(c.access, first.id, {
        filter: { field: '_status', op: 'eq', value: 'error' },
      } as never);
      expect(errored.items).toEqual([
        expect.objectContaining({
          _row_id: data.rowIds[5],
          input: 'capital of Fiji?',
          _status: 'error',
          _output: null,
          _error: 'http_status',
        }),
      ]);
      await domainError(
        results.queryResults(c.access, first.id, { filter: { field: 'nope', op: 'eq', value: 1 } } as never),
        'invalid_filter',
      );
    });

    it('lists runs by state and tag, and a SUT’s runs', async () => {
      const runs = s.get(RunsService);
      const listed = await runs.list(c.principal, {
        workspace_id: c.workspaceId,
        state: 'succeeded',
        tag: 'nightly',
        page: 1,
        page_size: 20,
      } as never);
      expect(listed.items.map((x) => x.id)).toEqual([first.id]);
      expect(
        (await runs.list(c.principal, { workspace_id: c.workspaceId, tag: 'weekly', page: 1, page_size: 20 } as never))
          .total,
      ).toBe(0);
      const ofSut = await runs.sutRuns(c.access, sutId, { page: 1, page_size: 20 } as never);
      expect(ofSut.items.map((x) => x.id)).toContain(first.id);
      await domainError(
        runs.list(c.principal, { workspace_id: c.workspaceId, sut_id: randomUUID(), page: 1, page_size: 20 } as never),
        'not_found',
        { resource: 'SUT' },
      );
    });

    it('answers not_found for a session the run does not have', async () => {
      await domainError(s.get(ResultsService).session(c.access, first.id, 'none'), 'not_found', {
        resource: 'session',
      });
    });
  });

  describe('RunsService.rerun and DiffService', () => {
    let errorsRerun: RunResponse;
    let again: RunResponse;
    beforeAll(async () => {
      answers = { ...answers, Fiji: 'Suva' };
      errorsRerun = await s.get(RunsService).rerun(c.access, first.id, { mode: 'errors' }, c.principal);
      errorsRerun = await execute(errorsRerun.id);
      answers = { ...answers, France: 'Lyon', Peru: 'Lima' };
      again = await execute((await s.get(RunsService).rerun(c.access, first.id, {}, c.principal)).id);
    });

    it('reruns only the rows whose call failed, and says so on both runs', async () => {
      expect(errorsRerun).toEqual(
        expect.objectContaining({
          state: 'succeeded',
          rerun_of: first.id,
          rerun_mode: 'errors',
          progress: expect.objectContaining({ total: 1, completed: 1, errored: 0 }),
        }),
      );
      expect(await s.query(`SELECT row_id, status, output FROM run_items WHERE run_id = $1`, [errorsRerun.id])).toEqual(
        [{ row_id: data.rowIds[5], status: 'done', output: 'Suva' }],
      );
      const started = await s.query<{ data: Record<string, unknown> }>(
        `SELECT data FROM run_events WHERE run_id = $1 AND type = 'rerun_started' ORDER BY id`,
        [first.id],
      );
      expect(started.map((e) => e.data)).toEqual([
        { run_id: errorsRerun.id, mode: 'errors' },
        { run_id: again.id, mode: 'all' },
      ]);
      expect(await audit(errorsRerun.id)).toEqual([
        { action: 'run.rerun', details: { rerun_of: first.id, mode: 'errors', items: 1 } },
      ]);
      expect(again.progress.total).toBe(6);
    });

    it('refuses a rerun of errors when no call failed, leaving no run behind', async () => {
      const before = await s.query(`SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1`, [c.workspaceId]);
      await domainError(
        s.get(RunsService).rerun(c.access, again.id, { mode: 'errors' }, c.principal),
        'nothing_to_rerun',
      );
      expect(await s.query(`SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1`, [c.workspaceId])).toEqual(
        before,
      );
    });

    it('compares two runs row by row, filters by status, and exports the same rows', async () => {
      const diffs = s.get(DiffService);
      const query = { base: first.id, candidate: again.id };
      const diff = await diffs.diff(c.access, query as never);
      expect(diff.summary).toEqual(expect.objectContaining({ rows: 6, regressed: 1, improved: 2, unchanged: 3 }));
      expect(diff.rows.slice(0, 3).map((x) => [x.row_id, x.status])).toEqual([
        [data.rowIds[0], 'regressed'],
        [data.rowIds[3], 'improved'],
        [data.rowIds[5], 'improved'],
      ]);
      const regressed = await diffs.diff(c.access, { ...query, status: 'regressed' } as never);
      expect(regressed.total).toBe(1);
      expect(regressed.rows[0].metrics).toEqual(
        expect.objectContaining({
          exact_match: { base: 1, candidate: 0, delta: -1, base_passed: true, candidate_passed: false },
        }),
      );
      const row = await diffs.row(c.access, { ...query, row_id: data.rowIds[0] } as never);
      expect(row).toEqual(
        expect.objectContaining({
          status: 'regressed',
          input: 'capital of France?',
          expected_output: 'Paris',
          base: expect.objectContaining({ output: 'Paris', passed: true }),
          candidate: expect.objectContaining({ output: 'Lyon', passed: false }),
        }),
      );
      const text = async (file: { chunks: AsyncIterable<string | Buffer> | Iterable<string | Buffer> }) => {
        let out = '';
        for await (const chunk of file.chunks) out += chunk.toString();
        return out;
      };
      const csv = (await text(await diffs.export(c.access, query as never, 'csv'))).split('\r\n');
      expect(csv[0]).toBe(
        'row_id,status,base_passed,candidate_passed,output_changed,exact_match_base,exact_match_candidate,exact_match_delta,f1_base,f1_candidate,f1_delta,latency_base,latency_candidate,latency_delta',
      );
      expect(csv[1]).toMatch(new RegExp(`^${data.rowIds[0]},regressed,true,false,true,1,0,-1,`));
      const json = JSON.parse(await text(await diffs.export(c.access, query as never, 'json'))) as { rows: unknown[] };
      expect(json.rows).toHaveLength(6);
    });

    it('answers not_found for a run of the pair that is not the workspace’s', async () => {
      await domainError(
        s.get(DiffService).diff(c.access, { base: first.id, candidate: randomUUID() } as never),
        'not_found',
      );
    });
  });

  describe('RunsService.create', () => {
    it('asks for an eval config or metrics before resolving anything', async () => {
      await domainError(create({ dataset_id: randomUUID() }), 'metrics_required');
    });
  });

  describe('RunsService.cancel', () => {
    it('cancels a queued run: its job, an event and an audit row; a second cancel is refused', async () => {
      const runs = s.get(RunsService);
      const run = await create({ metrics: ['exact_match'] });
      const cancelled = await runs.cancel(c.access, run.id, c.principal);
      expect(cancelled).toEqual(expect.objectContaining({ state: 'cancelled', cancel_requested: true }));
      expect(await s.query(`SELECT status FROM jobs WHERE target_id = $1 AND type = 'runs.execute'`, [run.id])).toEqual(
        [{ status: 'cancelled' }],
      );
      const events = await s.query<{ type: string }>(`SELECT type FROM run_events WHERE run_id = $1 ORDER BY id`, [
        run.id,
      ]);
      expect(events.map((e) => e.type)).toContain('cancel_requested');
      expect((await audit(run.id)).map((a) => a.action)).toEqual(['run.created', 'run.cancelled']);
      await domainError(runs.cancel(c.access, run.id, c.principal), 'run_not_active');
    });

    it('refuses to rerun a run that has not ended', async () => {
      const run = await create({ metrics: ['exact_match'] });
      await domainError(s.get(RunsService).rerun(c.access, run.id, {}, c.principal), 'run_still_active');
      await s.get(RunsService).cancel(c.access, run.id, c.principal);
    });
  });

  describe('RunsService.upload: an offline run', () => {
    let run: RunResponse;
    let items: Array<{ row_id: string; row: { expected_output: string } }>;
    beforeAll(async () => {
      const offline = await connection({ name: 'batch', kind: 'offline' });
      run = await create({
        connection_id: offline,
        metrics: ['exact_match', 'contains'],
        sample: { size: 3, seed: 7 },
      });
      items = (await s.get(ResultsService).queryResults(c.access, run.id, {} as never)).items as never;
    });

    it('awaits an upload of its sampled rows, without a job', async () => {
      expect(run).toEqual(
        expect.objectContaining({ state: 'awaiting_upload', progress: expect.objectContaining({ total: 3 }) }),
      );
      expect(items).toHaveLength(3);
      expect(await s.query(`SELECT count(*)::int AS n FROM jobs WHERE target_id = $1`, [run.id])).toEqual([{ n: 0 }]);
      expect(await s.get(RunQueueService).view(c.access)).toEqual(
        expect.objectContaining({ awaiting_upload: 1, running: [] }),
      );
    });

    it('refuses row ids the run does not have, writing none of the upload', async () => {
      const stranger = randomUUID();
      await domainError(
        s.get(RunsService).upload(
          c.access,
          run.id,
          {
            results: [
              { row_id: items[0].row_id, output: 'x' },
              { row_id: stranger, output: 'x' },
            ],
          } as never,
          c.principal,
        ),
        'upload_invalid',
        { unknown_row_ids: [stranger] },
      );
      expect(
        await s.query(`SELECT count(*)::int AS n FROM run_items WHERE run_id = $1 AND output IS NOT NULL`, [run.id]),
      ).toEqual([{ n: 0 }]);
    });

    it('keeps awaiting with complete: false, queues on the last part, and scores a missing row as not uploaded', async () => {
      const runs = s.get(RunsService);
      const partial = await runs.upload(
        c.access,
        run.id,
        {
          results: [{ row_id: items[0].row_id, output: items[0].row.expected_output, latency_ms: 12 }],
          complete: false,
        } as never,
        c.principal,
      );
      expect(partial.state).toBe('awaiting_upload');
      const queued = await runs.upload(
        c.access,
        run.id,
        { results: [{ row_id: items[1].row_id, output: 'wrong' }] } as never,
        c.principal,
      );
      expect(queued.state).toBe('queued');
      const uploads = await s.query<{ type: string; data: Record<string, unknown> }>(
        `SELECT type, data FROM run_events WHERE run_id = $1 AND type IN ('upload_received', 'state_changed') ORDER BY id`,
        [run.id],
      );
      expect(uploads.map((e) => [e.type, e.data.complete ?? e.data.to])).toEqual([
        ['state_changed', 'awaiting_upload'],
        ['upload_received', false],
        ['upload_received', true],
        ['state_changed', 'queued'],
      ]);
      const done = await execute(run.id);
      expect(done.progress).toEqual(expect.objectContaining({ total: 3, completed: 2, errored: 1 }));
      const missing = await s.get(ResultsService).queryResults(c.access, run.id, {
        filter: { field: 'status', op: 'eq', value: 'error' },
      } as never);
      expect(missing.items).toEqual([
        expect.objectContaining({ row_id: items[2].row_id, error: expect.objectContaining({ code: 'not_uploaded' }) }),
      ]);
      await domainError(
        runs.upload(c.access, run.id, { results: [{ row_id: items[0].row_id, output: 'x' }] } as never, c.principal),
        'run_not_awaiting_upload',
      );
    });

    it('filters and sorts the table on the very columns it answers with', async () => {
      const table = (body: Record<string, unknown>) =>
        s.get(ResultsService).queryTable(c.access, run.id, body as never) as Promise<{
          items: Array<Record<string, unknown>>;
        }>;
      const all = (await table({})).items;
      expect(Object.keys(all[0])).toEqual(
        expect.arrayContaining([
          '_row_id',
          'input',
          'expected_output',
          '_status',
          '_output',
          '_passed',
          '_score.exact_match',
          '_score.contains',
        ]),
      );
      expect((await table({ filter: { field: '_passed', op: 'eq', value: true } })).items).toEqual([
        expect.objectContaining({ _row_id: items[0].row_id, _passed: true, '_score.exact_match': 1 }),
      ]);
      expect(
        (await table({ filter: { field: 'expected_output', op: 'eq', value: items[1].row.expected_output } })).items,
      ).toEqual([expect.objectContaining({ _row_id: items[1].row_id, _output: 'wrong', _passed: false })]);
      expect(
        (await table({ filter: { field: '_error', op: 'eq', value: 'not_uploaded' } })).items.map((x) => x._row_id),
      ).toEqual([items[2].row_id]);
      const sorted = await table({
        filter: { field: '_status', op: 'eq', value: 'done' },
        sort: [{ field: '_score.exact_match', direction: 'desc' }],
      });
      expect(sorted.items.map((x) => x._row_id)).toEqual([items[0].row_id, items[1].row_id]);
      const unknown = await domainError(
        table({ filter: { field: 'passed', op: 'eq', value: true } }),
        'invalid_filter',
      );
      expect(unknown.message).toContain('"_passed"');
    });
  });

  describe('GateService.record: recorded verdicts and the last good run', () => {
    it('records a verdict once per inputs and outcome, audits it, and lists runs by their newest verdict of a label', async () => {
      const gates = s.get(GateService);
      const record = (runId: string, body: object) => gates.record(c.access, runId, body as never, c.principal);
      const lastGood = async (filter: object) =>
        (
          await s.get(RunsService).list(c.principal, {
            workspace_id: c.workspaceId,
            sut_id: sutId,
            dataset_id: data.datasetId,
            page: 1,
            page_size: 10,
            ...filter,
          } as never)
        ).items.map((r) => r.id);
      // Half the rows right: the eval config's pass rule (0.5) passes; France wrong too: it fails.
      const good = await execute((await create({ eval_config_id: evalConfigId })).id);
      answers = { ...capitalAnswers(), France: 'Lyon' };
      const bad = await execute((await create({ eval_config_id: evalConfigId })).id).finally(() => {
        answers = capitalAnswers();
      });

      const first = await record(good.id, { label: 'main' });
      expect(first.created).toBe(true);
      expect(first.response.record).toEqual(
        expect.objectContaining({ run_id: good.id, label: 'main', verdict: 'pass', recorded_by: c.principal.userId }),
      );
      const again = await record(good.id, { label: 'main' });
      expect(again.created).toBe(false);
      expect(again.response.record).toEqual(first.response.record);
      expect((await audit(good.id)).map((a) => a.action)).toEqual(['run.created', 'run.gate_recorded']);
      expect((await record(bad.id, { label: 'main', baseline_run_id: good.id })).response.record.verdict).toBe('fail');

      // The last good run of `main` is not the newer run whose gate failed.
      expect(await lastGood({ gate_verdict: 'pass', gate_label: 'main' })).toEqual([good.id]);
      expect(await lastGood({ gate_verdict: 'fail' })).toEqual([bad.id]);
      // The run's newest verdict of the label decides: a later failure of the good run takes it out.
      await s.query(`UPDATE run_gate_verdicts SET recorded_at = recorded_at - interval '1 hour' WHERE run_id = $1`, [
        good.id,
      ]);
      await s.query(
        `INSERT INTO run_gate_verdicts (workspace_id, run_id, label, alpha, verdict, failures, warnings, passed, skipped, fingerprint)
         VALUES ($1, $2, 'main', 0.05, 'fail', 1, 0, 0, 0, 'later')`,
        [c.workspaceId, good.id],
      );
      expect(await lastGood({ gate_verdict: 'pass', gate_label: 'main' })).toEqual([]);
      expect(await lastGood({ gate_label: 'main' })).toEqual([bad.id, good.id]);
      expect((await gates.list(c.access, good.id)).map((v) => v.verdict)).toEqual(['fail', 'pass']);

      const queued = await create({ eval_config_id: evalConfigId });
      await domainError(record(queued.id, {}), 'gate_run_not_finished', { run_id: queued.id });
      await domainError(record(good.id, { baseline_run_id: randomUUID() }), 'not_found');
    });
  });
});
