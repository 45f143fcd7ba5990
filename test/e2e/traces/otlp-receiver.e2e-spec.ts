import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpHttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import {
  agentTrace,
  binary,
  grpcExport,
  otlpJson,
  otlpProtobuf,
  readRpcStatus as readStatus,
  recordTraces,
} from '../../utils/otel-traces.js';
import { OtlpGrpcReceiver } from '#src/modules/traces/otlp-grpc.receiver.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceResponse = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

interface LiveStream {
  dataset_id: string;
  ingest_run_id: string;
  head_version_id: string | null;
  head_spans: number;
  pending_spans: number;
}

describe('OTLP/HTTP receiver (POST /v1/traces)', () => {
  let t: TestApp;
  let url: string;
  let ws: string;
  let key: string;
  let viewerKey: string;
  let grpcAddress: string;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;

  beforeAll(async () => {
    t = await startTestApp({ OTLP_MAX_BYTES: String(256 * 1024) });
    await t.app.listen(0, '127.0.0.1');
    url = await t.app.getUrl();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    key = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'otel-exporter', role: 'member' })
        .expect(201)
    ).body.key;
    viewerKey = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'otel-viewer', role: 'viewer' })
        .expect(201)
    ).body.key;
    grpcAddress = `127.0.0.1:${await t.app.get(OtlpGrpcReceiver).listen(0, '127.0.0.1')}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  const bearer = (k = key) => ({ Authorization: `Bearer ${k}` });
  const datasetNamed = async (name: string): Promise<string> => {
    const res = await t.http
      .get('/datasets')
      .query({ workspace_id: ws, q: name, kind: 'traces' })
      .set(r.member.auth)
      .expect(200);
    const found = res.body.items.find((d: { name: string }) => d.name === name);
    expect(found).toBeDefined();
    return found.id;
  };
  /** Polls the live stream until `spans` have landed in it and nothing is pending. */
  const landed = async (datasetId: string, spans: number): Promise<LiveStream> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth);
      if (res.status === 200 && res.body.pending_spans === 0) {
        const run = await t.http.get(`/traces/runs/${res.body.ingest_run_id}`).set(r.member.auth).expect(200);
        if (run.body.counts.landed + run.body.counts.deduplicated >= spans) return res.body;
      }
      if (Date.now() > deadline) throw new Error(`spans did not land: ${JSON.stringify(res.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const rowsOf = async (datasetId: string, versionId: string): Promise<Array<Record<string, unknown>>> =>
    (
      await t.http
        .post(`/datasets/${datasetId}/query`)
        .set(r.member.auth)
        .send({ version_id: versionId, limit: 1000 })
        .expect(200)
    ).body.items;

  /** Spans recorded by the OpenTelemetry SDK and exported by a real OTLP exporter through a batch span processor. */
  async function exportWith(exporter: SpanExporter, service: string, traces: number): Promise<void> {
    const results: number[] = [];
    const observed: SpanExporter = {
      export: (spans, done) =>
        exporter.export(spans, (result) => {
          results.push(result.code);
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new BatchSpanProcessor({ exporter: observed, maxExportBatchSize: 7, scheduledDelayMillis: 50 })],
    });
    const tracer = provider.getTracer('support-bot', '1.0.0');
    for (let i = 0; i < traces; i++) {
      tracer.startActiveSpan(
        'support-agent',
        { attributes: { 'openinference.span.kind': 'AGENT', 'session.id': `s-${i}`, 'input.value': `question ${i}` } },
        (agent) => {
          const llm = tracer.startSpan(
            'ChatCompletion',
            {
              attributes: {
                'openinference.span.kind': 'LLM',
                'llm.model_name': 'gpt-4o-mini',
                'llm.token_count.prompt': 10,
                'llm.token_count.completion': 5,
              },
            },
            trace.setSpan(ROOT_CONTEXT, agent),
          );
          llm.end();
          agent.end();
        },
      );
    }
    await provider.forceFlush();
    await provider.shutdown();
    expect(results.length).toBeGreaterThan(1);
    expect(results.every((code) => code === ExportResultCode.SUCCESS)).toBe(true);
  }

  it.each([
    [
      'exporter-trace-otlp-http (JSON)',
      (endpoint: string) => new OtlpHttpJsonExporter({ url: endpoint, headers: bearer() }),
    ],
    [
      'exporter-trace-otlp-proto (protobuf)',
      (endpoint: string) => new OtlpProtoExporter({ url: endpoint, headers: bearer(), compression: 'gzip' as never }),
    ],
  ])(
    'the OpenTelemetry SDK exporter %s lands spans into the dataset named by service.name, in one open head',
    async (_name, make) => {
      const service = `support-bot-${randomUUID().slice(0, 6)}`;
      await exportWith(make(`${url}/v1/traces`), service, 12);
      const datasetId = await datasetNamed(service);
      const live = await landed(datasetId, 24);
      expect(live.head_spans).toBe(24);
      // Several export batches, one version: the head grows.
      const versions = (await t.http.get(`/datasets/${datasetId}/versions`).set(r.member.auth).expect(200)).body.items;
      expect(versions).toHaveLength(1);
      expect(versions[0]).toEqual(
        expect.objectContaining({ id: live.head_version_id, state: 'candidate', row_count: 24 }),
      );
      const rows = await rowsOf(datasetId, live.head_version_id!);
      expect(rows).toHaveLength(24);
      const llm = rows.find((row) => row.name === 'ChatCompletion');
      expect(llm).toEqual(
        expect.objectContaining({
          kind: 'llm',
          model: 'gpt-4o-mini',
          tokens_input: 10,
          tokens_output: 5,
          service_name: service,
          convention: 'openinference',
        }),
      );
      const run = (await t.http.get(`/traces/runs/${live.ingest_run_id}`).set(r.member.auth).expect(200)).body;
      expect(run).toEqual(
        expect.objectContaining({
          // A tracked record no one job settles: started through TrackedRecords when the stream opened, never ended.
          state: 'running',
          started_at: expect.any(String),
          finished_at: null,
          job_id: null,
          dataset_id: datasetId,
          version_id: live.head_version_id,
          source: expect.objectContaining({ kind: 'otlp' }),
        }),
      );
      expect(run.counts).toEqual({ received: 24, landed: 24, deduplicated: 0, dropped: 0, pending: 0 });
    },
  );

  it('is idempotent by span id: an exporter retrying a batch (protobuf, gzip) lands nothing twice; answers in protobuf', async () => {
    const dataset = `retries-${randomUUID().slice(0, 6)}`;
    const body = gzipSync(
      otlpProtobuf(recordTraces([agentTrace('s-1', 'Where is my order?'), agentTrace('s-2', 'Refund?')])),
    );
    for (let i = 0; i < 3; i++) {
      const res = await t.http
        .post('/v1/traces')
        .set(bearer())
        .set('content-type', 'application/x-protobuf')
        .set('content-encoding', 'gzip')
        .set('x-ews-dataset', dataset)
        .send(body)
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/x-protobuf/);
      expect(ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(res.body))).toEqual({});
    }
    const datasetId = await datasetNamed(dataset);
    const live = await landed(datasetId, 30);
    expect(live.head_spans).toBe(10);
    const run = (await t.http.get(`/traces/runs/${live.ingest_run_id}`).set(r.member.auth).expect(200)).body;
    expect(run.counts).toEqual({ received: 30, landed: 10, deduplicated: 20, dropped: 0, pending: 0 });
    expect(await rowsOf(datasetId, live.head_version_id!)).toHaveLength(10);
  });

  it('reports spans it cannot use in partial_success and keeps them with their payloads; the rest land', async () => {
    const dataset = `partial-${randomUUID().slice(0, 6)}`;
    const request = otlpJson(recordTraces([agentTrace('s-3', 'Hello')])) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
    };
    const spans = request.resourceSpans[0].scopeSpans[0].spans;
    spans[1].spanId = 'abcdef0123456789ab';
    delete spans[2].startTimeUnixNano;
    const res = await t.http.post('/v1/traces').set(bearer()).set('x-ews-dataset', dataset).send(request).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.partialSuccess).toEqual({
      rejectedSpans: '2',
      errorMessage: expect.stringMatching(/^2 spans rejected: .*GET \/traces\/runs\/[0-9a-f-]+\/drops/),
    });
    const datasetId = await datasetNamed(dataset);
    const live = await landed(datasetId, 3);
    expect(live.head_spans).toBe(3);
    const drops = (await t.http.get(`/traces/runs/${live.ingest_run_id}/drops`).set(r.member.auth).expect(200)).body;
    expect(drops.total).toBe(2);
    expect(drops.items.map((d: { ordinal: number }) => d.ordinal)).toEqual([1, 2]);
    expect(drops.items[0].payload).toBeTruthy();
    // The version the export's other spans joined lists them too.
    const onVersion = (
      await t.http.get(`/traces/versions/${live.head_version_id}/drops`).set(r.member.auth).expect(200)
    ).body;
    expect(onVersion.map((d: { ordinal: number }) => d.ordinal)).toEqual([1, 2]);

    // An export whose every span is dropped: its drop is on the open head it would have joined.
    const lone = otlpJson(recordTraces([agentTrace('s-4', 'Hi')])) as typeof request;
    lone.resourceSpans[0].scopeSpans[0].spans = [
      { ...lone.resourceSpans[0].scopeSpans[0].spans[0], spanId: 'abcdef0123456789ab' },
    ];
    const rejected = await t.http.post('/v1/traces').set(bearer()).set('x-ews-dataset', dataset).send(lone).expect(200);
    expect(rejected.body.partialSuccess.rejectedSpans).toBe('1');
    const all = (await t.http.get(`/traces/versions/${live.head_version_id}/drops`).set(r.member.auth).expect(200))
      .body;
    expect(all.map((d: { ordinal: number }) => d.ordinal)).toEqual([1, 2, 3]);
  });

  it('answers failures in the request encoding: a google.rpc.Status for protobuf, problem+json with code and message for JSON', async () => {
    const bad = await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('content-type', 'application/x-protobuf')
      .send(Buffer.from([0x0a, 0xff, 0xff, 0x01]))
      .buffer(true)
      .parse(binary)
      .expect(400);
    expect(bad.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect(readStatus(bad.body)).toEqual({ code: 3, message: expect.stringContaining('otlp_body_undecodable') });

    const json = await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('content-type', 'application/json')
      .send('{"resourceSpans": ')
      .expect(400);
    expectProblem(json, 400, 'otlp_body_undecodable');
    expect(json.body).toEqual(expect.objectContaining({ code: 3, message: expect.stringContaining('not valid JSON') }));

    expectProblem(
      await t.http.post('/v1/traces').set(bearer()).set('content-type', 'text/plain').send('spans'),
      415,
      'unsupported_media_type',
    );
    const big = await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('content-type', 'application/x-protobuf')
      .send(Buffer.alloc(300 * 1024))
      .buffer(true)
      .parse(binary);
    expect(big.status).toBe(413);
    expect(readStatus(big.body).code).toBe(3);
    // A gzip bomb is measured decompressed.
    const bomb = gzipSync(Buffer.alloc(2 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(256 * 1024);
    const exploded = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: bomb,
    });
    expect(exploded.status).toBe(413);
    expect(await exploded.json()).toEqual(expect.objectContaining({ error_code: 'payload_too_large', code: 3 }));
    const corrupt = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'not gzip at all',
    });
    expect(corrupt.status).toBe(400);
    expectProblem(
      await t.http.post('/v1/traces').set(bearer()).set('x-ews-dataset', 'x'.repeat(201)).send({ resourceSpans: [] }),
      400,
      'otlp_dataset_header_invalid',
    );
    // An empty export is valid OTLP.
    expect((await t.http.post('/v1/traces').set(bearer()).send({}).expect(200)).body).toEqual({});
  });

  it('authenticates like the API: a key of the workspace at member or above, or a user token naming its workspace', async () => {
    const body = otlpJson(recordTraces([agentTrace('s-4', 'Hi')]));
    const unauth = await t.http.post('/v1/traces').send(body);
    expectProblem(unauth, 401, 'unauthenticated');
    expect(unauth.body.code).toBe(16);
    expectProblem(await t.http.post('/v1/traces').set(bearer(viewerKey)).send(body), 403, 'forbidden');
    expectProblem(await t.http.post('/v1/traces').set(r.member.auth).send(body), 400, 'validation_failed');
    expectProblem(
      await t.http.post('/v1/traces').set(r.viewer.auth).set('x-ews-workspace', ws).send(body),
      403,
      'forbidden',
    );
    const dataset = `token-${randomUUID().slice(0, 6)}`;
    await t.http
      .post('/v1/traces')
      .set(r.member.auth)
      .set('x-ews-workspace', ws)
      .set('x-ews-dataset', dataset)
      .send(body)
      .expect(200);
    await landed(await datasetNamed(dataset), 5);
    // A test-case dataset's name is refused, not overwritten.
    const name = `cases-${randomUUID().slice(0, 6)}`;
    await t.http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .attach('file', Buffer.from('question,answer\nWhat is 2+2?,4\n'), `${name}.csv`)
      .expect(201);
    expectProblem(
      await t.http.post('/v1/traces').set(bearer()).set('x-ews-dataset', name).send(body),
      400,
      'trace_dataset_invalid',
    );
  });

  it('seals the head by size and on demand; the next spans open a new candidate version', async () => {
    const dataset = `sealed-${randomUUID().slice(0, 6)}`;
    const first = otlpJson(recordTraces([agentTrace('s-5', 'one')]));
    await t.http.post('/v1/traces').set(bearer()).set('x-ews-dataset', dataset).send(first).expect(200);
    const datasetId = await datasetNamed(dataset);
    let live = await landed(datasetId, 5);
    const v1 = live.head_version_id!;
    const configured = await t.http
      .put(`/traces/datasets/${datasetId}/live`)
      .set(r.member.auth)
      .send({ max_spans: 7, window_seconds: 600 })
      .expect(200);
    expect(configured.body).toEqual(
      expect.objectContaining({ max_spans: 7, window_seconds: 600, head_version_id: v1, head_spans: 5 }),
    );
    await t.http.put(`/traces/datasets/${datasetId}/live`).set(r.viewer.auth).send({ max_spans: 7 }).expect(403);
    expectProblem(
      await t.http.put(`/traces/datasets/${datasetId}/live`).set(r.member.auth).send({ max_spans: 0 }),
      400,
      'validation_failed',
    );

    // 5 more spans: 2 fill the head to 7, which is sealed; 3 open version 2.
    await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('x-ews-dataset', dataset)
      .send(otlpJson(recordTraces([agentTrace('s-6', 'two')])))
      .expect(200);
    live = await landed(datasetId, 10);
    expect(live.head_version_id).not.toBe(v1);
    expect(live.head_spans).toBe(3);
    const sealed = (await t.http.get(`/dataset-versions/${v1}`).set(r.member.auth).expect(200)).body;
    expect(sealed).toEqual(expect.objectContaining({ number: 1, row_count: 7 }));
    const v2 = (await t.http.get(`/dataset-versions/${live.head_version_id}`).set(r.member.auth).expect(200)).body;
    expect(v2).toEqual(expect.objectContaining({ number: 2, row_count: 10, state: 'candidate' }));

    const afterSeal = (await t.http.post(`/traces/datasets/${datasetId}/live:seal`).set(r.member.auth).expect(200))
      .body;
    expect(afterSeal).toEqual(expect.objectContaining({ head_version_id: null, head_spans: 0 }));
    const enrichment = (
      await t.http.get(`/datasets/${datasetId}/versions/${v2.id}/trace-enrichment`).set(r.member.auth).expect(200)
    ).body;
    expect(enrichment.state).toMatch(/queued|running|succeeded/);
    await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('x-ews-dataset', dataset)
      .send(otlpJson(recordTraces([agentTrace('s-7', 'three')])))
      .expect(200);
    live = await landed(datasetId, 15);
    expect((await t.http.get(`/dataset-versions/${live.head_version_id}`).set(r.member.auth).expect(200)).body).toEqual(
      expect.objectContaining({ number: 3, row_count: 15 }),
    );
    const audit = (await t.http.get(`/datasets/${datasetId}/audit`).set(r.member.auth).expect(200)).body as Array<{
      action: string;
    }>;
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['trace_live.configured', 'trace_live.sealed']));
  });

  describe('OTLP/gRPC (OTLP_GRPC_PORT)', () => {
    it('the OpenTelemetry SDK exporter exporter-trace-otlp-grpc (gzip) lands spans as the HTTP receiver does', async () => {
      const service = `grpc-bot-${randomUUID().slice(0, 6)}`;
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${key}`);
      await exportWith(
        new OtlpGrpcExporter({ url: `http://${grpcAddress}`, metadata, compression: 'gzip' as never }),
        service,
        12,
      );
      const datasetId = await datasetNamed(service);
      const live = await landed(datasetId, 24);
      expect(live.head_spans).toBe(24);
      const run = (await t.http.get(`/traces/runs/${live.ingest_run_id}`).set(r.member.auth).expect(200)).body;
      expect(run.counts).toEqual({ received: 24, landed: 24, deduplicated: 0, dropped: 0, pending: 0 });
      const llm = (await rowsOf(datasetId, live.head_version_id!)).find((row) => row.name === 'ChatCompletion');
      expect(llm).toEqual(
        expect.objectContaining({
          kind: 'llm',
          model: 'gpt-4o-mini',
          service_name: service,
          convention: 'openinference',
        }),
      );
    });

    it('answers partial success, idempotently, into the dataset the metadata names; statuses for keys, roles and undecodable messages', async () => {
      const dataset = `grpc-${randomUUID().slice(0, 6)}`;
      const request = ExportTraceServiceRequest.decode(
        otlpProtobuf(recordTraces([agentTrace('g-1', 'Where is my order?')])),
      );
      // A span id of 9 bytes: that span is rejected, the other four land.
      request.resourceSpans[0].scopeSpans[0].spans[1].spanId = Buffer.alloc(9, 7);
      const body = Buffer.from(ExportTraceServiceRequest.encode(request).finish());
      for (let i = 0; i < 2; i++) {
        const answer = await grpcExport(grpcAddress, body, {
          authorization: `Bearer ${key}`,
          'x-ews-dataset': dataset,
        });
        expect(answer.code).toBe(GrpcStatus.OK);
        const response = ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(answer.response!), {
          longs: Number,
        });
        expect(response.partialSuccess).toEqual({
          rejectedSpans: 1,
          errorMessage: expect.stringMatching(/^1 span rejected: /),
        });
      }
      const live = await landed(await datasetNamed(dataset), 8);
      expect(live.head_spans).toBe(4);
      const run = (await t.http.get(`/traces/runs/${live.ingest_run_id}`).set(r.member.auth).expect(200)).body;
      expect(run.counts).toEqual({ received: 10, landed: 4, deduplicated: 4, dropped: 2, pending: 0 });

      const refused = async (metadata: Record<string, string>, message = body) =>
        grpcExport(grpcAddress, message, metadata);
      expect(await refused({})).toEqual(
        expect.objectContaining({
          code: GrpcStatus.UNAUTHENTICATED,
          details: expect.stringContaining('An API key is required'),
        }),
      );
      expect(await refused({ authorization: 'Bearer ews_0123456789ab_notakey' })).toEqual(
        expect.objectContaining({ code: GrpcStatus.UNAUTHENTICATED }),
      );
      // A user's token is for HTTP; gRPC takes API keys.
      expect((await refused({ authorization: r.member.auth.Authorization })).code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await refused({ authorization: `Bearer ${viewerKey}` })).toEqual(
        expect.objectContaining({
          code: GrpcStatus.PERMISSION_DENIED,
          details: expect.stringContaining('member role'),
        }),
      );
      expect(await refused({ authorization: `Bearer ${key}` }, Buffer.from('not protobuf at all'))).toEqual(
        expect.objectContaining({
          code: GrpcStatus.INVALID_ARGUMENT,
          details: expect.stringMatching(/^otlp_body_undecodable: /),
        }),
      );
      expect(await refused({ authorization: `Bearer ${key}`, 'x-ews-dataset': 'd'.repeat(201) })).toEqual(
        expect.objectContaining({
          code: GrpcStatus.INVALID_ARGUMENT,
          details: expect.stringMatching(/^otlp_dataset_header_invalid: /),
        }),
      );
      // Beyond OTLP_MAX_BYTES (256 KiB here) grpc-js refuses the message before it is read.
      expect((await refused({ authorization: `Bearer ${key}` }, Buffer.alloc(300 * 1024, 1))).code).toBe(
        GrpcStatus.RESOURCE_EXHAUSTED,
      );
    });
  });

  it('takes parallel exports to one dataset without losing or duplicating a span', async () => {
    const dataset = `parallel-${randomUUID().slice(0, 6)}`;
    const batches = Array.from({ length: 8 }, (_, i) =>
      otlpProtobuf(
        recordTraces([agentTrace(`p-${i}`, `q${i}`), agentTrace(`p-${i}b`, `q${i}b`)], Date.UTC(2026, 10, 2, 12, i)),
      ),
    );
    // Each batch twice, all at once: 8 distinct batches of 10 spans.
    const answers = await Promise.all(
      [...batches, ...batches].map((b) =>
        t.http
          .post('/v1/traces')
          .set(bearer())
          .set('content-type', 'application/x-protobuf')
          .set('x-ews-dataset', dataset)
          .send(b),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const datasetId = await datasetNamed(dataset);
    const live = await landed(datasetId, 160);
    expect(live.head_spans).toBe(80);
    const run = (await t.http.get(`/traces/runs/${live.ingest_run_id}`).set(r.member.auth).expect(200)).body;
    expect(run.counts).toEqual({ received: 160, landed: 80, deduplicated: 80, dropped: 0, pending: 0 });
  });
});
