import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { expectProblem } from '../../utils/problem.js';
import { restartableApps, type TestApp } from '../../utils/test-app.js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { OtlpGrpcReceiver } from '#src/modules/traces/otlp-grpc.receiver.js';
import {
  agentTrace,
  binary,
  grpcExport,
  otlpJson,
  otlpProtobuf,
  readRpcStatus,
  recordTraces,
  retryDelayOf,
} from '../../utils/otel-traces.js';

/**
 * Backpressure and durability: an API whose landing lags (here: no workers) tells exporters to
 * retry (429, Retry-After) once a dataset has OTLP_MAX_PENDING_SPANS waiting; what it acknowledged
 * is in the database, and lands, exactly once, in the process that comes after it.
 */
describe('OTLP/HTTP receiver: backpressure, and acknowledged spans outliving the process', () => {
  const apps = restartableApps({ OTLP_MAX_PENDING_SPANS: '100', QUEUE_POLL_INTERVAL_MS: '100' });
  const { start, stop } = apps;
  beforeAll(() => apps.create());
  afterAll(() => apps.closeAll());

  it('refuses exports past the pending limit with 429 and Retry-After; the acknowledged spans land after a restart, none twice', async () => {
    const api = await start({ RUN_WORKERS: 'false' });
    const r = await api.factory.workspaceWithRoles();
    const key = (
      await api.http
        .post(`/workspaces/${r.workspace.id}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'exporter', role: 'member' })
        .expect(201)
    ).body.key as string;
    const send = (app: TestApp, body: Buffer) =>
      app.http
        .post('/v1/traces')
        .set({ Authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf', 'x-ews-dataset': 'lagging' })
        .send(body);
    // 21 batches of 5 spans: the first 20 (100 spans) are acknowledged, the 21st is over the limit.
    const batches = Array.from({ length: 22 }, (_, i) =>
      otlpProtobuf(recordTraces([agentTrace(`b-${i}`, `question ${i}`)], Date.UTC(2026, 10, 3, 9, i))),
    );
    for (const body of batches.slice(0, 20)) expect((await send(api, body)).status).toBe(200);
    const refused = await send(api, batches[20]).buffer(true).parse(binary);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(readRpcStatus(refused.body)).toEqual({
      code: 8,
      message: expect.stringMatching(/has 100 acknowledged spans still landing.*otlp_backpressure/),
    });
    // In JSON, the same refusal is a problem document.
    const json = await api.http
      .post('/v1/traces')
      .set({ Authorization: `Bearer ${key}`, 'x-ews-dataset': 'lagging' })
      .send(otlpJson(recordTraces([agentTrace('j', 'json')])));
    expectProblem(json, 429, 'otlp_backpressure');
    expect(json.body).toEqual(expect.objectContaining({ pending_spans: 100, code: 8 }));
    // Over gRPC, as OTLP asks of a throttling server: UNAVAILABLE with a google.rpc.RetryInfo of the same 5 s.
    const grpc = await grpcExport(
      `127.0.0.1:${await api.app.get(OtlpGrpcReceiver).listen(0, '127.0.0.1')}`,
      batches[20],
      { authorization: `Bearer ${key}`, 'x-ews-dataset': 'lagging' },
    );
    expect(grpc).toEqual(
      expect.objectContaining({
        code: GrpcStatus.UNAVAILABLE,
        details: expect.stringMatching(/^otlp_backpressure: .*100 acknowledged spans still landing/),
      }),
    );
    expect(readRpcStatus(grpc.statusDetails!)).toEqual({ code: GrpcStatus.UNAVAILABLE, message: grpc.details });
    expect(retryDelayOf(grpc.statusDetails!)).toBe(5);
    // The OpenTelemetry exporter reports the refusal (it retries, then fails the batch): nothing is lost silently.
    const url = `${await api.app.listen(0, '127.0.0.1').then(() => api.app.getUrl())}/v1/traces`;
    const exporter = new OTLPTraceExporter({
      url,
      headers: { Authorization: `Bearer ${key}`, 'x-ews-dataset': 'lagging' },
      timeoutMillis: 1500,
    });
    const spans = recordTraces([agentTrace('b-21', 'question 21')], Date.UTC(2026, 10, 3, 9, 21));
    const result = await new Promise<{ code: number }>((resolve) => exporter.export(spans, resolve));
    expect(result.code).toBe(ExportResultCode.FAILED);
    await exporter.shutdown();
    const dataset = (
      await api.http
        .get('/datasets')
        .query({ workspace_id: r.workspace.id, q: 'lagging' })
        .set(r.member.auth)
        .expect(200)
    ).body.items[0];
    const before = (await api.http.get(`/traces/datasets/${dataset.id}/live`).set(r.member.auth).expect(200)).body;
    expect(before).toEqual(expect.objectContaining({ pending_spans: 100, head_version_id: null, head_spans: 0 }));
    await stop(api);

    // The next process (workers on) lands what the first acknowledged; the exporter's batch is then accepted.
    // A new process signs tokens with its own secret: the API key reads what the old one wrote.
    const keyAuth = { Authorization: `Bearer ${key}` };
    const next = await start({});
    const deadline = Date.now() + 60_000;
    let live = before;
    while (Date.now() < deadline) {
      live = (await next.http.get(`/traces/datasets/${dataset.id}/live`).set(keyAuth).expect(200)).body;
      if (live.pending_spans === 0 && live.head_spans === 100) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(live).toEqual(expect.objectContaining({ pending_spans: 0, head_spans: 100 }));
    for (const body of [batches[0], batches[20], batches[21]]) expect((await send(next, body)).status).toBe(200);
    while (Date.now() < deadline) {
      live = (await next.http.get(`/traces/datasets/${dataset.id}/live`).set(keyAuth).expect(200)).body;
      if (live.pending_spans === 0 && live.head_spans === 110) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const run = (await next.http.get(`/traces/runs/${live.ingest_run_id}`).set(keyAuth).expect(200)).body;
    expect(run.counts).toEqual({ received: 115, landed: 110, deduplicated: 5, dropped: 0, pending: 0 });
    const rows = (
      await next.http
        .post(`/datasets/${dataset.id}/query`)
        .set(keyAuth)
        .send({ version_id: live.head_version_id, limit: 1000, include_total: true })
        .expect(200)
    ).body;
    expect(rows.total).toBe(110);
  });
});
