import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTokens } from '#libs/common/token-count.js';
import { DEFAULT_TRAJECTORY_TOKENS, renderTrajectory } from '#libs/evaluation/trajectory/render.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { chatCompletion, FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { sutWithConnection, runToEnd } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { taskOf, toolCallingModel, type AgentPlan, type PlannedCall } from '../../utils/tool-calling-model.js';

type Score = { score: number | null; passed: boolean | null; error: string | null; detail?: Record<string, unknown> };
type Item = {
  row: { input: string };
  status: string;
  output: string | null;
  trajectory: Trajectory | null;
  trace_id: string | null;
  scores: Record<string, Score>;
};

const c = (name: string, args: Record<string, unknown>): PlannedCall => ({ name, arguments: args });
const PAR_OSL = { from: 'PAR', to: 'OSL' };

/** Agent tasks: what each agent does (its plan) and the calls its row expects, in the shapes people write them. */
const TASKS: Array<{ input: string; plan: AgentPlan; expected?: unknown }> = [
  {
    input: 'Find flights from Paris to Oslo',
    plan: { rounds: [[c('search_flights', { ...PAR_OSL, date: '2026-12-01' })]], answer: 'AF1 at 9:00.' },
    expected: [{ name: 'search_flights', arguments: PAR_OSL }],
  },
  {
    input: 'Weather in Paris and Oslo',
    plan: { rounds: [[c('get_weather', { city: 'Paris' }), c('get_weather', { city: 'Oslo' })]], answer: 'Sun; snow.' },
    expected: ['get_weather', 'get_weather'],
  },
  {
    input: 'Book the cheapest flight to Oslo',
    plan: { rounds: [[c('search_flights', PAR_OSL)], [c('book_flight', { flight: 'AF1' })]], answer: 'Booked AF1.' },
    expected: JSON.stringify([
      { type: 'function', function: { name: 'search_flights', arguments: JSON.stringify(PAR_OSL) } },
      { type: 'function', function: { name: 'book_flight', arguments: '{"flight":"AF1"}' } },
    ]),
  },
  {
    input: 'Where is order 7?',
    plan: {
      rounds: [[c('get_order', { id: 7 })], [c('get_order', { id: 7 })], [c('get_order', { id: 7 })]],
      answer: 'Shipped.',
    },
    expected: [{ name: 'get_order', arguments: { id: 7 } }],
  },
  { input: 'Say hello', plan: { rounds: [], answer: 'Hello!' }, expected: [] },
  { input: 'Book anything', plan: { rounds: [[c('book_flight', { flight: 'BA2' })]], answer: 'Booked BA2.' } },
];
const planFor = (task: string) => TASKS.find((t) => t.input === task)!.plan;

/** The metric configs of the run: every trajectory metric, some in two modes. */
const METRICS: Array<{ name: string; metric: string; params: Record<string, unknown> }> = [
  { name: 'calls-search', metric: 'tool_called', params: { tool: 'search_flights' } },
  { name: 'never-books', metric: 'tool_called', params: { tool: 'book_flight', negate: true } },
  { name: 'args-subset', metric: 'tool_args_match', params: { mode: 'subset' } },
  { name: 'order-strict', metric: 'trajectory_match', params: { mode: 'strict' } },
  { name: 'order-unordered', metric: 'trajectory_match', params: { mode: 'unordered' } },
  { name: 'order-subset', metric: 'trajectory_match', params: { mode: 'subset' } },
  { name: 'order-superset', metric: 'trajectory_match', params: { mode: 'superset' } },
  { name: 'strict-args', metric: 'trajectory_match', params: { compare_arguments: true } },
  { name: 'call-f1', metric: 'tool_call_f1', params: {} },
  { name: 'budget', metric: 'step_budget', params: { max_steps: 2 } },
  { name: 'no-repeats', metric: 'no_repeated_calls', params: {} },
];

// An independent reading of each metric's definition, over the calls the plan says the agent made.
type Call = { name: string; arguments?: unknown };
const sorted = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
      : v;
