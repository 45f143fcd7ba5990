import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { agentSut, type AgentSut } from '../../utils/agent-sut.js';
import { uploadRows } from '../../utils/datasets.js';
import type { FakeUpstream } from '../../utils/fake-upstream.js';
import { exportingWorkspace } from '../../utils/online.js';
import { runToEnd, sutWithConnection } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { toolCallingModel, type AgentPlan } from '../../utils/tool-calling-model.js';

/** The agent's plan per task: the tools it calls, round by round, then its answer. */
const PLANS: Record<string, AgentPlan> = {
  'Where is order 42?': {
    rounds: [
      [{ name: 'lookup_order', arguments: { order_id: 42 } }],
      [{ name: 'track_parcel', arguments: { parcel: 'P-42' } }],
    ],
    answer: 'Order 42 ships tomorrow.',
  },
  'Refund order 7': {
    rounds: [
      [
        { name: 'lookup_order', arguments: { order_id: 7 } },
        { name: 'refund', arguments: { order_id: 7, amount: 20 } },
      ],
    ],
    answer: 'Order 7 is refunded.',
  },
  'What is the weather?': { rounds: [], answer: 'I can only help with orders.' },
  'Cancel order 9': {
    rounds: [[{ name: 'cancel_order', arguments: { order_id: 9 } }]],
    answer: 'I could not cancel order 9.',
  },
};

/** The calls each task should make: as planned, but the refund should also notify the customer. */
const EXPECTED: Record<string, Array<{ name: string }>> = Object.fromEntries(
  Object.entries(PLANS).map(([task, plan]) => [task, plan.rounds.flat().map((c) => ({ name: c.name }))]),
);
EXPECTED['Refund order 7'] = [...EXPECTED['Refund order 7'], { name: 'notify_customer' }];

const TOOLS = {
  lookup_order: (a: Record<string, unknown>) => ({ order_id: a.order_id, parcel: `P-${String(a.order_id)}` }),
  track_parcel: () => ({ eta: 'tomorrow' }),
  refund: (a: Record<string, unknown>) => ({ refunded: a.amount }),
  cancel_order: () => {
    throw new Error('order 9 has shipped');
  },
};

interface ItemRow {
  row_id: string;
  output: string | null;
  trace_id: string | null;
  trajectory: { source: string; trace_id: string; steps: Array<Record<string, unknown>> } | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null } | null;
}

/**
 * Runs linked to the SUT's own trace: each call carries a W3C traceparent, the agent exports its
 * spans (OpenTelemetry SDK, OTLP/protobuf, after it answered), and the run joins each row to them
 * before scoring: the trajectory the agent really took, its tokens and its errors.
 */
