import { describe, expect, it } from '@jest/globals';
import {
  compactSpan,
  DEFAULT_PRICES,
  ENRICHMENT_FIELDS,
  enrichTrace,
  enrichTraces,
  findCycles,
  matchPriceKey,
} from './enrichment.js';
import type { PriceTable, TraceEnrichment } from './enrichment.js';
import type { CanonicalSpan, ToolCall } from './span.types.js';

const TRACE = 'c'.repeat(32);
const T0 = Date.parse('2025-01-01T00:00:00.000Z');

function span(
  id: string,
  parent: string | null,
  kind: CanonicalSpan['kind'],
  name: string,
  startMs: number,
  endMs: number,
  over: Partial<CanonicalSpan> = {},
): CanonicalSpan {
  return {
    trace_id: TRACE,
    span_id: id,
    parent_span_id: parent,
    session_id: null,
    user_id: null,
    name,
    kind,
    start_time: new Date(T0 + startMs).toISOString(),
    end_time: new Date(T0 + endMs).toISOString(),
    duration_ms: endMs - startMs,
    status: 'ok',
    error: null,
    input: null,
    output: null,
    model: null,
    tokens_input: null,
    tokens_output: null,
    tokens_total: null,
    cost: null,
    tool_calls: [],
    retrieved_documents: [],
    service_name: 'agent-api',
    convention: 'openinference',
    attributes: {},
    ...over,
  };
}
const call = (name: string, args: ToolCall['arguments'], id: string | null = null): ToolCall => ({
  name,
  arguments: args,
  id,
});

// An agent run: the agent span repeats its children's token totals (must not be double counted).
const agentTrace = (): CanonicalSpan[] => [
  span('root', null, 'agent', 'support_agent', 0, 5000, {
    session_id: 'sess-1',
    user_id: 'u-1',
    tokens_input: 3100,
    tokens_output: 800,
  }),
  span('l1', 'root', 'llm', 'plan', 10, 900, {
    model: 'gpt-4o-2024-08-06',
    tokens_input: 1000,
    tokens_output: 200,
    tool_calls: [call('search', { q: 'refund' }, 'c1')],
  }),
  span('t1', 'root', 'tool', 'search', 1000, 1200, { tool_calls: [call('search', { q: 'refund' }, 'c1')] }),
  span('r1', 't1', 'retriever', 'vector_search', 1010, 1100),
  span('l2', 'root', 'llm', 'answer', 1300, 2500, {
    model: 'gpt-4o-mini',
    tokens_input: 2000,
    tokens_output: 500,
    tokens_total: 2500,
  }),
  span('t2', 'root', 'tool', 'lookup_order', 2600, 2700, {
    status: 'error',
    error: 'order not found',
    tool_calls: [call('lookup_order', { id: 7 })],
  }),
  span('l3', 'root', 'llm', 'classify', 2800, 3000, {
    model: 'acme-finetune-v2',
    tokens_input: 100,
    tokens_output: 100,
  }),
];