const same = (a: unknown, b: unknown) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const within = (e: unknown, a: unknown): boolean =>
  e && typeof e === 'object' && !Array.isArray(e)
    ? !!a &&
      typeof a === 'object' &&
      Object.entries(e).every(([k, v]) => k in a && within(v, (a as Record<string, unknown>)[k]))
    : same(e, a);
const counts = (calls: Call[]) =>
  calls.reduce((m, x) => m.set(x.name, (m.get(x.name) ?? 0) + 1), new Map<string, number>());
const namesWithin = (small: Call[], big: Call[]) =>
  [...counts(small)].every(([n, k]) => (counts(big).get(n) ?? 0) >= k);

function expectedOf(value: unknown): Call[] {
  const list = (typeof value === 'string' ? JSON.parse(value) : value) as unknown[];
  return list.map((x) => {
    if (typeof x === 'string') return { name: x };
    const o = x as { name?: string; arguments?: unknown; function?: { name: string; arguments: string } };
    return o.function
      ? { name: o.function.name, arguments: JSON.parse(o.function.arguments) }
      : { name: o.name!, arguments: o.arguments };
  });
}

function independentScores(actual: Call[], expectedValue: unknown): Record<string, number | string> {
  const count = (n: string) => actual.filter((a) => a.name === n).length;
  const out: Record<string, number | string> = {
    'calls-search': count('search_flights') >= 1 ? 1 : 0,
    'never-books': count('book_flight') === 0 ? 1 : 0,
    budget: actual.length,
    'no-repeats': [...new Set(actual.map((a) => JSON.stringify([a.name, sorted(a.arguments)])))].reduce(
      (sum, key) => sum + actual.filter((a) => JSON.stringify([a.name, sorted(a.arguments)]) === key).length - 1,
      0,
    ),
  };
  const noExpected = 'the row has no expected tool calls (column expected_tool_calls)';
  if (expectedValue === undefined) {
    for (const m of [
      'args-subset',
      'order-strict',
      'order-unordered',
      'order-subset',
      'order-superset',
      'strict-args',
      'call-f1',
    ])
      out[m] = noExpected;
    return out;
  }
  const expected = expectedOf(expectedValue);
  // Greedy pairing: in these tasks every expected call has at most one candidate with its arguments.
  const free = [...actual];
  const argsMatched = expected.filter((e) => {
    const i = free.findIndex(
      (a) => a.name === e.name && (e.arguments === undefined || within(e.arguments, a.arguments)),
    );
    return i >= 0 && free.splice(i, 1).length;
  }).length;
  out['args-subset'] = expected.length
    ? argsMatched / expected.length
    : 'no call is expected: there are no arguments to check';
  const namesEqual = expected.length === actual.length && expected.every((e, i) => e.name === actual[i].name);
  out['order-strict'] = namesEqual ? 1 : 0;
  out['order-unordered'] = namesWithin(expected, actual) && namesWithin(actual, expected) ? 1 : 0;
  out['order-subset'] = namesWithin(actual, expected) ? 1 : 0;
  out['order-superset'] = namesWithin(expected, actual) ? 1 : 0;
  out['strict-args'] =
    expected.length === actual.length &&
    expected.every(
      (e, i) => e.name === actual[i].name && (e.arguments === undefined || same(e.arguments, actual[i].arguments)),
    )
      ? 1
      : 0;
  const matched = [...counts(expected)].reduce((s, [n, k]) => s + Math.min(k, counts(actual).get(n) ?? 0), 0);
  const p = actual.length ? matched / actual.length : 1;
  const r = expected.length ? matched / expected.length : 1;
  out['call-f1'] = p + r ? (2 * p * r) / (p + r) : 0;
  return out;
}

/**
 * Agent tasks with expected tool calls, run against an OpenAI-compatible model that calls
 * tools (the run sends each task once: the trajectory is the model's first round of calls)
 * and against an agent endpoint that returns every step it took. Every trajectory metric's
 * score equals the test's own reading of its definition; trajectory_quality's planted judge
 * sees the trajectory rendered within its budget.
 */
