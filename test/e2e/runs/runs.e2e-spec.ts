import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parquetReadObjects } from 'hyparquet';
import { PNG } from 'pngjs';
import { randomUUID } from 'node:crypto';
import { verifyWebhook } from '#libs/common/webhook-signature.js';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { followLocation } from '../../utils/accepted.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { CAPITAL_ROWS, CAPITALS_EVAL_CONFIG, capitalAnswers } from '../../factories/capitals.js';
import { endedRun } from '../../utils/suts.js';

type Run = {
  id: string;
  state: string;
  progress: { total: number; completed: number; errored: number; pending: number };
  passed: boolean | null;
  summary: Record<string, unknown> | null;
};

describe('runs', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let hooks: FakeUpstream;
  let data: UploadedDataset;
  let sutId: string;
  let connectionId: string;
  let evalConfigId: string;
  let firstRun: Run;
  let again: Run;
  /** The SUT under test: right for most rows, wrong for Peru and Chile, and a 500 for Fiji. */
  let answers = capitalAnswers();

  const settled = (id: string, auth = r.viewer.auth) => endedRun<Run>(t, auth, id, 20_000);

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    hooks = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const country = /of (\w+)\?/.exec((req.body as { question: string }).question)?.[1] ?? '';
      const answer = answers[country];
      return answer === null || answer === undefined
        ? { status: 500, text: 'model crashed' }
        : { json: { answer, usage: { in: 10, out: 2 } } };
    });
    hooks.on('POST', '/hook', { status: 204 });
    data = await uploadRows(t, r.member.auth, ws, CAPITAL_ROWS, 'capitals.json');
    sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'geo-bot' }).expect(201)).body
      .id;
    connectionId = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({
          name: 'api',
          kind: 'http',
          http: { url: sut.url('/answer') },
          max_concurrency: 4,
          retry: { max_attempts: 2, initial_backoff_ms: 1 },
        })
        .expect(201)
    ).body.id;
    await t.http
      .post(`/suts/${sutId}/connections/${connectionId}/adapter`)
      .set(r.member.auth)
      .send({
        request: { body: { question: '{{input}}' } },
        response: {
          language: 'jsonpath',
          output: '$.answer',
          usage: { prompt_tokens: '$.usage.in', completion_tokens: '$.usage.out' },
        },
      })
      .expect(201);
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: 'f1', kind: 'deterministic', metric: 'token_f1', threshold: 0.5 })
      .expect(201);
    evalConfigId = (
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          ...CAPITALS_EVAL_CONFIG,
        })
        .expect(201)
    ).body.id;
    await t.http
      .post('/notifications/config')
      .set(r.admin.auth)
      .send({ workspace_id: ws, name: 'ci', url: hooks.url('/hook'), events: ['run.succeeded', 'run.failed'] })
      .expect(201);
  });
  afterAll(async () => {
    await sut?.close();
    await hooks?.close();
    await t?.close();
  });

  it('runs a dataset through the SUT to its end: events, results, a Parquet export and a signed webhook', async () => {
    const started = await t.http
      .post('/runs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        dataset_id: data.datasetId,
        sut_id: sutId,
        connection_id: connectionId,
        eval_config_id: evalConfigId,
        tags: ['nightly'],
      })
      .expect(202);
    await followLocation(t, started, r.viewer.auth);
    expect(started.body).toEqual(
      expect.objectContaining({
        state: 'queued',
        connection_kind: 'http',
        adapter_revision: 1,
        eval_config_id: evalConfigId,
        progress: expect.objectContaining({ total: 6 }),
        tags: ['nightly'],
      }),
    );
    expect(started.body.metrics).toEqual([
      expect.objectContaining({ name: 'exact_match', source: expect.any(String) }),
      expect.objectContaining({ name: 'f1' }),
      expect.objectContaining({ name: 'latency' }),
    ]);
    firstRun = await settled(started.body.id);
    expect(firstRun).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        passed: true,
        progress: expect.objectContaining({ total: 6, pending: 0, percent: 100 }),
      }),
    );
    expect(firstRun.summary).toEqual(expect.objectContaining({ pass_rate: 0.5, errored: 1 }));

    const events = (await t.http.get(`/runs/${firstRun.id}/events`).query({ after: 0 }).set(r.viewer.auth).expect(200))
      .body as Array<{ seq: number; type: string; data: Record<string, unknown> }>;
    expect(events[0]).toEqual({
      seq: expect.any(Number),
      type: 'state_changed',
      data: expect.objectContaining({ from: null, to: 'queued' }),
      at: expect.any(String),
    });
    expect(events.filter((e) => e.type === 'state_changed').map((e) => e.data.to)).toEqual([
      'queued',
      'running',
      'succeeded',
    ]);

    const failed = await t.http
      .post(`/runs/${firstRun.id}/results/query`)
      .set(r.viewer.auth)
      .send({ filter: { field: 'passed', op: 'eq', value: false }, limit: 1 })
      .expect(200);
    expect(failed.body).toEqual({
      run_id: firstRun.id,
      items: [expect.objectContaining({ status: 'done', passed: false, row: expect.any(Object) })],
      total: 2,
      limit: 1,
      offset: 0,
    });
    const errored = await t.http
      .post(`/runs/${firstRun.id}/query`)
      .set(r.viewer.auth)
      .send({ filter: { field: '_status', op: 'eq', value: 'error' } })
      .expect(200);
    expect(errored.body).toEqual(
      expect.objectContaining({
        run_id: firstRun.id,
        total: 1,
        items: [expect.objectContaining({ _row_id: data.rowIds[5], _error: 'http_status' })],
      }),
    );
    expectProblem(
      await t.http
        .post(`/runs/${firstRun.id}/results/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'nope', op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
    const results = await t.http.get(`/runs/${firstRun.id}/results`).set(r.viewer.auth).expect(200);
    expect(results.body).toEqual(
      expect.objectContaining({ run_id: firstRun.id, state: 'succeeded', final: true, passed: true }),
    );
    const analysis = await t.http.get(`/runs/${firstRun.id}/analysis`).set(r.viewer.auth).expect(200);
    expect(analysis.body).toEqual(
      expect.objectContaining({
        run_id: firstRun.id,
        state: 'succeeded',
        rows: 6,
        errors: [expect.objectContaining({ code: 'http_status' })],
      }),
    );

    const link = await t.http.get(`/runs/${firstRun.id}/parquet-url`).set(r.viewer.auth).expect(200);
    const file = await t.http
      .get(new URL(link.body.url).pathname + new URL(link.body.url).search)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const bytes = file.body as Buffer;
    const parquet = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    });
    expect(parquet).toHaveLength(6);
    expect(parquet[0]).toEqual(
      expect.objectContaining({
        row_id: data.rowIds[0],
        input: 'capital of France?',
        output: 'Paris',
        score_exact_match: 1,
        passed_f1: true,
        passed: true,
      }),
    );
    expectProblem(
      await t.http.get(new URL(link.body.url).pathname).query({ expires: '1', signature: 'x' }),
      403,
      'invalid_signature',
    );

    for (let i = 0; i < 100 && hooks.received('POST', '/hook').length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const delivery = hooks.received('POST', '/hook')[0];
    expect(delivery.body).toEqual(
      expect.objectContaining({
        event: 'run.succeeded',
        data: expect.objectContaining({ run_id: firstRun.id, passed: true }),
      }),
    );
    const secretId = (await t.http.get('/notifications/config').query({ workspace_id: ws }).set(r.admin.auth)).body
      .items[0].secret_id;
    const key = (await t.http.post(`/workspaces/${ws}/secrets/${secretId}/reveal`).set(r.admin.auth).expect(200)).body
      .value;
    expect(verifyWebhook(key, JSON.stringify(delivery.body), delivery.headers['x-ews-signature'] as string)).toBe(true);
    expect(await t.dataSource.query(`SELECT status, attempts, last_status_code FROM notification_deliveries`)).toEqual([
      { status: 'delivered', attempts: 1, last_status_code: 204 },
    ]);

    const listed = await t.http
      .get('/runs')
      .query({ workspace_id: ws, state: 'succeeded', tag: 'nightly' })
      .set(r.viewer.auth)
      .expect(200);
    expect(listed.body).toEqual(
      expect.objectContaining({ items: [expect.objectContaining({ id: firstRun.id, state: 'succeeded' })], total: 1 }),
    );
    expect((await t.http.get(`/suts/${sutId}/runs`).set(r.viewer.auth).expect(200)).body).toEqual(
      expect.objectContaining({ items: [expect.objectContaining({ id: firstRun.id })], total: 1 }),
    );
  });

  it('reruns the rows whose call failed to their end, and compares two runs: the diff, one row, its image and the exports', async () => {
    answers = { ...answers, Fiji: 'Suva' };
    const rerun = await t.http
      .post(`/runs/${firstRun.id}/rerun`)
      .set(r.member.auth)
      .send({ mode: 'errors' })
      .expect(202);
    await followLocation(t, rerun, r.viewer.auth);
    expect(rerun.body).toEqual(
      expect.objectContaining({
        rerun_of: firstRun.id,
        rerun_mode: 'errors',
        state: 'queued',
      }),
    );
    expect((await settled(rerun.body.id)).state).toBe('succeeded');

    answers = { ...answers, France: 'Lyon', Peru: 'Lima' };
    again = await settled(
      (await t.http.post(`/runs/${firstRun.id}/rerun`).set(r.member.auth).send({}).expect(202)).body.id,
    );
    const diff = await t.http
      .get('/runs/diff')
      .query({ base: firstRun.id, candidate: again.id })
      .set(r.viewer.auth)
      .expect(200);
    expect(diff.body).toEqual(
      expect.objectContaining({
        base_run_id: firstRun.id,
        candidate_run_id: again.id,
        metrics: ['exact_match', 'f1', 'latency'],
        summary: expect.objectContaining({ rows: 6 }),
        total: 6,
        statistics: expect.any(Object),
      }),
    );
    const row = await t.http
      .get('/runs/diff/row')
      .query({ base: firstRun.id, candidate: again.id, row_id: data.rowIds[0] })
      .set(r.viewer.auth)
      .expect(200);
    expect(row.body).toEqual(
      expect.objectContaining({
        row_id: data.rowIds[0],
        status: 'regressed',
        base: expect.any(Object),
        candidate: expect.any(Object),
      }),
    );
    const image = await t.http
      .get('/runs/diff/row/image')
      .query({ base: firstRun.id, candidate: again.id, row_id: data.rowIds[0] })
      .set(r.viewer.auth)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(image.headers['content-type']).toBe('image/png');
    const png = PNG.sync.read(image.body as Buffer);
    expect(png.width).toBe(1200);
    const csv = await t.http
      .get('/runs/diff/export')
      .query({ base: firstRun.id, candidate: again.id })
      .set(r.viewer.auth)
      .expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toContain('.csv');
    expect(csv.text.split('\r\n')[0]).toMatch(/^row_id,status,/);
    const json = await t.http
      .get('/runs/diff/export')
      .query({ base: firstRun.id, candidate: again.id, format: 'json' })
      .set(r.viewer.auth)
      .expect(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body).toEqual(expect.objectContaining({ base_run_id: firstRun.id, rows: expect.any(Array) }));
    expectProblem(
      await t.http
        .get('/runs/diff/row')
        .query({ base: firstRun.id, candidate: again.id, row_id: randomUUID() })
        .set(r.viewer.auth),
      404,
      'diff_row_not_found',
    );
  });

  it('cancels a run mid-way: no new calls, what was done is kept', async () => {
    const slow = await FakeUpstream.start();
    slow.on('POST', '/answer', { json: { output: 'x' }, delayMs: 150 });
    const conn = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'slow', kind: 'http', http: { url: slow.url('/answer') }, max_concurrency: 1 })
        .expect(201)
    ).body.id;
    const many = await uploadRows(
      t,
      r.member.auth,
      ws,
      Array.from({ length: 30 }, (_, i) => ({ input: `q${i}`, expected_output: 'x' })),
    );
    const run = (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: many.datasetId,
          sut_id: sutId,
          connection_id: conn,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body;
    for (let i = 0; i < 100 && slow.requests.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const cancelled = await t.http.post(`/runs/${run.id}/cancel`).set(r.member.auth).expect(200);
    expect(cancelled.body).toEqual(expect.objectContaining({ state: 'cancelled', cancel_requested: true }));
    const calls = slow.requests.length;
    expect(cancelled.body.progress.completed).toBeGreaterThanOrEqual(2);
    expect(cancelled.body.progress.pending).toBeGreaterThan(20);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(slow.requests.length).toBe(calls);
    expectProblem(await t.http.post(`/runs/${run.id}/cancel`).set(r.member.auth), 409, 'run_not_active');
    await slow.close();
  });

  it('takes the outputs of an offline run by upload, as JSON or JSON Lines, and scores them', async () => {
    const offline = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: 'batch', kind: 'offline' })
        .expect(201)
    ).body.id;
    const run = (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: offline,
          metrics: ['exact_match', 'contains'],
          sample: { size: 3, seed: 7 },
        })
        .expect(202)
    ).body;
    expect(run).toEqual(expect.objectContaining({ state: 'awaiting_upload', sample: { size: 3, seed: 7 } }));
    const items = (await t.http.post(`/runs/${run.id}/results/query`).set(r.viewer.auth).send({}).expect(200)).body
      .items as Array<{ row_id: string; row: { expected_output: string } }>;
    expectProblem(
      await t.http
        .put(`/runs/${run.id}/upload`)
        .set(r.member.auth)
        .send({ results: [{ row_id: 'nope', output: 'x' }] }),
      400,
      'validation_failed',
    );
    await t.http
      .put(`/runs/${run.id}/upload`)
      .set(r.member.auth)
      .send({
        results: [{ row_id: items[0].row_id, output: items[0].row.expected_output, latency_ms: 12 }],
        complete: false,
      })
      .expect(202);
    expectProblem(
      await t.http
        .put(`/runs/${run.id}/upload`)
        .set(r.member.auth)
        .set('Content-Type', 'application/x-ndjson')
        .send(`{"row_id": "${items[1].row_id}", "output": "x"}\nnot json\n`),
      400,
      'upload_invalid',
    );
    expectProblem(
      await t.http.put(`/runs/${run.id}/upload`).set(r.member.auth).set('Content-Type', 'text/plain').send('hello'),
      415,
    );
    const uploaded = await t.http
      .put(`/runs/${run.id}/upload`)
      .set(r.member.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(`{"row_id": "${items[1].row_id}", "output": "wrong"}\n\n`)
      .expect(202);
    await followLocation(t, uploaded, r.viewer.auth);
    expect(uploaded.body.state).toBe('queued');
    const done = await settled(run.id);
    expect(done.state).toBe('succeeded');
    expectProblem(
      await t.http
        .put(`/runs/${run.id}/upload`)
        .set(r.member.auth)
        .send({ results: [{ row_id: items[0].row_id, output: 'x' }] }),
      409,
      'run_not_awaiting_upload',
    );
  });

  it('shows the queue and answers 400, 401, 403 and 404', async () => {
    const queue = await t.http.get('/runs/queue').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(queue.body).toEqual({ workspace_id: ws, running: [], waiting: [], awaiting_upload: 0 });
    const body = {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['exact_match'],
    };
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, metrics: undefined }),
      400,
      'metrics_required',
    );
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, metrics: ['meteor'] }),
      400,
      'run_input_invalid',
    );
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, metrics: ['correctness'] }),
      400,
      'judge_required',
    );
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, dataset_id: randomUUID() }),
      400,
      'unknown_row_source',
    );
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, concurrency: 0 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({ ...body, state: 'succeeded' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(`/runs/${again.id}/rerun`).set(r.member.auth).send({ mode: 'errors' }),
      409,
      'nothing_to_rerun',
    );
    expectProblem(await t.http.post('/runs').set(r.viewer.auth).send(body), 403);
    expectProblem(await t.http.post('/runs').set(r.outsider.auth).send(body), 403);
    expectProblem(await t.http.get(`/runs/${firstRun.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.post(`/runs/${firstRun.id}/rerun`).set(r.viewer.auth).send({}), 403);
    expectProblem(
      await t.http.get('/runs/diff').query({ base: firstRun.id, candidate: firstRun.id }).set(r.outsider.auth),
      403,
    );
    expectProblem(await t.http.post('/runs').send(body), 401);
    expectProblem(await t.http.get(`/runs/${firstRun.id}/events`), 401);
    expectProblem(await t.http.get(`/runs/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(
      await t.http.get('/runs/diff').query({ base: firstRun.id }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get('/runs/not-a-uuid').set(r.viewer.auth), 400);
  });
});
