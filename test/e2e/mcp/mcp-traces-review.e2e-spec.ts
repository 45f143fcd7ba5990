import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { uploadRows } from '../../utils/datasets.js';
import { callOk, callRefused, mcpClient } from '../../utils/mcp.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

const TRACE_OK = 'aa000000000000000000000000000001';
const TRACE_FAILED = 'aa000000000000000000000000000002';

/** An agent's trace as plain span records: the agent, a model call and a tool call (failed in the second trace). */
function agentTrace(traceId: string, toolFails: boolean) {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, 0, ms)).toISOString();
  return [
    {
      trace_id: traceId,
      span_id: `${traceId.slice(-4)}000000000001`,
      name: 'support-agent',
      start_time: at(0),
      end_time: at(900),
      attributes: {
        'openinference.span.kind': 'AGENT',
        'input.value': 'Where is order 42?',
        'output.value': toolFails ? 'Sorry, something went wrong.' : 'Order 42 shipped.',
      },
    },
    {
      trace_id: traceId,
      span_id: `${traceId.slice(-4)}000000000002`,
      parent_span_id: `${traceId.slice(-4)}000000000001`,
      name: 'ChatCompletion',
      start_time: at(10),
      end_time: at(400),
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        'input.value': 'Where is order 42?',
        'output.value': 'call lookup_order',
      },
    },
    {
      trace_id: traceId,
      span_id: `${traceId.slice(-4)}000000000003`,
      parent_span_id: `${traceId.slice(-4)}000000000001`,
      name: 'lookup_order',
      start_time: at(410),
      end_time: at(800),
      status_code: toolFails ? 'ERROR' : 'OK',
      status_message: toolFails ? 'order service timed out' : '',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'input.value': '{"order_id": 42}',
        'output.value': toolFails ? '' : '{"status": "shipped"}',
      },
    },
  ];
}