describe('enrichTrace', () => {
  it('sums tokens over the lowest carriers and prices them by model', () => {
    const e = enrichTrace(agentTrace());
    expect([e.tokens_input, e.tokens_output, e.tokens_total]).toEqual([3100, 800, 1200 + 2500 + 200]);
    // gpt-4o: 1000 * 2.5/1M + 200 * 10/1M = 0.0045; gpt-4o-mini: 2000 * 0.15/1M + 500 * 0.6/1M = 0.0006
    expect(e.cost_estimated).toBe(0.0051);
    expect(e.unpriced_models).toEqual(['acme-finetune-v2']);
    expect([e.cost_reported, e.cost, e.cost_source]).toEqual([null, 0.0051, 'estimated']);
    expect(e.models).toEqual(['acme-finetune-v2', 'gpt-4o-2024-08-06', 'gpt-4o-mini']);
  });

  it('prefers reported cost and uses a custom price table', () => {
    const spans = agentTrace();
    spans[1].cost = 0.01;
    spans[4].cost = 0.002;
    const prices: PriceTable = {
      as_of: '2025-01-01',
      currency: 'USD',
      models: { 'acme-finetune-v2': { input_per_1m: 10, output_per_1m: 20 } },
    };
    const e = enrichTrace(spans, prices);
    expect([e.cost_reported, e.cost, e.cost_source]).toEqual([0.012, 0.012, 'reported']);
    // 100 * 10/1M + 100 * 20/1M
    expect(e.cost_estimated).toBe(0.003);
    expect(e.unpriced_models).toEqual(['gpt-4o-2024-08-06', 'gpt-4o-mini']);
  });

  it('reports identity, timing, errors, counts and depth', () => {
    const e = enrichTrace(agentTrace());
    const expected: Partial<TraceEnrichment> = {
      trace_id: TRACE,
      session_id: 'sess-1',
      user_id: 'u-1',
      root_span_name: 'support_agent',
      span_count: 7,
      start_time: '2025-01-01T00:00:00.000Z',
      end_time: '2025-01-01T00:00:05.000Z',
      duration_ms: 5000,
      error_count: 1,
      has_error: true,
      errors: [{ span_id: 't2', span_name: 'lookup_order', message: 'order not found' }],
      llm_calls: 3,
      retriever_calls: 1,
      max_depth: 3,
    };
    expect(e).toMatchObject(expected);
    // search: requested once by l1 and executed once (t1) -> 1, not 2; lookup_order executed once.
    expect(e.tool_call_counts).toEqual({ lookup_order: 1, search: 1 });
    expect(e.tool_calls).toBe(2);
    expect([e.loop_detected, e.loops]).toEqual([false, []]);
  });

  it('uses the extent when spans outlive the root', () => {
    const e = enrichTrace([span('a', null, 'chain', 'root', 0, 100), span('b', 'a', 'tool', 'bg', 50, 400)]);
    expect(e.duration_ms).toBe(400);
    expect(e.max_depth).toBe(2);
  });

  it('detects the same tool with the same arguments called 3 times', () => {
    const spans = [
      span('root', null, 'agent', 'agent', 0, 1000),
      span('a', 'root', 'tool', 'search', 10, 20, { tool_calls: [call('search', { q: 'x', page: 1 })] }),
      span('b', 'root', 'tool', 'search', 30, 40, { tool_calls: [call('search', '{"page": 1, "q": "x"}')] }),
      span('c', 'root', 'tool', 'search', 50, 60, { tool_calls: [call('search', { page: 1, q: 'x' })] }),
      span('d', 'root', 'tool', 'search', 70, 80, { tool_calls: [call('search', { q: 'y', page: 1 })] }),
    ];
    const e = enrichTrace(spans);
    expect(e.loops).toEqual([{ name: 'search', repetitions: 3, kind: 'repeated_call', detail: '{"page":1,"q":"x"}' }]);
    expect(e.loop_detected).toBe(true);
    expect(e.tool_call_counts).toEqual({ search: 4 });
  });

  it('counts LLM-requested calls of uninstrumented tools for loops', () => {
    const spans = [
      span('root', null, 'agent', 'agent', 0, 1000),
      ...[1, 2, 3].map((i) =>
        span(`l${i}`, 'root', 'llm', `step${i}`, i * 10, i * 10 + 5, {
          tool_calls: [call('fetch', { url: 'https://x' })],
        }),
      ),
    ];
    const e = enrichTrace(spans);
    expect(e.tool_call_counts).toEqual({ fetch: 3 });
    expect(e.loops).toEqual([{ name: 'fetch', repetitions: 3, kind: 'repeated_call', detail: '{"url":"https://x"}' }]);
  });

  it('detects a cycle of 2 call names repeated 3 times, and not 2 times', () => {
    const cyc = [
      span('root', null, 'agent', 'agent', 0, 1000),
      ...[0, 1, 2].flatMap((i) => [
        span(`p${i}`, 'root', 'llm', 'plan', i * 100, i * 100 + 40),
        span(`s${i}`, 'root', 'tool', 'search', i * 100 + 50, i * 100 + 90, {
          tool_calls: [call('search', { q: `query ${i}` })],
        }),
      ]),
      span('f', 'root', 'llm', 'final', 400, 450),
    ];
    const e = enrichTrace(cyc);
    expect(e.loops).toEqual([{ name: 'plan -> search', repetitions: 3, kind: 'cycle', detail: 'starts at span p0' }]);
    const twice = enrichTrace(cyc.filter((s) => s.span_id !== 'p2' && s.span_id !== 's2'));
    expect(twice.loops).toEqual([]);
  });

  it('handles an empty trace', () => {
    const e = enrichTrace([]);
    expect([e.span_count, e.tokens_input, e.cost, e.max_depth, e.duration_ms, e.root_span_name]).toEqual([
      0,
      null,
      null,
      0,
      null,
      null,
    ]);
  });

  it('enrichTraces groups by trace id', () => {
    const other = { ...span('x', null, 'llm', 'solo', 0, 10), trace_id: 'd'.repeat(32) };
    expect(enrichTraces([...agentTrace(), other]).map((e) => [e.trace_id, e.span_count])).toEqual([
      [TRACE, 7],
      ['d'.repeat(32), 1],
    ]);
  });
});

