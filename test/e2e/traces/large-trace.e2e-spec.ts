import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { expectProblem } from '../../utils/problem.js';
import { itOn } from '../../utils/database-mode.js';
import { largeAgentTrace, type LargeTraceExpectation } from '../../utils/large-trace.js';
import { otlpProtobuf } from '../../utils/otel-traces.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

/**
 * The RSS a 20,000-span trace may add to the process (service and test together) from before its
 * landing to the end of its reads: docs/traces.md, "Large traces" (the figures measured are in
 * docs/performance.md). Loose: it catches a landing, enrichment or read that holds the trace
 * several times over, not noise.
 */
const RSS_GROWTH_BOUND = 768 * 1024 * 1024;
/** What the SDK's BatchSpanProcessor sends per export by default (maxExportBatchSize) */
const SDK_BATCH = 512;

interface TreeItem {
  span: Record<string, any>;
  child_count: number;
  depth: number | null;
}

describe('A 20,000-span agent trace: landed, read back in pages, enriched in bounded memory', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let spans: ReadableSpan[];
  let expected: LargeTraceExpectation;
  let traceId: string;
  let datasetId: string;
  let versionId: string;
  let rssBefore: number;
  let rssPeak = 0;
  let sampler: NodeJS.Timeout;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ({ spans, expected } = largeAgentTrace());
    traceId = spans[0].spanContext().traceId;
    global.gc?.();
    rssBefore = process.memoryUsage().rss;
    sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
  });
  afterAll(async () => {
    clearInterval(sampler);
    await t?.close();
  });

  const base = () => `/datasets/${datasetId}/versions/${versionId}/span-tree`;
  const get = async (path: string, query: Record<string, string | number>) =>
    (await t.http.get(`${base()}/${path}`).query(query).set(r.viewer.auth).expect(200)).body as {
      items: TreeItem[];
      next_cursor: string | null;
    };

  it('lands from one OTLP/protobuf file, and its enrichment counts what the trace holds', async () => {
    expect(spans).toHaveLength(20_000);
    const upload = (
      await t.http
        .post('/traces/uploads')
        .query({ workspace_id: r.workspace.id })
        .set(r.member.auth)
        .attach('file', otlpProtobuf(spans), 'agent.pb')
        .expect(201)
    ).body;
    const started = await t.http
      .post('/traces/land')
      .set(r.member.auth)
      .send({ workspace_id: r.workspace.id, upload_id: upload.id, dataset_name: 'large agent trace' })
      .expect(202);
    const run = await landingSettled(t, r.member.auth, started.body.id);
    expect(run).toMatchObject({ state: 'succeeded', counts: { received: 20_000, landed: 20_000, dropped: 0 } });
    ({ dataset_id: datasetId, version_id: versionId } = run);

    const enrichment = `/datasets/${datasetId}/versions/${versionId}/trace-enrichment`;
    for (let i = 0; i < 600; i++) {
      const status = (await t.http.get(enrichment).set(r.viewer.auth).expect(200)).body;
      if (status.state === 'succeeded') break;
      expect(status.state).not.toBe('failed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [result] = (await t.http.get(`${enrichment}/results`).set(r.viewer.auth).expect(200)).body.items;
    expect(result).toMatchObject({
      trace_id: traceId,
      span_count: expected.spans,
      llm_calls: expected.llmCalls,
      tool_call_counts: expected.toolCalls,
      tool_calls: Object.values(expected.toolCalls).reduce((a, b) => a + b, 0),
      tokens_input: expected.tokensInput,
      tokens_output: expected.tokensOutput,
      error_count: expected.errors,
      max_depth: expected.maxDepth,
      root_span_name: 'orchestrator',
    });
  });

  it('reads every span exactly once walking down by parent, each with its true child count', async () => {
    const seen = new Map<string, number>();
    const childrenOf = new Map<string, number>();
    for (const s of spans) {
      const parent = s.parentSpanContext?.spanId;
      if (parent) childrenOf.set(parent, (childrenOf.get(parent) ?? 0) + 1);
    }
    let requests = 0;
    const walk = async (parent: string | null): Promise<void> => {
      let cursor: string | null = null;
      do {
        const page = await get('children', {
          trace_id: traceId,
          limit: 1000,
          ...(parent ? { parent_span_id: parent } : {}),
          ...(cursor ? { cursor } : {}),
        });
        requests++;
        for (const item of page.items) {
          seen.set(item.span.span_id, (seen.get(item.span.span_id) ?? 0) + 1);
          expect(item.span.parent_span_id ?? null).toBe(parent);
          expect(item.child_count).toBe(childrenOf.get(item.span.span_id) ?? 0);
        }
        for (const item of page.items) if (item.child_count > 0) await walk(item.span.span_id);
        cursor = page.next_cursor;
      } while (cursor);
    };
    await walk(null);
    expect(seen.size).toBe(expected.spans);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Only spans with children were asked for theirs: 1 root, 10 workers, 100 helpers, 100 MCP-calling tools.
    expect(requests).toBeLessThan(250);
  });

  it('reads every span exactly once by depth pages, level by level, each at its depth', async () => {
    const seen = new Map<string, number>();
    let cursor: string | null = null;
    let lastDepth = 0;
    do {
      const page: { items: TreeItem[]; next_cursor: string | null } = await get('by-depth', {
        trace_id: traceId,
        max_depth: expected.maxDepth,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      for (const item of page.items) {
        seen.set(item.span.span_id, (seen.get(item.span.span_id) ?? 0) + 1);
        expect(item.depth).toBe(expected.depthOf.get(item.span.span_id));
        expect(item.depth).toBeGreaterThanOrEqual(lastDepth);
        lastDepth = item.depth!;
      }
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.size).toBe(expected.spans);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);

    // Down to depth 3: the orchestrator, its 199 children, the 100 helpers.
    const shallow = await get('by-depth', { trace_id: traceId, max_depth: 3, limit: 1000 });
    expect(shallow.items).toHaveLength(1 + 199 + 100);
    expect(shallow.next_cursor).toBeNull();
  });

  it('answers unknown traces and spans, foreign cursors and out-of-bounds pages with problems', async () => {
    expectProblem(
      await t.http
        .get(`${base()}/children`)
        .query({ trace_id: 'f'.repeat(32) })
        .set(r.viewer.auth),
      404,
      'trace_span_not_found',
    );
    expectProblem(
      await t.http
        .get(`${base()}/children`)
        .query({ trace_id: traceId, parent_span_id: 'e'.repeat(16) })
        .set(r.viewer.auth),
      404,
      'trace_span_not_found',
    );
    const roots = await get('children', { trace_id: traceId, limit: 1 });
    expect(roots.items).toHaveLength(1);
    expect(roots.next_cursor).toBeNull();
    const firstLevel = await get('by-depth', { trace_id: traceId, max_depth: 2, limit: 5 });
    expectProblem(
      await t.http
        .get(`${base()}/by-depth`)
        .query({ trace_id: traceId, max_depth: 3, cursor: firstLevel.next_cursor! })
        .set(r.viewer.auth),
      400,
      'span_cursor_invalid',
    );
    for (const query of [
      { trace_id: traceId, limit: 1001 },
      { trace_id: traceId, max_depth: 0 },
    ])
      expectProblem(await t.http.get(`${base()}/by-depth`).query(query).set(r.viewer.auth), 400, 'validation_failed');
  });

  // The receiver's live landing is one code path on both databases, and instrumentations and
  // otlp-logs land live on the embedded one; the 40 batches of this trace add only time there.
  itOn('postgres', 'the live landing of batches is covered on the embedded database elsewhere')(
    'lands through the OTLP receiver in the batches an SDK exports',
    async () => {
      const key = (
        await t.http
          .post(`/workspaces/${r.workspace.id}/api-keys`)
          .set(r.member.auth)
          .send({ name: 'large-agent', role: 'member' })
          .expect(201)
      ).body.key;
      await t.app.listen(0, '127.0.0.1');
      const exporter = new OTLPTraceExporter({
        url: `${await t.app.getUrl()}/v1/traces`,
        headers: { Authorization: `Bearer ${key}`, 'x-ews-dataset': 'large agent trace (live)' },
      });
      for (let i = 0; i < spans.length; i += SDK_BATCH) {
        const result = await new Promise<{ code: ExportResultCode; error?: Error }>((resolve) =>
          exporter.export(spans.slice(i, i + SDK_BATCH), resolve),
        );
        expect(result.error).toBeUndefined();
        expect(result.code).toBe(ExportResultCode.SUCCESS);
      }
      await exporter.shutdown();
      const datasets = (
        await t.http.get('/datasets').query({ workspace_id: r.workspace.id }).set(r.member.auth).expect(200)
      ).body.items as Array<{ id: string; name: string }>;
      const live = datasets.find((d) => d.name === 'large agent trace (live)')!;
      let stream: Record<string, any> = {};
      for (let i = 0; i < 1200; i++) {
        stream = (await t.http.get(`/traces/datasets/${live.id}/live`).set(r.member.auth).expect(200)).body;
        if (stream.pending_spans === 0 && stream.head_spans === expected.spans) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(stream).toMatchObject({ pending_spans: 0, head_spans: expected.spans });
      [datasetId, versionId] = [live.id, stream.head_version_id];
      const roots = await get('children', { trace_id: traceId });
      expect(roots.items.map((i) => [i.span.name, i.child_count])).toEqual([['orchestrator', 199]]);
    },
  );

  it('stays within the documented memory bound', () => {
    expect(rssPeak - rssBefore).toBeLessThan(RSS_GROWTH_BOUND);
  });
});