/** The trace and review tools, with the official SDK's client: a failing production trace found and read as a tree; an item taken and labelled. */
describe('MCP server: traces and review', () => {
  let t: TestApp;
  let url: string;
  let member: Client;
  let viewer: Client;
  let traceDatasetId: string;
  let queueId: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = await t.app.getUrl();
    const r = await t.factory.workspaceWithRoles();
    const ws = r.workspace.id;
    const key = async (role: string) =>
      (
        await t.http
          .post(`/workspaces/${ws}/api-keys`)
          .set(r.member.auth)
          .send({ name: `mcp-${role}`, role })
          .expect(201)
      ).body.key as string;
    member = await mcpClient(url, await key('member'));
    viewer = await mcpClient(url, await key('viewer'), 'legacy');
    const landing = (
      await t.http
        .post('/traces/land:inline')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_name: 'support-production',
          records: [...agentTrace(TRACE_OK, false), ...agentTrace(TRACE_FAILED, true)],
        })
        .expect(202)
    ).body;
    const landed = await landingSettled(t, r.member.auth, landing.id);
    expect(landed.state).toBe('succeeded');
    traceDatasetId = landed.dataset_id;
    const enrichment = `/datasets/${landed.dataset_id}/versions/${landed.version_id}/trace-enrichment`;
    for (
      let i = 0;
      i < 400 && (await t.http.get(enrichment).set(r.member.auth).expect(200)).body.state !== 'succeeded';
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    const data = await uploadRows(
      t,
      r.member.auth,
      ws,
      [
        { question: 'q1', answer: 'a1' },
        { question: 'q2', answer: 'a2' },
      ],
      'qa.json',
    );
    queueId = (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'answers',
          rubric: { fields: [{ name: 'correct', type: 'pass_fail', required: true }] },
          source: { kind: 'dataset_version', id: data.versionId },
          overlap: 1,
        })
        .expect(201)
    ).body.id;
    await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'question', op: 'is_null', value: false } })
      .expect(200);
  });

  afterAll(async () => {
    await member?.close();
    await viewer?.close();
    await t?.close();
  });

  it('finds the failing trace by what enrichment found, and reads it as a tree with its error', async () => {
    const found = await callOk<{ datasets: Array<{ id: string; kind: string }> }>(viewer, 'find_datasets', {
      kind: 'traces',
    });
    expect(found.datasets.map((d) => d.id)).toEqual([traceDatasetId]);
    const failing = await callOk<{ total: number; traces: Array<{ trace_id: string; error_count: number }> }>(
      viewer,
      'search_traces',
      {
        dataset_id: traceDatasetId,
        has_error: true,
      },
    );
    expect(failing.total).toBe(1);
    expect(failing.traces[0]).toEqual(expect.objectContaining({ trace_id: TRACE_FAILED, error_count: 1 }));
    const all = await callOk<{ traces: Array<{ trace_id: string }> }>(viewer, 'search_traces', {
      dataset_id: traceDatasetId,
      sort: 'duration_ms',
    });
    expect(all.traces.map((tr) => tr.trace_id).sort()).toEqual([TRACE_OK, TRACE_FAILED]);

    const tree = await callOk<{ spans: Array<Record<string, unknown>>; enrichment: { has_error: boolean } }>(
      viewer,
      'show_trace',
      {
        dataset_id: traceDatasetId,
        trace_id: TRACE_FAILED,
      },
    );
    expect(tree.enrichment.has_error).toBe(true);
    expect(tree.spans.map((s) => [s.depth, s.name, s.kind, s.child_count])).toEqual([
      [1, 'support-agent', 'agent', 2],
      [2, 'ChatCompletion', 'llm', 0],
      [2, 'lookup_order', 'tool', 0],
    ]);
    expect(tree.spans[2]).toEqual(
      expect.objectContaining({ status: 'error', error: expect.stringContaining('timed out') }),
    );
    const shallow = await callOk<{ spans: unknown[] }>(viewer, 'show_trace', {
      dataset_id: traceDatasetId,
      trace_id: TRACE_FAILED,
      max_depth: 1,
    });
    expect(shallow.spans).toHaveLength(1);
    expect(
      await callRefused(viewer, 'show_trace', {
        dataset_id: traceDatasetId,
        trace_id: 'ff000000000000000000000000000000',
      }),
    ).toMatch(/HTTP 404 trace_span_not_found/);
  });

  it("takes the next item and labels it with a member's key; a viewer's key is refused", async () => {
    const queues = await callOk<{ queues: Array<{ id: string }> }>(viewer, 'list_review_queues');
    expect(queues.queues.map((q) => q.id)).toEqual([queueId]);
    expect(await callRefused(viewer, 'next_review_item', { queue_id: queueId })).toMatch(/HTTP 403/);
    const leased = await callOk<{ item: { id: string }; rubric: { fields: Array<{ name: string }> } }>(
      member,
      'next_review_item',
      { queue_id: queueId },
    );
    expect(leased.rubric.fields.map((f) => f.name)).toEqual(['correct']);
    expect(
      await callRefused(member, 'label_review_item', {
        queue_id: queueId,
        item_id: leased.item.id,
        values: { correct: 'perhaps' },
      }),
    ).toMatch(/HTTP 422 label_invalid/);
    const label = await callOk<{ item_id: string; values: Record<string, unknown> }>(member, 'label_review_item', {
      queue_id: queueId,
      item_id: leased.item.id,
      values: { correct: true },
    });
    expect(label).toEqual(expect.objectContaining({ item_id: leased.item.id, values: { correct: true } }));
    const final = await callOk<{ items: Array<{ id: string; final_label: Record<string, unknown> }> }>(
      viewer,
      'list_review_items',
      { queue_id: queueId, state: 'final' },
    );
    expect(final.items.map((i) => [i.id, i.final_label])).toEqual([
      [leased.item.id, expect.objectContaining({ correct: true })],
    ]);
  });
});