describe('findCycles', () => {
  it('reports primitive blocks only, shortest first', () => {
    expect(findCycles(['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'])).toEqual([
      { block: ['a', 'b'], start: 0, repetitions: 4 },
    ]);
    expect(findCycles(['x', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c'])).toEqual([
      { block: ['a', 'b', 'c'], start: 1, repetitions: 3 },
    ]);
    expect(findCycles(['a', 'a', 'a', 'a'])).toEqual([]);
  });
});

describe('prices', () => {
  it('matches models by key plus snapshot suffix, longest key first', () => {
    expect(matchPriceKey('gpt-4o-mini', DEFAULT_PRICES)).toBe('gpt-4o-mini');
    expect(matchPriceKey('gpt-4o-mini-2024-07-18', DEFAULT_PRICES)).toBe('gpt-4o-mini');
    expect(matchPriceKey('openai/gpt-4o-2024-08-06', DEFAULT_PRICES)).toBe('gpt-4o');
    expect(matchPriceKey('gpt-4.1-nano', DEFAULT_PRICES)).toBeNull();
    expect(matchPriceKey('claude-3-5-sonnet-20241022', DEFAULT_PRICES)).toBe('claude-3-5-sonnet');
    expect(matchPriceKey('claude-sonnet-4-20250514', DEFAULT_PRICES)).toBe('claude-sonnet-4');
    expect(matchPriceKey('models/gemini-1.5-flash-002', DEFAULT_PRICES)).toBe('gemini-1.5-flash');
    expect(matchPriceKey('O3-MINI', DEFAULT_PRICES)).toBe('o3-mini');
  });

  it('has the listed models, dated', () => {
    expect(Object.keys(DEFAULT_PRICES.models).sort()).toEqual(
      [
        'gpt-4o',
        'gpt-4o-mini',
        'gpt-4.1',
        'gpt-4.1-mini',
        'o3-mini',
        'claude-3-5-sonnet',
        'claude-3-5-haiku',
        'claude-sonnet-4',
        'gemini-1.5-pro',
        'gemini-1.5-flash',
      ].sort(),
    );
    expect(DEFAULT_PRICES.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('ENRICHMENT_FIELDS', () => {
  it('documents every result field once', () => {
    const keys = Object.keys(enrichTrace(agentTrace())).sort();
    expect(ENRICHMENT_FIELDS.map((f) => f.name).sort()).toEqual(keys);
    expect(ENRICHMENT_FIELDS.every((f) => f.type.length > 0 && f.description.length > 0)).toBe(true);
  });
});

describe('enrichTrace over very large traces', () => {
  it('finds the same figures from compact records as from whole spans', () => {
    const whole: CanonicalSpan[] = agentTrace().map((s) => ({
      ...s,
      input: s.kind === 'tool' ? s.input : [{ role: 'user', content: 'x'.repeat(4000) }],
      output: 'y'.repeat(4000),
      attributes: { 'llm.invocation_parameters': 'z'.repeat(4000) },
    }));
    // A tool span recording no call: its input stands for the call's arguments in loop detection.
    for (let i = 0; i < 3; i++)
      whole.push(span(`u${i}`, 'root', 'tool', 'fetch', 3100 + i * 10, 3105 + i * 10, { input: { url: 'a' } }));
    const compact = whole.map((s) => compactSpan(s as unknown as Record<string, unknown>));
    expect(compact.every((s) => s.output === null && Object.keys(s.attributes).length === 0)).toBe(true);
    expect(enrichTrace(compact)).toEqual(enrichTrace(whole));
    expect(enrichTrace(compact).loops.map((l) => l.name)).toContain('fetch');
  });

  it('walks a chain 100,000 spans deep and a trace of 20,000 roots without recursion or quadratic passes', () => {
    const chain = Array.from({ length: 100_000 }, (_, i) =>
      span(`s${i}`, i === 0 ? null : `s${i - 1}`, 'llm', 'step', i, i + 1, {
        tokens_input: i === 99_999 ? 7 : 1,
        tokens_output: 1,
      }),
    );
    const deep = enrichTrace(chain);
    expect(deep.max_depth).toBe(100_000);
    // Only the deepest span carries tokens with no carrier below it.
    expect([deep.tokens_input, deep.tokens_output]).toEqual([7, 1]);
    const flat = Array.from({ length: 20_000 }, (_, i) =>
      span(`r${i}`, `missing${i}`, i % 2 ? 'tool' : 'llm', i % 2 ? 'lookup' : 'chat', i, i + 1),
    );
    const started = performance.now();
    const wide = enrichTrace(flat);
    expect(wide.span_count).toBe(20_000);
    expect(wide.max_depth).toBe(1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