describe('runs: linked to the SUT’s own trace', () => {
  let t: TestApp;
  let model: FakeUpstream;
  let agent: AgentSut;
  let world: Awaited<ReturnType<typeof exportingWorkspace>>;

  beforeAll(async () => {
    t = await startTestApp();
    world = await exportingWorkspace(t);
    model = await toolCallingModel((task) => PLANS[task]);
    agent = await agentSut({
      modelUrl: model.url('/v1'),
      otlpUrl: world.url,
      apiKey: world.key,
      dataset: 'support-agent-ci',
      tools: TOOLS,
      exportDelayMs: 400,
    });
  });
  afterAll(async () => {
    await agent?.close();
    await model?.close();
    await t?.close();
  });

  it('sends a traceparent with every call and scores each row from the trace its agent exported', async () => {
    const { r } = world;
    const ws = r.workspace.id;
    const tasks = Object.keys(PLANS);
    const data = await uploadRows(
      t,
      r.member.auth,
      ws,
      tasks.map((question) => ({ input: question, expected_tool_calls: EXPECTED[question] })),
    );
    const { sutId, connectionId } = await sutWithConnection(t, r.member.auth, ws, {
      name: 'support-agent',
      connection: {
        name: 'staging',
        kind: 'http',
        http: { url: `${agent.url}/agent`, method: 'POST' },
        trace_link: { dataset: 'support-agent-ci', wait_ms: 20_000, settle_ms: 300 },
      },
    });
    const connections = await t.http.get(`/suts/${sutId}/connections`).set(r.viewer.auth).expect(200);
    expect(connections.body[0].trace_link).toEqual({ dataset: 'support-agent-ci', wait_ms: 20_000, settle_ms: 300 });

    const run = await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['latency', 'cost', 'tool_call_f1', 'trajectory_match', 'no_repeated_calls'],
    });
    expect(run.state).toBe('succeeded');

    const items = (await t.dataSource.query(
      `SELECT i.row_id, i.output, i.trace_id, i.trajectory, i.usage FROM run_items i WHERE i.run_id = $1`,
      [run.id],
    )) as ItemRow[];
    expect(items).toHaveLength(tasks.length);
    // Each call carried its own trace: the traceparent the agent received names the item's trace id.
    const sent = agent.traceparents.map((tp) => tp.split('-')[1]);
    expect(new Set(items.map((i) => i.trace_id))).toEqual(new Set(sent));
    for (const tp of agent.traceparents) expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const byQuestion = new Map(items.map((i) => [i.output, i]));
    for (const question of tasks) {
      const plan = PLANS[question];
      const item = byQuestion.get(plan.answer)!;
      expect(item).toBeDefined();
      const trajectory = item.trajectory!;
      expect(trajectory.source).toBe('trace');
      expect(trajectory.trace_id).toBe(item.trace_id);
      // Independently: the agent's steps are the model calls (one per round and the answer) and the planned tool calls in order.
      const expected: Array<{ type: string; name: string; arguments?: unknown }> = [
        { type: 'agent', name: 'support-agent' },
      ];
      for (const round of plan.rounds) {
        expected.push({ type: 'llm', name: 'gpt-4o-mini' });
        for (const call of round) expected.push({ type: 'tool_call', name: call.name, arguments: call.arguments });
      }
      expected.push({ type: 'llm', name: 'gpt-4o-mini' });
      expect(
        trajectory.steps.map((s) => ({
          type: s.type,
          name: s.name,
          ...(s.type === 'tool_call' ? { arguments: s.arguments } : {}),
        })),
      ).toEqual(expected);
      // Tokens from the trace (the agent reports none in its answer): the model's usage summed over its calls.
      const calls = plan.rounds.length + 1;
      const prompt = Array.from({ length: calls }, (_, k) => 20 + 5 * k).reduce((a, b) => a + b, 0);
      expect(item.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: 7 * calls });
    }
    // The trajectory metrics on the trace's trajectory, against an independent computation from the plan (names only).
    const results = (
      await t.http.post(`/runs/${run.id}/results/query`).set(r.viewer.auth).send({ limit: 100 }).expect(200)
    ).body.items as Array<{ row: { input: string }; scores: Record<string, { score: number | null }> }>;
    for (const item of results) {
      const actual = PLANS[item.row.input].rounds.flat().map((c) => c.name);
      const expected = EXPECTED[item.row.input].map((c) => c.name);
      const matched = expected.filter(
        (name, i) => expected.slice(0, i).filter((n) => n === name).length < actual.filter((n) => n === name).length,
      ).length;
      const precision = actual.length ? matched / actual.length : 1;
      const recall = expected.length ? matched / expected.length : 1;
      const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
      expect(item.scores.tool_call_f1.score).toBeCloseTo(f1, 10);
      expect(item.scores.trajectory_match.score).toBe(JSON.stringify(actual) === JSON.stringify(expected) ? 1 : 0);
      expect(item.scores.no_repeated_calls.score).toBe(0);
    }
    expect(results.find((i) => i.row.input === 'Refund order 7')!.scores.tool_call_f1.score).toBeCloseTo(0.8, 10);
    // The tool that failed is a failed step.
    const cancel = byQuestion.get(PLANS['Cancel order 9'].answer)!;
    const failed = cancel.trajectory!.steps.find((s) => s.name === 'cancel_order')!;
    expect(failed.error).toContain('order 9 has shipped');
  });

  it('keeps the answer and says so when the trace does not land within the wait', async () => {
    const { r } = world;
    const ws = r.workspace.id;
    const data = await uploadRows(t, r.member.auth, ws, [{ input: 'What is the weather?' }], 'weather.json');
    const { sutId, connectionId } = await sutWithConnection(t, r.member.auth, ws, {
      name: 'agent-elsewhere',
      connection: {
        name: 'exports-elsewhere',
        kind: 'http',
        http: { url: `${agent.url}/agent`, method: 'POST' },
        trace_link: { dataset: 'a-dataset-it-never-exports-to', wait_ms: 600, settle_ms: 100 },
      },
    });
    const run = await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics: ['latency'],
    });
    expect(run.state).toBe('succeeded');
    const events = await t.http.get(`/runs/${run.id}/events`).set(r.viewer.auth).expect(200);
    const missing = (events.body.items ?? events.body).filter((e: { type: string }) => e.type === 'trace_incomplete');
    expect(missing).toHaveLength(1);
    expect(missing[0].data).toMatchObject({ spans: 0 });
    expect(missing[0].data.waited_ms).toBeGreaterThanOrEqual(600);
  });
});
