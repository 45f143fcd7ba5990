import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RowsRepository } from '#src/modules/datasets/rows/rows.repository.js';
import { SPAN_COLUMNS } from '#src/modules/traces/trace-datasets.service.js';
import { uploadRows } from '../../utils/datasets.js';
import { agentTrace, genAiTrace, otlpJson, otlpProtobuf, recordTraces } from '../../utils/otel-traces.js';
import { expectProblem } from '../../utils/problem.js';
import { followLocation } from '../../utils/accepted.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

describe('trace ingestion', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  // Two agent traces (5 spans each) from the OpenTelemetry SDK with OpenInference attributes.
  const agentSpans = recordTraces([
    agentTrace('s-1', 'Where is my order A1?'),
    agentTrace('s-2', 'When does A1 ship?'),
  ]);
  const traceA = agentSpans.find((s) => s.name === 'support-agent')!.spanContext().traceId;

  const settled = (runId: string) => landingSettled(t, r.viewer.auth, runId);

  async function enriched(datasetId: string, versionId: string): Promise<Record<string, any>> {
    for (let i = 0; i < 400; i++) {
      const status = (
        await t.http.get(`/datasets/${datasetId}/versions/${versionId}/trace-enrichment`).set(r.viewer.auth).expect(200)
      ).body;
      if (['succeeded', 'failed'].includes(status.state)) return status;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the enrichment did not finish');
  }

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  let upload: Record<string, any>;
  let datasetId: string;
  let versionId: string;

  it('detects the convention of an OTLP/JSON sample: confidence, how each attribute maps, and what is kept aside', async () => {
    const res = await t.http
      .post('/traces/conventions:detect')
      .set(r.viewer.auth)
      .send({ workspace_id: ws, records: [otlpJson(agentSpans)] })
      .expect(200);
    expect(res.body).toEqual(expect.objectContaining({ convention: 'openinference', span_count: 10, sampled: 10 }));
    expect(res.body.confidence).toBeGreaterThan(0.9);
    const mapping = (field: string) => res.body.field_mappings.find((m: { field: string }) => m.field === field);
    expect(mapping('model')).toEqual(
      expect.objectContaining({ source_attributes: ['llm.model_name'], spans_mapped: 2 }),
    );
    expect(mapping('session_id')).toEqual(expect.objectContaining({ source_attributes: ['session.id'] }));
    expect(mapping('tokens_input').spans_mapped).toBe(2);
    expect(res.body.unmapped_attributes).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: 'app.release', spans: 2, fate: 'kept' })]),
    );

    const genai = await t.http
      .post('/traces/conventions:detect')
      .set(r.viewer.auth)
      .send({ workspace_id: ws, records: [otlpJson(recordTraces([genAiTrace('c-9')]))] })
      .expect(200);
    expect(genai.body.convention).toBe('genai');
  });

  it('uploads an OTLP/protobuf file, detects it, and lands it into a new trace dataset; landing it again writes nothing', async () => {
    const res = await t.http
      .post('/traces/uploads')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .attach('file', otlpProtobuf(agentSpans), 'export.pb')
      .expect(201);
    upload = res.body;
    expect(upload).toEqual(
      expect.objectContaining({
        format: 'otlp_protobuf',
        filename: 'export.pb',
        size_bytes: otlpProtobuf(agentSpans).length,
      }),
    );
    const detected = await t.http.post(`/traces/uploads/${upload.id}:detect`).set(r.viewer.auth).send({}).expect(200);
    expect(detected.body).toEqual(
      expect.objectContaining({ convention: 'openinference', span_count: 10, upload_id: upload.id }),
    );

    const started = await t.http
      .post('/traces/land')
      .set(r.member.auth)
      .send({ workspace_id: ws, upload_id: upload.id, dataset_name: 'production traces' })
      .expect(202);
    expect(started.body).toEqual(
      expect.objectContaining({
        state: 'queued',
        source: { kind: 'upload', upload_id: upload.id, connection_id: null },
        job_id: expect.any(String),
      }),
    );
    await followLocation(t, started, r.viewer.auth);
    const run = await settled(started.body.id);
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        counts: { received: 10, landed: 10, deduplicated: 0, dropped: 0, pending: 0 },
        traces: 2,
        conventions: { openinference: 10 },
      }),
    );
    datasetId = run.dataset_id;
    versionId = run.version_id;
    const version = (await t.http.get(`/dataset-versions/${versionId}`).set(r.viewer.auth).expect(200)).body;
    expect(version).toEqual(
      expect.objectContaining({
        number: 1,
        source: 'landed',
        row_count: 10,
        dataset: expect.objectContaining({ kind: 'traces', name: 'production traces' }),
      }),
    );

    // Column statistics gathered while landing equal those the database computes from the rows.
    const round = (cols: Array<Record<string, unknown>>) =>
      cols.map((c) => ({
        ...c,
        ...(typeof c.mean_length === 'number' ? { mean_length: Number(c.mean_length.toFixed(6)) } : {}),
      }));
    const fromSql = await t.app.get(RowsRepository).versionStats(datasetId, 1, SPAN_COLUMNS.map(String), 10);
    expect(round(version.schema)).toEqual(round(fromSql as unknown as Array<Record<string, unknown>>));

    // The spans are rows of the version: queryable like any dataset.
    const llm = (
      await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'kind', op: 'eq', value: 'llm' } })
        .expect(200)
    ).body.items;
    expect(llm).toHaveLength(2);
    expect(llm[0]).toEqual(
      expect.objectContaining({
        model: 'gpt-4o-mini',
        tokens_input: 100,
        tokens_output: 20,
        tokens_total: 120,
        duration_ms: 400,
        convention: 'openinference',
      }),
    );
    const agent = (
      await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'trace_id', op: 'eq', value: traceA } })
        .expect(200)
    ).body.items.find((s: { name: string }) => s.name === 'support-agent');
    expect(agent).toEqual(
      expect.objectContaining({
        kind: 'agent',
        session_id: 's-1',
        user_id: 'u-1',
        input: 'Where is my order A1?',
        parent_span_id: null,
        attributes: expect.objectContaining({ 'app.release': '2026.11' }),
      }),
    );

    const again = await settled(
      (
        await t.http
          .post('/traces/land')
          .set(r.member.auth)
          .send({ workspace_id: ws, upload_id: upload.id, dataset_id: datasetId })
          .expect(202)
      ).body.id,
    );
    expect(again).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        version_id: null,
        counts: { received: 10, landed: 0, deduplicated: 10, dropped: 0, pending: 0 },
      }),
    );

    // The same spans as a pretty-printed OTLP/JSON document (read as a stream): still nothing new.
    const json = (
      await t.http
        .post('/traces/uploads')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .attach('file', Buffer.from(JSON.stringify(otlpJson(agentSpans), null, 2)), 'export.json')
        .expect(201)
    ).body;
    expect(json.format).toBe('otlp_json');
    const asJson = await settled(
      (
        await t.http
          .post('/traces/land')
          .set(r.member.auth)
          .send({ workspace_id: ws, upload_id: json.id, dataset_id: datasetId })
          .expect(202)
      ).body.id,
    );
    expect(asJson).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        version_id: null,
        counts: { received: 10, landed: 0, deduplicated: 10, dropped: 0, pending: 0 },
        conventions: { openinference: 10 },
      }),
    );
  });

  it('lands inline records, keeping every record it cannot normalise with its reason and payload', async () => {
    const genai = otlpJson(recordTraces([genAiTrace('c-1')], Date.UTC(2026, 10, 2)));
    const broken = [
      { span_id: 'abc', name: 'no trace id', start_time: '2026-11-01T00:00:00Z', end_time: '2026-11-01T00:00:01Z' },
      'not an object',
      {
        trace_id: 't-9',
        span_id: 's-9',
        name: 'backwards',
        start_time: '2026-11-01T00:00:05Z',
        end_time: '2026-11-01T00:00:01Z',
      },
      { hello: 'world' },
    ];
    const started = await t.http
      .post('/traces/land:inline')
      .set(r.member.auth)
      .send({ workspace_id: ws, dataset_id: datasetId, records: [genai, ...broken, otlpJson(agentSpans)] })
      .expect(202);
    await followLocation(t, started, r.viewer.auth);
    const run = await settled(started.body.id);
    expect(run.counts).toEqual({ received: 15, landed: 1, deduplicated: 10, dropped: 4, pending: 0 });
    expect(run.counts.received).toBe(run.counts.landed + run.counts.deduplicated + run.counts.dropped);
    expect(run.drop_reasons).toEqual({ missing_trace_id: 1, unsupported_record: 2, end_before_start: 1 });
    const drops = (await t.http.get(`/traces/runs/${run.id}/drops`).set(r.viewer.auth).expect(200)).body;
    expect(drops).toEqual(expect.objectContaining({ run_id: run.id, total: 4, by_reason: run.drop_reasons }));
    expect(drops.items.map((d: { reason: string; source_ref: string }) => [d.reason, d.source_ref])).toEqual([
      ['missing_trace_id', 'record 2'],
      ['unsupported_record', 'record 3'],
      ['end_before_start', 'record 4'],
      ['unsupported_record', 'record 5'],
    ]);
    expect(drops.items[0].payload).toEqual(expect.objectContaining({ span_id: 'abc' }));
    expect(drops.items[1].payload).toBe('not an object');
    const onlyOne = (
      await t.http
        .get(`/traces/runs/${run.id}/drops`)
        .query({ reason: 'end_before_start' })
        .set(r.viewer.auth)
        .expect(200)
    ).body;
    expect(onlyOne.items).toHaveLength(1);
    const versionDrops = (await t.http.get(`/traces/versions/${run.version_id}/drops`).set(r.viewer.auth).expect(200))
      .body;
    expect(versionDrops).toHaveLength(4);
    expect((await t.http.get(`/dataset-versions/${run.version_id}`).set(r.viewer.auth).expect(200)).body).toEqual(
      expect.objectContaining({ number: 2, row_count: 11 }),
    );
  });

  it('draws the topology with call counts, error rates and latency percentiles per component and edge', async () => {
    const graph = (
      await t.http.get(`/datasets/${datasetId}/versions/${versionId}/topology`).set(r.viewer.auth).expect(200)
    ).body;
    expect(graph).toEqual(expect.objectContaining({ trace_count: 2, span_count: 10, orphan_spans: 0 }));
    const node = (id: string) => graph.nodes.find((n: { id: string }) => n.id === id);
    expect(node('agent:support-agent')).toEqual(expect.objectContaining({ calls: 2, errors: 0 }));
    expect(node('tool:lookup_order')).toEqual(expect.objectContaining({ calls: 4, errors: 2, error_rate: 0.5 }));
    expect(node('tool:lookup_order').latency_ms).toEqual(expect.objectContaining({ mean: 150, max: 200 }));
    expect(node('llm:ChatCompletion').latency_ms).toEqual(expect.objectContaining({ p50: 400, p95: 400, max: 400 }));
    const edge = graph.edges.find(
      (e: { source: string; target: string }) => e.source === 'agent:support-agent' && e.target === 'tool:lookup_order',
    );
    expect(edge).toEqual(expect.objectContaining({ calls: 4, errors: 2, error_rate: 0.5 }));
    expect(graph.edges).toHaveLength(3);
  });

  it('resolves partitions of a trace version at trace and span level', async () => {
    const base = `/datasets/${datasetId}/versions/${versionId}/partitions`;
    const failing = (
      await t.http
        .post(base)
        .set(r.member.auth)
        .send({ name: 'failed tools', level: 'trace', filter: { field: 'status', op: 'eq', value: 'error' } })
        .expect(201)
    ).body;
    const traces = (await t.http.post(`${base}/${failing.id}/resolve`).set(r.viewer.auth).expect(200)).body;
    expect(traces).toHaveLength(2);
    expect(traces[0]).toEqual({ level: 'trace', trace_id: traceA, session_id: 's-1', row_ids: [expect.any(String)] });
    const llmSpans = (
      await t.http
        .post(base)
        .set(r.member.auth)
        .send({ name: 'llm spans', level: 'span', filter: { field: 'kind', op: 'eq', value: 'llm' } })
        .expect(201)
    ).body;
    const spans = (await t.http.post(`${base}/${llmSpans.id}/resolve`).set(r.viewer.auth).expect(200)).body;
    expect(spans).toHaveLength(2);
    expect(spans.map((x: { level: string }) => x.level)).toEqual(['span', 'span']);
    expect(spans.map((x: { trace_id: string }) => x.trace_id)).toContain(traceA);
  });

  it('enriches each trace after landing (tokens, cost from the price table, errors, tools) and recomputes with a caller price', async () => {
    const status = await enriched(datasetId, versionId);
    expect(status).toEqual(
      expect.objectContaining({ state: 'succeeded', traces_total: 2, traces_done: 2, progress: 1 }),
    );
    expect(status.fields.map((f: { name: string }) => f.name)).toEqual(
      expect.arrayContaining(['duration_ms', 'tokens_total', 'cost', 'loop_detected']),
    );
    /** GET the version's enrichment results (as the viewer) under `query`. */
    const enrichmentResults = async (query: Record<string, unknown>) =>
      (
        await t.http
          .get(`/datasets/${datasetId}/versions/${versionId}/trace-enrichment/results`)
          .query(query)
          .set(r.viewer.auth)
          .expect(200)
      ).body;
    const results = await enrichmentResults({ trace_id: traceA });
    expect(results.total).toBe(1);
    const a = results.items[0];
    expect(a).toEqual(
      expect.objectContaining({
        trace_id: traceA,
        session_id: 's-1',
        span_count: 5,
        duration_ms: 1000,
        tokens_input: 100,
        tokens_output: 20,
        tokens_total: 120,
        error_count: 1,
        has_error: true,
        llm_calls: 1,
        retriever_calls: 1,
        max_depth: 2,
        models: ['gpt-4o-mini'],
      }),
    );
    expect(a.tool_call_counts).toEqual({ lookup_order: 2 });
    // gpt-4o-mini: 100 x 0.15 / 1M + 20 x 0.60 / 1M
    expect(a.cost).toBeCloseTo(0.000027, 9);
    const errors = await enrichmentResults({ has_error: 'true', sort: 'duration_ms', order: 'desc' });
    expect(errors.total).toBe(2);
    const durations = errors.items.map((i: { duration_ms: number }) => i.duration_ms);
    expect(durations).toEqual([...durations].sort((x, y) => y - x));
    // A page past the last result still tells the total (counted apart).
    const past = await enrichmentResults({ has_error: 'true', offset: 5 });
    expect(past).toMatchObject({ total: 2, items: [] });
    const byModel = await enrichmentResults({ model: 'gpt-4o-mini', min_duration_ms: 1000 });
    expect(byModel.total).toBe(2);
    expect((await enrichmentResults({ model: 'gpt-4o' })).total).toBe(0);

    const queued = (
      await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/trace-enrichment:recompute`)
        .set(r.member.auth)
        .send({ prices: { 'gpt-4o-mini': { input_per_1m: 1, output_per_1m: 2 } } })
        .expect(200)
    ).body;
    expect(queued.state).toBe('queued');
    await enriched(datasetId, versionId);
    const repriced = (await enrichmentResults({ trace_id: traceA })).items[0];
    expect(repriced.cost).toBeCloseTo(0.00014, 9);
    expectProblem(
      await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/trace-enrichment:recompute`)
        .set(r.member.auth)
        .send({ prices: { x: { input_per_1m: -1, output_per_1m: 0 } } }),
      400,
      'prices_invalid',
    );
  });

  it('tags traces, lists, replaces and removes tags', async () => {
    const base = `/datasets/${datasetId}/versions/${versionId}/trace-tags`;
    const put = (
      await t.http
        .put(base)
        .set(r.member.auth)
        .send({ trace_ids: [traceA], tags: ['escalated', 'billing'] })
        .expect(200)
    ).body;
    expect(put.map((x: { tag: string }) => x.tag)).toEqual(['billing', 'escalated']);
    expect((await t.http.get(base).query({ tag: 'billing' }).set(r.viewer.auth).expect(200)).body).toEqual([
      expect.objectContaining({ trace_id: traceA, tag: 'billing', created_by: r.member.id }),
    ]);
    const replaced = (
      await t.http
        .put(base)
        .set(r.member.auth)
        .send({ trace_ids: [traceA], tags: ['resolved'], mode: 'replace' })
        .expect(200)
    ).body;
    expect(replaced.map((x: { tag: string }) => x.tag)).toEqual(['resolved']);
    const filtered = (
      await t.http
        .get(`/datasets/${datasetId}/versions/${versionId}/trace-enrichment/results`)
        .query({ tag: 'resolved' })
        .set(r.viewer.auth)
        .expect(200)
    ).body;
    expect(filtered.items.map((x: { trace_id: string }) => x.trace_id)).toEqual([traceA]);
    await t.http.delete(base).query({ trace_id: traceA, tag: 'resolved' }).set(r.member.auth).expect(204);
    expect((await t.http.get(base).set(r.viewer.auth).expect(200)).body).toEqual([]);
    expectProblem(
      await t.http
        .put(base)
        .set(r.member.auth)
        .send({ trace_ids: ['nope'], tags: ['x'] }),
      400,
      'unknown_traces',
    );
    expectProblem(await t.http.delete(base).set(r.member.auth), 400, 'trace_tags_query_invalid');
    expectProblem(
      await t.http
        .put(base)
        .set(r.viewer.auth)
        .send({ trace_ids: [traceA], tags: ['x'] }),
      403,
    );
  });

  it('keeps versioned ground truth for traces and promotes a trace version', async () => {
    const path = `/traces/versions/${versionId}/ground-truth`;
    expectProblem(await t.http.get(path).set(r.viewer.auth), 404, 'ground_truth_not_found');
    const first = (
      await t.http
        .post(path)
        .set(r.member.auth)
        .send({ items: [{ trace_id: traceA, expected_output: 'Ships tomorrow' }] })
        .expect(201)
    ).body;
    expect(first).toEqual(expect.objectContaining({ number: 1, item_count: 1, version_id: versionId }));
    await t.http
      .post(path)
      .set(r.member.auth)
      .send({
        items: [
          { trace_id: traceA, expected_output: { answer: 'Ships tomorrow', escalate: false }, notes: 'reviewed' },
        ],
        message: 'reviewed',
      })
      .expect(201);
    const current = (await t.http.get(path).set(r.viewer.auth).expect(200)).body;
    expect(current).toEqual(
      expect.objectContaining({
        number: 2,
        versions: [2, 1],
        items: [
          { trace_id: traceA, expected_output: { answer: 'Ships tomorrow', escalate: false }, notes: 'reviewed' },
        ],
      }),
    );
    expect(
      (await t.http.get(path).query({ number: 1 }).set(r.viewer.auth).expect(200)).body.items[0].expected_output,
    ).toBe('Ships tomorrow');
    expectProblem(
      await t.http
        .post(path)
        .set(r.member.auth)
        .send({ items: [{ trace_id: 'unknown', expected_output: 'x' }] }),
      400,
      'unknown_traces',
    );
    expectProblem(
      await t.http
        .post(path)
        .set(r.member.auth)
        .send({ items: [{ trace_id: traceA }] }),
      400,
      'validation_failed',
    );

    const promoted = (await t.http.post(`/traces/versions/${versionId}:promote`).set(r.member.auth).expect(200)).body;
    expect(promoted).toEqual(
      expect.objectContaining({
        dataset_id: datasetId,
        version_id: versionId,
        number: 1,
        state: 'current',
        previous_version_id: null,
      }),
    );
    expect((await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200)).body.current_version_id).toBe(
      versionId,
    );
  });

  it('refuses what is not a trace dataset, a bad source, other workspaces and lower roles', async () => {
    const rows = await uploadRows(t, r.member.auth, ws, [{ input: 'a' }]);
    expectProblem(
      await t.http
        .post('/traces/land:inline')
        .set(r.member.auth)
        .send({ workspace_id: ws, dataset_id: rows.datasetId, records: [otlpJson(agentSpans)] }),
      400,
      'trace_dataset_invalid',
    );
    expectProblem(
      await t.http.get(`/datasets/${rows.datasetId}/versions/${rows.versionId}/topology`).set(r.viewer.auth),
      400,
      'not_a_trace_version',
    );
    expectProblem(
      await t.http.post('/traces/land').set(r.member.auth).send({ workspace_id: ws }),
      400,
      'trace_source_invalid',
    );
    expectProblem(
      await t.http.post('/traces/land').set(r.member.auth).send({ workspace_id: ws, upload_id: randomUUID() }),
      400,
      'trace_source_invalid',
    );
    expectProblem(
      await t.http.post('/traces/land:inline').set(r.member.auth).send({ workspace_id: ws, records: [] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/traces/conventions:detect')
        .set(r.viewer.auth)
        .send({ workspace_id: ws, records: [{ hello: 'world' }] }),
      400,
      'trace_sample_empty',
    );
    expectProblem(
      await t.http.post('/traces/uploads').query({ workspace_id: ws }).set(r.member.auth).field('x', 'y'),
      400,
      'trace_upload_empty',
    );
    expectProblem(await t.http.post('/traces/land:inline').send({ workspace_id: ws, records: [{}] }), 401);
    expectProblem(
      await t.http
        .post('/traces/land:inline')
        .set(r.viewer.auth)
        .send({ workspace_id: ws, records: [{}] }),
      403,
    );
    expectProblem(await t.http.get(`/traces/runs/${randomUUID()}`).set(r.viewer.auth), 404);
    const other = await t.factory.workspaceWithRoles();
    expectProblem(await t.http.post(`/traces/uploads/${upload.id}:detect`).set(other.owner.auth).send({}), 403);
    expectProblem(await t.http.get(`/traces/versions/${versionId}/drops`).set(other.owner.auth), 403);
  });
});