describe('agent trajectories: tool calls read from answers, scored by every trajectory metric', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let model: FakeUpstream;
  let agent: FakeUpstream;
  let judge: FakeUpstream;
  let data: UploadedDataset;
  let chatSut: { sutId: string; connectionId: string };

  const run = async (sutId: string, connectionId: string, metrics: string[]) => {
    const ended = await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
      workspace_id: ws,
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      metrics,
    });
    expect(ended.state).toBe('succeeded');
    const results = await t.http
      .post(`/runs/${ended.id}/results/query`)
      .set(r.viewer.auth)
      .send({ limit: 100 })
      .expect(200);
    return results.body.items as Item[];
  };

  /** The agent endpoint as a SUT whose adapter reads its steps at `$.steps`. */
  const agentSut = async (name: string) => {
    const ids = await sutWithConnection(t, r.member.auth, ws, {
      name,
      connection: { name: 'api', kind: 'http', http: { url: agent.url('/agent') } },
    });
    await t.http
      .post(`/suts/${ids.sutId}/connections/${ids.connectionId}/adapter`)
      .set(r.member.auth)
      .send({
        request: { body: { task: '{{input}}' } },
        response: { language: 'jsonpath', output: '$.answer', trajectory: '$.steps' },
      })
      .expect(201);
    return ids;
  };

  const expectScores = (items: Item[], actualOf: (plan: AgentPlan) => PlannedCall[]) => {
    expect(items).toHaveLength(TASKS.length);
    for (const item of items) {
      const task = TASKS.find((x) => x.input === item.row.input)!;
      const want = independentScores(actualOf(task.plan), task.expected);
      const got = Object.fromEntries(
        Object.keys(want).map((name) => {
          const s = item.scores[name];
          return [name, s.error ?? s.score];
        }),
      );
      expect([task.input, got]).toEqual([task.input, want]);
      expect(item.scores.budget.passed).toBe(actualOf(task.plan).length <= 2);
    }
  };

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    model = await toolCallingModel(planFor);
    agent = await FakeUpstream.start();
    agent.on('POST', '/agent', (req: RecordedRequest) => {
      const plan = planFor((req.body as { task: string }).task);
      const steps = [
        ...plan.rounds
          .flat()
          .map((call, i) => ({ type: 'tool', tool: call.name, args: call.arguments, result: `ok ${i}` })),
        { type: 'llm', name: 'planner', output: plan.answer },
      ];
      return { json: { answer: plan.answer, steps } };
    });
    judge = await FakeUpstream.start();
    judge.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
      const prompt = (req.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content).join('\n');
      return {
        json: chatCompletion(
          prompt.includes('!! ERROR') ? '{"score": 2, "reason": "failed"}' : '{"score": 5, "reason": "ok"}',
        ),
      };
    });
    data = await uploadRows(
      t,
      r.member.auth,
      ws,
      TASKS.map((task) => ({
        input: task.input,
        ...(task.expected === undefined ? {} : { expected_tool_calls: task.expected }),
      })),
      'agent-tasks.json',
    );
    for (const m of METRICS)
      await t.http
        .post('/metric-configs')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: m.name, kind: 'deterministic', metric: m.metric, params: m.params })
        .expect(201);
  });

  afterAll(async () => {
    await Promise.all([model?.close(), agent?.close(), judge?.close()]);
    await t?.close();
  });

  it("an openai_chat connection: the completion's tool calls are the trajectory, their JSON text the output", async () => {
    chatSut = await sutWithConnection(t, r.member.auth, ws, {
      name: 'tool-model',
      connection: { name: 'chat', kind: 'openai_chat', openai_chat: { base_url: model.url('/v1'), model: 'agent' } },
    });
    const { sutId, connectionId } = chatSut;
    const items = await run(
      sutId,
      connectionId,
      METRICS.map((m) => m.name),
    );
    const firstRound = (plan: AgentPlan) => plan.rounds[0] ?? [];
    expectScores(items, firstRound);
    const weather = items.find((i) => i.row.input === 'Weather in Paris and Oslo')!;
    expect(weather.trajectory).toEqual({
      source: 'response',
      steps: [
        { type: 'tool_call', name: 'get_weather', arguments: { city: 'Paris' }, call_id: expect.any(String) },
        { type: 'tool_call', name: 'get_weather', arguments: { city: 'Oslo' }, call_id: expect.any(String) },
      ],
    });
    expect(JSON.parse(weather.output!)).toEqual(firstRound(planFor('Weather in Paris and Oslo')));
    // Every call carries its own W3C trace id, whether or not the SUT exports its trace here.
    expect(weather.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const hello = items.find((i) => i.row.input === 'Say hello')!;
    expect(hello).toMatchObject({ output: 'Hello!', trajectory: { source: 'response', steps: [] } });
    expect(
      model
        .received('POST', '/v1/chat/completions')
        .map((q) => taskOf(q.body as never))
        .sort(),
    ).toEqual(TASKS.map((x) => x.input).sort());
  });

  it("an http agent endpoint: the adapter's trajectory path reads every step it took", async () => {
    const { sutId, connectionId } = await agentSut('agent');
    const items = await run(
      sutId,
      connectionId,
      METRICS.map((m) => m.name),
    );
    expectScores(items, (plan) => plan.rounds.flat());
    const order = items.find((i) => i.row.input === 'Where is order 7?')!;
    expect(order.trajectory!.steps.map((s) => [s.type, s.name, s.output])).toEqual([
      ['tool_call', 'get_order', 'ok 0'],
      ['tool_call', 'get_order', 'ok 1'],
      ['tool_call', 'get_order', 'ok 2'],
      ['llm', 'planner', 'Shipped.'],
    ]);
    expect(order.scores['no-repeats']).toMatchObject({ score: 2, passed: false });
  });

  it('trajectory_quality: the judge sees the trajectory rendered within its budget, and the result states it', async () => {
    const { sutId, connectionId } = await agentSut('judged-agent');
    const judgeId = (
      await t.http
        .post('/judges')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'planted',
          provider: 'openai_compatible',
          base_url: judge.url('/v1'),
          model: 'j',
          max_attempts: 1,
        })
        .expect(201)
    ).body.id as string;
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'quality',
        kind: 'judged',
        metric: 'trajectory_quality',
        judged: { judge_id: judgeId },
      })
      .expect(201);
    const items = await run(sutId, connectionId, ['quality']);
    const prompts = judge
      .received('POST', '/v1/chat/completions')
      .map((q) => (q.body as { messages: Array<{ content: string }> }).messages[1].content);
    expect(prompts).toHaveLength(TASKS.length);
    for (const item of items) {
      const shown = renderTrajectory(item.trajectory!, {
        max_tokens: DEFAULT_TRAJECTORY_TOKENS,
        final_answer: item.output,
      });
      const prompt = prompts.find((p) => p.includes(`Task: ${item.row.input}\n`))!;
      expect(prompt).toContain(shown.text);
      expect(countTokens(shown.text)).toBeLessThanOrEqual(DEFAULT_TRAJECTORY_TOKENS);
      expect(shown.text.split('\n')[0]).toBe(
        `Trajectory of ${item.trajectory!.steps.length} steps, shown within a budget of ${DEFAULT_TRAJECTORY_TOKENS} tokens: ${item.trajectory!.steps.length} shown, none omitted; arguments and outputs cut at 300 characters.`,
      );
      expect(item.scores.quality).toMatchObject({
        score: 5,
        passed: true,
        detail: {
          trajectory_tokens: shown.tokens,
          max_tokens: DEFAULT_TRAJECTORY_TOKENS,
          steps_shown: shown.steps_shown,
          steps_total: shown.steps_total,
        },
      });
    }
  });

  it('a built-in that needs parameters, named without a metric config, is refused with the reason', async () => {
    const res = await t.http
      .post('/runs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        dataset_id: data.datasetId,
        sut_id: chatSut.sutId,
        connection_id: chatSut.connectionId,
        metrics: ['tool_called'],
      });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(
      /metrics.0: tool_called invalid parameters for tool_called: params must have required property 'tool'/,
    );
  });
});
