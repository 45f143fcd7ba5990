import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { grpcExport, otlpJson, recordTraces } from '../../utils/otel-traces.js';
import { toolCallingModel } from '../../utils/tool-calling-model.js';
import type { FakeUpstream } from '../../utils/fake-upstream.js';
import { OtlpGrpcReceiver } from '#src/modules/traces/otlp-grpc.receiver.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportLogsServiceRequest = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
const ExportLogsServiceResponse = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;

type Row = Record<string, any>;

const AGENT_SCRIPT = join(process.cwd(), 'test/fixtures/otel-openai-agent.cjs');
// Node 24 of node_modules/.bin, as the npm scripts run the service.
const NODE = join(process.cwd(), 'node_modules/.bin/node');

describe('OTLP logs (POST /v1/logs, LogsService/Export) joined to their spans', () => {
  let t: TestApp;
  let url: string;
  let key: string;
  let grpcAddress: string;
  let model: FakeUpstream;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;

  beforeAll(async () => {
    t = await startTestApp({ OTLP_LOG_PENDING_SECONDS: '2' });
    await t.app.listen(0, '127.0.0.1');
    url = await t.app.getUrl();
    r = await t.factory.workspaceWithRoles();
    key = (
      await t.http
        .post(`/workspaces/${r.workspace.id}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'otel-agent', role: 'member' })
        .expect(201)
    ).body.key;
    grpcAddress = `127.0.0.1:${await t.app.get(OtlpGrpcReceiver).listen(0, '127.0.0.1')}`;
    model = await toolCallingModel(() => ({
      rounds: [[{ name: 'lookup_order', arguments: { order_id: 'A1' } }]],
      answer: 'Order A1 ships tomorrow.',
    }));
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  const bearer = () => ({ Authorization: `Bearer ${key}` });

  const datasetNamed = async (name: string): Promise<string> => {
    const res = await t.http
      .get('/datasets')
      .query({ workspace_id: r.workspace.id, q: name, kind: 'traces' })
      .set(r.member.auth)
      .expect(200);
    return res.body.items.find((d: { name: string }) => d.name === name).id;
  };
  const live = async (datasetId: string) =>
    (await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth).expect(200)).body;
  const runOf = async (datasetId: string) =>
    (
      await t.http
        .get(`/traces/runs/${(await live(datasetId)).ingest_run_id}`)
        .set(r.member.auth)
        .expect(200)
    ).body;
  const rows = async (datasetId: string): Promise<Row[]> => {
    const head = (await live(datasetId)).head_version_id;
    const res = await t.http
      .post(`/datasets/${datasetId}/query`)
      .set(r.member.auth)
      .send({ ...(head ? { version_id: head } : {}), limit: 1000 })
      .expect(200);
    return res.body.items.map((item: Row) => item.data ?? item);
  };
  /** Polls until `ready` holds of the dataset's rows. */
  const until = async (datasetId: string, ready: (rows: Row[]) => boolean): Promise<Row[]> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = await rows(datasetId).catch(() => []);
      if (ready(found)) return found;
      if (Date.now() > deadline) throw new Error(`rows not ready: ${JSON.stringify(found).slice(0, 2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  };
  const chatSpans = (found: Row[]) =>
    found.filter((s) => s.name === 'chat fake-agent-model').sort((a, b) => a.start_time.localeCompare(b.start_time));
  const joined = (found: Row[]) => {
    const chats = chatSpans(found);
    return chats.length === 2 && chats.every((s) => Array.isArray(s.attributes?.['log.records']) && s.output);
  };

  /**
   * Runs the instrumented agent in a child process against the tool-calling model; its exporters
   * send to the test app. `between` runs after the first signal's flush, before the second's.
   */
  async function runAgent(
    dataset: string,
    order: 'spans-first' | 'logs-first',
    compression: 'gzip' | 'none',
    between: () => Promise<void>,
  ): Promise<void> {
    const child = spawn(NODE, [AGENT_SCRIPT], {
      env: {
        ...process.env,
        OPENAI_BASE_URL: model.url('/v1'),
        EWS_URL: url,
        EWS_API_KEY: key,
        EWS_DATASET: dataset,
        EXPORT_ORDER: order,
        COMPRESSION: compression,
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let flushes = 0;
    for await (const line of createInterface({ input: child.stdout })) {
      if (line.startsWith('flushed') && ++flushes === 1) {
        await between();
        child.stdin.end('go\n');
      }
      if (line.startsWith('done')) break;
    }
    expect({ code: await exited, stderr }).toEqual({ code: 0, stderr: '' });
  }

  /** What the log records made of the two model calls' rows (the model numbers its calls across tests: call_1 is each run's first). */
  const joinedFields = (found: Row[]) => {
    const chats = chatSpans(found);
    const first = Number(/"call_(\d+)"/.exec(JSON.stringify(chats))?.[1] ?? 1);
    const fields = chats.map((s) => ({
      input: s.input,
      output: s.output,
      tool_calls: s.tool_calls,
      sources: s.attributes['log.sources'],
      records: s.attributes['log.records'].map((x: Row) => x.event_name),
    }));
    return JSON.parse(JSON.stringify(fields).replace(/"call_(\d+)"/g, (_, n) => `"call_${Number(n) - first + 1}"`));
  };

  const EXPECTED = [
    {
      input: [
        { role: 'system', content: 'You are a support agent. Use tools.' },
        { role: 'user', content: 'Where is order A1?' },
      ],
      output: [
        {
          role: 'assistant',
          content: null,
          finish_reason: 'tool_calls',
          tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A1' }, id: 'call_1' }],
        },
      ],
      tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A1' }, id: 'call_1' }],
      sources: {
        input: ['gen_ai.system.message', 'gen_ai.user.message'],
        output: ['gen_ai.choice'],
        tool_calls: ['gen_ai.choice'],
      },
      records: ['gen_ai.system.message', 'gen_ai.user.message', 'gen_ai.choice'],
    },
    {
      input: [
        { role: 'system', content: 'You are a support agent. Use tools.' },
        { role: 'user', content: 'Where is order A1?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A1' }, id: 'call_1' }],
        },
        { role: 'tool', content: { status: 'shipped', call: 'lookup_order' }, tool_call_id: 'call_1' },
      ],
      output: [{ role: 'assistant', content: 'Order A1 ships tomorrow.', finish_reason: 'stop' }],
      tool_calls: [],
      sources: {
        input: ['gen_ai.system.message', 'gen_ai.user.message', 'gen_ai.assistant.message', 'gen_ai.tool.message'],
        output: ['gen_ai.choice'],
      },
      records: [
        'gen_ai.system.message',
        'gen_ai.user.message',
        'gen_ai.assistant.message',
        'gen_ai.tool.message',
        'gen_ai.choice',
      ],
    },
  ];

  it('joins the openai instrumentation’s log records to their model calls’ spans when they arrive after the spans (gzip), the spans’ version sealed meanwhile', async () => {
    const name = `agent-logs-after-${randomUUID().slice(0, 6)}`;
    let sealed = '';
    await runAgent(name, 'spans-first', 'gzip', async () => {
      const datasetId = await datasetNamed(name);
      await until(datasetId, (found) => found.length === 3);
      // The spans' version is sealed: the log records' join writes a new version of those rows.
      sealed = (await live(datasetId)).head_version_id;
      await t.http.post(`/traces/datasets/${datasetId}/live:seal`).set(r.member.auth).expect(200);
    });
    const datasetId = await datasetNamed(name);
    const found = await until(datasetId, joined);
    expect(joinedFields(found)).toEqual(EXPECTED);
    // The root span has no log records and keeps its own fields.
    expect(found.find((s) => s.name === 'support-agent')?.attributes['log.records']).toBeUndefined();
    // The sealed version still shows the rows as they landed; the new head the joined ones.
    const head = (await live(datasetId)).head_version_id;
    expect(head).not.toEqual(sealed);
    {
      const before = await t.http
        .post(`/datasets/${datasetId}/query`)
        .set(r.member.auth)
        .send({ version_id: sealed, limit: 100 })
        .expect(200);
      const old = chatSpans(before.body.items.map((item: Row) => item.data ?? item));
      expect(old.map((s) => s.attributes['log.records'])).toEqual([undefined, undefined]);
    }
    expect((await runOf(datasetId)).counts).toEqual(expect.objectContaining({ received: 3, landed: 3, dropped: 0 }));
  }, 120_000);

  it('joins them the same when the log records arrive before their spans (no compression)', async () => {
    const name = `agent-logs-before-${randomUUID().slice(0, 6)}`;
    await runAgent(name, 'logs-first', 'none', async () => {
      // The records wait, acknowledged, for spans not landed yet.
      const datasetId = await datasetNamed(name);
      expect(await rows(datasetId).catch(() => [])).toEqual([]);
    });
    const found = await until(await datasetNamed(name), joined);
    expect(joinedFields(found)).toEqual(EXPECTED);
  }, 120_000);

  /** One span recorded by the SDK, exported as OTLP JSON: the span log records of the next tests name. */
  async function landOneSpan(
    dataset: string,
  ): Promise<{ dataset: string; datasetId: string; traceId: string; spanId: string }> {
    const [span] = recordTraces([
      { name: 'judge-me', start: 0, end: 10, attributes: { 'gen_ai.operation.name': 'chat' } },
    ]);
    await t.http
      .post('/v1/traces')
      .set(bearer())
      .set('x-ews-dataset', dataset)
      .send(otlpJson([span]))
      .expect(200);
    const datasetId = await datasetNamed(dataset);
    await until(datasetId, (found) => found.length === 1);
    return { dataset, datasetId, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
  }
  const logRecord = (traceId: string, spanId: string, fields: Record<string, unknown>) => ({
    timeUnixNano: '1764000000000000000',
    ...(traceId ? { traceId, spanId } : {}),
    ...fields,
  });
  const logsRequest = (records: unknown[]) => ({
    resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 'tests' }, logRecords: records }] }],
  });

  it('takes OTLP JSON: an evaluation result lands on its span, a record without trace context is rejected (partial success) and counted', async () => {
    const { dataset, datasetId, traceId, spanId } = await landOneSpan(`eval-logs-${randomUUID().slice(0, 6)}`);
    const res = await t.http
      .post('/v1/logs')
      .set(bearer())
      .set('x-ews-dataset', dataset)
      .send(
        logsRequest([
          logRecord(traceId, spanId, {
            eventName: 'gen_ai.evaluation.result',
            attributes: [
              { key: 'gen_ai.evaluation.name', value: { stringValue: 'relevance' } },
              { key: 'gen_ai.evaluation.score.value', value: { doubleValue: 0.8 } },
              { key: 'gen_ai.evaluation.score.label', value: { stringValue: 'relevant' } },
            ],
          }),
          logRecord(traceId, spanId, { severityText: 'WARN', body: { stringValue: 'retrying the model call' } }),
          logRecord('', '', { body: { stringValue: 'a record of no span' } }),
        ]),
      )
      .expect(200);
    expect(res.body.partialSuccess).toEqual({
      rejectedLogRecords: '1',
      errorMessage: expect.stringContaining('missing_trace_context (1)'),
    });
    const [span] = await until(datasetId, (found) => Array.isArray(found[0]?.attributes?.['log.records']));
    expect(span.attributes['gen_ai.evaluation.results']).toEqual([
      expect.objectContaining({ name: 'relevance', score_value: 0.8, score_label: 'relevant' }),
    ]);
    expect(span.attributes['log.records'].map((x: Row) => [x.event_name, x.severity, x.body])).toEqual([
      ['gen_ai.evaluation.result', null, null],
      [null, 'WARN', 'retrying the model call'],
    ]);
    const run = await runOf(datasetId);
    expect(run.drop_reasons).toEqual(expect.objectContaining({ missing_trace_context: 1 }));
    expect(run.counts).toEqual(expect.objectContaining({ dropped: 1, received: 2, landed: 1 }));
    const drops = await t.http.get(`/traces/runs/${run.id}/drops`).set(r.member.auth).expect(200);
    expect(drops.body.items).toEqual([expect.objectContaining({ reason: 'missing_trace_context' })]);
  }, 60_000);

  it('takes gRPC LogsService/Export; a record whose span never arrives is dropped after OTLP_LOG_PENDING_SECONDS, counted', async () => {
    const { dataset, datasetId } = await landOneSpan(`grpc-logs-${randomUUID().slice(0, 6)}`);
    // The ids as bytes: fromObject reads a string for a bytes field as base64, not as the JSON mapping's hex.
    const body = Buffer.from(
      ExportLogsServiceRequest.encode(
        ExportLogsServiceRequest.fromObject(
          logsRequest([
            {
              timeUnixNano: '1764000000000000000',
              traceId: randomBytes(16),
              spanId: randomBytes(8),
              eventName: 'gen_ai.user.message',
              body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'hello?' } }] } },
            },
          ]),
        ),
      ).finish(),
    );
    const answer = await grpcExport(
      grpcAddress,
      body,
      { authorization: `Bearer ${key}`, 'x-ews-dataset': dataset },
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
    );
    expect(answer.code).toBe(0);
    expect(ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(answer.response))).toEqual({});
    const deadline = Date.now() + 30_000;
    let run = await runOf(datasetId);
    while (run.counts.dropped < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      run = await runOf(datasetId);
    }
    expect(run.counts).toEqual(expect.objectContaining({ dropped: 1 }));
    const drops = await t.http.get(`/traces/runs/${run.id}/drops`).set(r.member.auth).expect(200);
    expect(drops.body.items).toEqual([expect.objectContaining({ reason: 'span_not_received' })]);

    const refused = await grpcExport(
      grpcAddress,
      body,
      {},
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
    );
    expect(refused.code).toBe(GrpcStatus.UNAUTHENTICATED);
  }, 60_000);

  it('refuses an unauthenticated export and an undecodable one', async () => {
    await t.http.post('/v1/logs').set('content-type', 'application/json').send(logsRequest([])).expect(401);
    const bad = await t.http
      .post('/v1/logs')
      .set(bearer())
      .set('content-type', 'application/json')
      .send('{"resourceLogs": 3}')
      .expect(400);
    expect(bad.body.error_code).toBe('otlp_body_undecodable');
  });
});
