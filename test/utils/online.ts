/**
 * A production application for online evaluation tests: traces recorded by the OpenTelemetry SDK
 * (an OpenInference agent span with an LLM child) and sent by the real OTLP/protobuf exporter
 * through a batch span processor; and a judge (a local server speaking the OpenAI chat protocol)
 * that fails the answers containing "BAD".
 */
import { expect } from '@jest/globals';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { chatCompletion, FakeUpstream, type RecordedRequest } from './fake-upstream.js';
import type { TestApp } from './test-app.js';

export interface ExportPlan {
  /** The service's URL (the app listening). */
  url: string;
  /** An API key of the workspace, member or above. */
  key: string;
  /** The trace dataset (`x-ews-dataset`). */
  dataset: string;
  /** Traces `from` ≤ i < `to`, answering `answer(i)`. */
  from: number;
  to: number;
  answer: (i: number) => string;
  /** Trace i starts at `startAt(i)` (epoch ms); now when absent. */
  startAt?: (i: number) => number;
}

/** Sends the planned traces through the exporter; answers their trace ids by index. */
export async function exportAnswers(plan: ExportPlan): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  const results: number[] = [];
  const exporter = new OTLPTraceExporter({
    url: `${plan.url}/v1/traces`,
    headers: { Authorization: `Bearer ${plan.key}`, 'x-ews-dataset': plan.dataset },
  });
  const observed: SpanExporter = {
    export: (spans: ReadableSpan[], done) =>
      exporter.export(spans, (result) => {
        results.push(result.code);
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-bot' }),
    spanProcessors: [new BatchSpanProcessor({ exporter: observed, maxExportBatchSize: 64, scheduledDelayMillis: 20 })],
  });
  const tracer = provider.getTracer('support-bot', '1.0.0');
  for (let i = plan.from; i < plan.to; i++) {
    const start = plan.startAt?.(i);
    tracer.startActiveSpan(
      'support-agent',
      {
        startTime: start,
        attributes: {
          'openinference.span.kind': 'AGENT',
          'session.id': `s-${i}`,
          'input.value': `question ${i}`,
          'output.value': plan.answer(i),
        },
      },
      (agent) => {
        ids.set(i, agent.spanContext().traceId);
        const llm = tracer.startSpan(
          'ChatCompletion',
          {
            startTime: start,
            attributes: {
              'openinference.span.kind': 'LLM',
              'llm.model_name': 'gpt-4o-mini',
              'llm.token_count.prompt': 10,
              'llm.token_count.completion': 5,
            },
          },
          trace.setSpan(ROOT_CONTEXT, agent),
        );
        llm.end(start === undefined ? undefined : start + 200);
        agent.end(start === undefined ? undefined : start + 300);
      },
    );
  }
  await provider.forceFlush();
  await provider.shutdown();
  expect(results.every((code) => code === ExportResultCode.SUCCESS)).toBe(true);
  return ids;
}

/**
 * The workspace's grading world: a judge (scores 1 when the graded output holds "BAD", 5
 * otherwise; `down()` true makes it answer 503) and the metric configs `grader` (judged, passing
 * at 4 of 5) and `mentions_order` (deterministic: the output contains "order").
 */
export async function gradingWorld(
  t: TestApp,
  auth: { admin: Record<string, string>; member: Record<string, string> },
  workspaceId: string,
  down: () => boolean = () => false,
): Promise<FakeUpstream> {
  const judge = await FakeUpstream.start();
  judge.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
    if (down()) return { status: 503, json: { error: 'overloaded' } };
    const prompt = (req.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content).join('\n');
    return {
      json: chatCompletion(
        prompt.includes('BAD') ? '{"score": 1, "reason": "wrong"}' : '{"score": 5, "reason": "right"}',
      ),
    };
  });
  const judgeId = (
    await t.http
      .post('/judges')
      .set(auth.admin)
      .send({
        workspace_id: workspaceId,
        name: 'grader-judge',
        provider: 'openai_compatible',
        base_url: judge.url('/v1'),
        model: 'gpt-4o-mini',
        max_attempts: 1,
      })
      .expect(201)
  ).body.id;
  await t.http
    .post('/metric-configs')
    .set(auth.member)
    .send({
      workspace_id: workspaceId,
      name: 'grader',
      kind: 'judged',
      metric: 'llm_judge',
      judged: {
        rubric: 'Is {{output}} right?',
        scale: { type: 'numeric', min: 1, max: 5 },
        pass_threshold: 0.75,
        judge_id: judgeId,
      },
    })
    .expect(201);
  await t.http
    .post('/metric-configs')
    .set(auth.member)
    .send({
      workspace_id: workspaceId,
      name: 'mentions_order',
      kind: 'deterministic',
      metric: 'contains',
      params: { substring: 'order' },
    })
    .expect(201);
  return judge;
}

/**
 * The app listening (the exporter needs a URL), a workspace with every role, and an API key an
 * exporter sends with (member).
 */
export async function exportingWorkspace(
  t: TestApp,
): Promise<{ url: string; key: string; r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>> }> {
  await t.app.listen(0, '127.0.0.1');
  const url = await t.app.getUrl();
  const r = await t.factory.workspaceWithRoles();
  const key = (
    await t.http
      .post(`/workspaces/${r.workspace.id}/api-keys`)
      .set(r.member.auth)
      .send({ name: 'otel-exporter', role: 'member' })
      .expect(201)
  ).body.key as string;
  return { url, key, r };
}

/** Polls `read` until `done` holds (throws with the last value after `ms`). */
export async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
