import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { agentTrace, genAiTrace, otlpJson, recordTraces } from '../../utils/otel-traces.js';
import { expectProblem } from '../../utils/problem.js';
import { followLocation } from '../../utils/accepted.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

describe('trace source connections', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let source: FakeUpstream;
  const secret = async (name: string, value: string) =>
    (await t.http.post(`/workspaces/${ws}/secrets`).set(r.owner.auth).send({ name, value }).expect(201)).body
      .id as string;

  const settled = (runId: string) => landingSettled(t, r.viewer.auth, runId);

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    source = await FakeUpstream.start();
  });
  afterAll(async () => {
    await source?.close();
    await t?.close();
  });

  it('pulls an OTLP/JSON Lines file from a URL with the bearer token of a secret', async () => {
    const lines = [otlpJson(recordTraces([agentTrace('s-1', 'q1')])), otlpJson(recordTraces([genAiTrace('c-1')]))]
      .map((x) => JSON.stringify(x))
      .join('\n');
    source.on('GET', '/exports/traces.jsonl', (req) =>
      req.headers.authorization === 'Bearer file-token'
        ? { text: lines, headers: { 'content-type': 'application/x-ndjson' } }
        : { status: 401, json: { error: 'unauthorised' } },
    );
    const token = await secret('OTLP_TOKEN', 'file-token');
    const connection = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'collector file',
          kind: 'otlp_file_url',
          url: source.url('/exports/traces.jsonl'),
          secret_id: token,
        })
        .expect(201)
    ).body;
    expect(connection).toEqual(
      expect.objectContaining({ kind: 'otlp_file_url', secret_id: token, page_size: 100, last_landed_at: null }),
    );
    expect(JSON.stringify(connection)).not.toContain('file-token');
    const landing = await t.http
      .post(`/traces/connections/${connection.id}/land`)
      .set(r.member.auth)
      .send({ dataset_name: 'pulled' })
      .expect(202);
    await followLocation(t, landing, r.viewer.auth);
    const run = await settled(landing.body.id);
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        counts: { received: 6, landed: 6, deduplicated: 0, dropped: 0, pending: 0 },
        conventions: { openinference: 5, genai: 1 },
        traces: 2,
      }),
    );
    const listed = (await t.http.get('/traces/connections').query({ workspace_id: ws }).set(r.viewer.auth).expect(200))
      .body;
    expect(listed.find((c: { id: string }) => c.id === connection.id).last_landed_at).not.toBeNull();

    // A connection with a dataset lands there unless the landing names another target.
    const bound = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'bound file',
          kind: 'otlp_file_url',
          url: source.url('/exports/traces.jsonl'),
          secret_id: token,
          dataset_id: run.dataset_id,
        })
        .expect(201)
    ).body;
    const into = await settled(
      (await t.http.post(`/traces/connections/${bound.id}/land`).set(r.member.auth).send({}).expect(202)).body.id,
    );
    expect(into).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        dataset_id: run.dataset_id,
        counts: { received: 6, landed: 0, deduplicated: 6, dropped: 0, pending: 0 },
      }),
    );
    const elsewhere = await settled(
      (
        await t.http
          .post('/traces/land')
          .set(r.member.auth)
          .send({ workspace_id: ws, connection_id: bound.id, dataset_name: 'copy' })
          .expect(202)
      ).body.id,
    );
    expect(elsewhere.dataset_id).not.toBe(run.dataset_id);
    expect(elsewhere.counts.landed).toBe(6);

    // A source that refuses the credentials fails the run, with the reason; nothing lands.
    const wrong = await secret('WRONG_TOKEN', 'nope');
    const refused = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'wrong key',
          kind: 'otlp_file_url',
          url: source.url('/exports/traces.jsonl'),
          secret_id: wrong,
        })
        .expect(201)
    ).body;
    const failed = await settled(
      (
        await t.http
          .post('/traces/land')
          .set(r.member.auth)
          .send({ workspace_id: ws, connection_id: refused.id, dataset_name: 'pulled' })
          .expect(202)
      ).body.id,
    );
    expect(failed).toEqual(
      expect.objectContaining({
        state: 'failed',
        version_id: null,
        error: expect.objectContaining({ code: 'source_error' }),
      }),
    );
    expect(failed.error.message).toContain('401');
  });

  it("pages through a Langfuse-compatible API: traces, then each trace's observations, with Basic auth", async () => {
    const traces = [
      { id: 'lf-t1', name: 'support', sessionId: 'sess-1', userId: 'user-1' },
      { id: 'lf-t2', name: 'support', sessionId: 'sess-2', userId: 'user-2' },
    ];
    const observations: Record<string, unknown[]> = {
      'lf-t1': [
        {
          id: 'o1',
          traceId: 'lf-t1',
          type: 'SPAN',
          name: 'agent',
          startTime: '2026-11-01T10:00:00.000Z',
          endTime: '2026-11-01T10:00:02.000Z',
          input: { q: 'hi' },
          output: 'bye',
        },
        {
          id: 'o2',
          traceId: 'lf-t1',
          parentObservationId: 'o1',
          type: 'GENERATION',
          name: 'llm',
          startTime: '2026-11-01T10:00:00.500Z',
          endTime: '2026-11-01T10:00:01.500Z',
          model: 'gpt-4o',
          usage: { input: 30, output: 5, total: 35 },
          calculatedTotalCost: 0.0002,
          input: [{ role: 'user', content: 'hi' }],
          output: { role: 'assistant', content: 'bye' },
        },
      ],
      'lf-t2': [
        {
          id: 'o3',
          traceId: 'lf-t2',
          type: 'GENERATION',
          name: 'llm',
          startTime: '2026-11-01T11:00:00.000Z',
          endTime: '2026-11-01T11:00:01.000Z',
          model: 'gpt-4o',
          level: 'ERROR',
          statusMessage: 'rate limited',
        },
      ],
    };
    const basic = `Basic ${Buffer.from('pk-lf-1:sk-lf-1').toString('base64')}`;
    source.on('GET', '/api/public/traces', (req) => {
      if (req.headers.authorization !== basic) return { status: 401, json: {} };
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      return { json: { data: traces.slice(page - 1, page), meta: { page, limit: 1, totalItems: 2, totalPages: 2 } } };
    });
    source.on('GET', '/api/public/observations', (req) => {
      const traceId = new URL(req.url, 'http://x').searchParams.get('traceId')!;
      return { json: { data: observations[traceId], meta: { page: 1, totalPages: 1 } } };
    });
    const pk = await secret('LF_PUBLIC', 'pk-lf-1');
    const sk = await secret('LF_SECRET', 'sk-lf-1');
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({ workspace_id: ws, name: 'langfuse', kind: 'langfuse', url: source.url(), secret_id: sk }),
      400,
      'trace_connection_invalid',
    );
    const connection = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'langfuse',
          kind: 'langfuse',
          url: source.url(),
          secret_id: sk,
          public_key_secret_id: pk,
          page_size: 1,
        })
        .expect(201)
    ).body;
    const run = await settled(
      (
        await t.http
          .post(`/traces/connections/${connection.id}/land`)
          .set(r.member.auth)
          .send({ dataset_name: 'langfuse traces' })
          .expect(202)
      ).body.id,
    );
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        counts: { received: 3, landed: 3, deduplicated: 0, dropped: 0, pending: 0 },
        conventions: { langfuse: 3 },
        traces: 2,
      }),
    );
    expect(source.received('GET', '/api/public/traces')).toHaveLength(2);
    const spans = (
      await t.http
        .post(`/datasets/${run.dataset_id}/versions/${run.version_id}/query`)
        .set(r.viewer.auth)
        .send({})
        .expect(200)
    ).body.items;
    const llm = spans.find((s: { span_id: string }) => s.span_id === 'o2');
    expect(llm).toEqual(
      expect.objectContaining({
        trace_id: 'lf-t1',
        parent_span_id: 'o1',
        kind: 'llm',
        model: 'gpt-4o',
        tokens_input: 30,
        tokens_output: 5,
        cost: 0.0002,
        session_id: 'sess-1',
        user_id: 'user-1',
        duration_ms: 1000,
      }),
    );
    expect(spans.find((s: { span_id: string }) => s.span_id === 'o3')).toEqual(
      expect.objectContaining({ status: 'error', error: 'rate limited' }),
    );
  });

  it("follows a Phoenix-compatible API's cursor through a project's spans", async () => {
    const span = (id: string, parent: string | null, kind: string, extra: Record<string, unknown> = {}) => ({
      name: `${kind.toLowerCase()}-${id}`,
      context: { trace_id: 'ph-trace-1', span_id: id },
      parent_id: parent,
      span_kind: kind,
      start_time: '2026-11-01T09:00:00.000000+00:00',
      end_time: '2026-11-01T09:00:00.250000+00:00',
      status_code: 'OK',
      attributes: { 'input.value': 'q', ...extra },
    });
    source.on('GET', '/v1/projects/support-bot/spans', (req) => {
      if (req.headers.authorization !== 'Bearer phx-key') return { status: 403, json: {} };
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      return cursor === 'page-2'
        ? { json: { data: [span('p3', 'p1', 'TOOL', { 'tool.name': 'search' })], next_cursor: null } }
        : {
            json: {
              data: [
                span('p1', null, 'CHAIN'),
                span('p2', 'p1', 'LLM', { 'llm.model_name': 'gpt-4o-mini', 'llm.token_count.prompt': 7 }),
              ],
              next_cursor: 'page-2',
            },
          };
    });
    const key = await secret('PHOENIX_KEY', 'phx-key');
    const connection = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'phoenix',
          kind: 'phoenix',
          url: source.url(),
          secret_id: key,
          project: 'support-bot',
        })
        .expect(201)
    ).body;
    expect(connection.project).toBe('support-bot');
    const run = await settled(
      (
        await t.http
          .post(`/traces/connections/${connection.id}/land`)
          .set(r.member.auth)
          .send({ dataset_name: 'phoenix traces' })
          .expect(202)
      ).body.id,
    );
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        counts: { received: 3, landed: 3, deduplicated: 0, dropped: 0, pending: 0 },
        conventions: { openinference: 3 },
      }),
    );
    const graph = (
      await t.http.get(`/datasets/${run.dataset_id}/versions/${run.version_id}/topology`).set(r.viewer.auth).expect(200)
    ).body;
    expect(graph.edges.map((e: { source: string; target: string }) => `${e.source} -> ${e.target}`).sort()).toEqual([
      'chain:chain-p1 -> llm:llm-p2',
      // The tool span is named by its tool (tool.name), not by its span name `tool-p3`.
      'chain:chain-p1 -> tool:search',
    ]);
  });

  it('lands in bounded transactions: while a landing waits on its source, other writers to the dataset go ahead and nothing of it is visible', async () => {
    const span = (id: string) => ({
      context: { trace_id: 'hold-trace', span_id: id },
      name: `step-${id}`,
      span_kind: 'CHAIN',
      parent_id: null,
      start_time: '2026-11-01T09:00:00.000000+00:00',
      end_time: '2026-11-01T09:00:00.250000+00:00',
      status_code: 'OK',
      attributes: { 'input.value': `q ${id}` },
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The first landing's source answers at once; the second's second page only when the test lets it go.
    let holding = false;
    source.on('GET', '/v1/projects/held/spans', (req) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      if (!holding) return { json: { data: [span('h1')], next_cursor: null } };
      return cursor === 'page-2'
        ? { json: { data: [span('h3')], next_cursor: null }, until: held }
        : { json: { data: [span('h1'), span('h2')], next_cursor: 'page-2' } };
    });
    const connection = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({ workspace_id: ws, name: 'held', kind: 'phoenix', url: source.url(), project: 'held' })
        .expect(201)
    ).body;
    const first = await settled(
      (
        await t.http
          .post(`/traces/connections/${connection.id}/land`)
          .set(r.member.auth)
          .send({ dataset_name: 'held traces' })
          .expect(202)
      ).body.id,
    );
    expect(first).toEqual(
      expect.objectContaining({ state: 'succeeded', counts: expect.objectContaining({ landed: 1 }) }),
    );
    const datasetId = first.dataset_id;

    holding = true;
    const second = (
      await t.http
        .post(`/traces/connections/${connection.id}/land`)
        .set(r.member.auth)
        .send({ dataset_id: datasetId })
        .expect(202)
    ).body.id;
    for (
      let i = 0;
      !source.received('GET', '/v1/projects/held/spans').some((q) => q.url.includes('cursor=page-2'));
      i++
    ) {
      if (i > 600) throw new Error('the landing never asked for the second page');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The landing has reserved version 2 and is reading its source: writers that make no version go ahead.
    const got = await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200);
    expect(got.body).toEqual(
      expect.objectContaining({
        version_count: 1,
        latest_version: expect.objectContaining({ number: 1, row_count: 1 }),
      }),
    );
    await t.http
      .patch(`/datasets/${datasetId}`)
      .set(r.member.auth)
      .set('If-Match', got.headers.etag)
      .send({ tags: ['traces', 'held'] })
      .expect(200);
    await t.http.post(`/datasets/${datasetId}/versions/${first.version_id}/promote`).set(r.member.auth).expect(200);
    // Making a version waits for the landing: an upload into the dataset is refused meanwhile.
    expectProblem(
      await t.http
        .post('/datasets/upload')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .field('dataset_id', datasetId)
        .attach('file', Buffer.from('a\n1\n'), 'x.csv'),
      409,
      'dataset_busy',
    );
    expect((await t.http.get(`/traces/runs/${second}`).set(r.viewer.auth).expect(200)).body.state).toBe('running');
    expect((await t.http.get(`/datasets/${datasetId}/versions`).set(r.viewer.auth).expect(200)).body.total).toBe(1);

    release();
    const done = await settled(second);
    // h1 was landed by the first landing: counted as deduplicated, written once.
    expect(done).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        counts: { received: 3, landed: 2, deduplicated: 1, dropped: 0, pending: 0 },
      }),
    );
    const after = (await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200)).body;
    expect(after).toEqual(
      expect.objectContaining({
        tags: ['traces', 'held'],
        current_version_id: first.version_id,
        version_count: 2,
        latest_version: expect.objectContaining({ id: done.version_id, number: 2, row_count: 3 }),
      }),
    );
    // The number is released: the dataset takes new versions again.
    await t.http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .field('dataset_id', datasetId)
      .attach('file', Buffer.from('a\n1\n'), 'x.csv')
      .expect(201);
  });

  it('never calls a cloud metadata address: the landing fails at once, saying why', async () => {
    const connection = (
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({
          workspace_id: ws,
          name: 'metadata',
          kind: 'otlp_file_url',
          url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
        })
        .expect(201)
    ).body;
    const run = await settled(
      (
        await t.http
          .post(`/traces/connections/${connection.id}/land`)
          .set(r.member.auth)
          .send({ dataset_name: 'stolen' })
          .expect(202)
      ).body.id,
    );
    expect(run).toEqual(
      expect.objectContaining({
        state: 'failed',
        version_id: null,
        error: expect.objectContaining({ code: 'source_unreachable' }),
      }),
    );
    expect(run.error.message).toContain('169.254.169.254 is a linkLocal address; the service never calls one');
  });

  it('checks connections: secrets of the workspace, admins for secrets, unique names, roles', async () => {
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({ workspace_id: ws, name: 'x', kind: 'phoenix', url: 'ftp://nope' }),
      400,
      'validation_failed',
    );
    // PostgreSQL stores no NUL character: a clear 400, never a 500.
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({ workspace_id: ws, name: 'nul\u0000name', kind: 'phoenix', url: source.url() }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post('/traces/connections').set(r.owner.auth).send({
        workspace_id: ws,
        name: 'x',
        kind: 'phoenix',
        url: source.url(),
        secret_id: '00000000-0000-4000-8000-000000000000',
      }),
      400,
      'unknown_secret',
    );
    const key = await secret('ANOTHER', 'v');
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', kind: 'phoenix', url: source.url(), secret_id: key }),
      403,
      'secret_use_requires_admin',
    );
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.owner.auth)
        .send({ workspace_id: ws, name: 'PHOENIX', kind: 'phoenix', url: source.url() }),
      409,
      'trace_connection_name_taken',
    );
    expectProblem(
      await t.http
        .post('/traces/connections')
        .set(r.viewer.auth)
        .send({ workspace_id: ws, name: 'y', kind: 'phoenix', url: source.url() }),
      403,
    );
    expectProblem(await t.http.get('/traces/connections').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.get('/traces/connections').query({ workspace_id: ws }).set(r.outsider.auth), 403);
  });
});
