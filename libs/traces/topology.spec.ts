import { describe, expect, it } from '@jest/globals';
import { buildTopology, latencyStats, nearestRank } from './topology.js';
import type { TopologySpan } from './topology.js';
import { keep, ok, span } from '../../test/utils/source-spans.js';
import { normaliseSpan } from './conventions.js';

const T1 = 'a'.repeat(32);
const T2 = 'b'.repeat(32);

function s(
  trace_id: string,
  span_id: string,
  parent_span_id: string | null,
  kind: TopologySpan['kind'],
  name: string,
  duration_ms: number,
  status: TopologySpan['status'] = 'ok',
): TopologySpan {
  return { trace_id, span_id, parent_span_id, kind, name, duration_ms, status, service_name: 'agent-api' };
}

// Two runs of a small agent: agent -> llm, agent -> tool x2 (one error) in T1; agent -> llm, agent -> tool,
// plus an orphan cleanup span in T2 (its parent was never exported).
const spans: TopologySpan[] = [
  s(T1, '1', null, 'agent', 'planner', 1000),
  s(T1, '2', '1', 'llm', 'gpt-4o', 300),
  s(T1, '3', '1', 'tool', 'search', 100),
  s(T1, '4', '1', 'tool', 'search', 200, 'error'),
  s(T2, '1', null, 'agent', 'planner', 500),
  s(T2, '2', '1', 'llm', 'gpt-4o', 100),
  s(T2, '3', '1', 'tool', 'search', 50),
  s(T2, '9', 'ffffffffffffffff', 'chain', 'cleanup', 10),
];

describe('buildTopology', () => {
  const g = buildTopology(spans);
  const node = (id: string) => g.nodes.find((n) => n.id === id)!;
  const edge = (a: string, b: string) => g.edges.find((e) => e.source === a && e.target === b)!;

  it('counts traces, spans, orphans and roots', () => {
    expect([g.trace_count, g.span_count, g.orphan_spans]).toEqual([2, 8, 1]);
    expect(g.roots).toEqual([
      { node: 'agent:planner', count: 2, orphans: 0 },
      { node: 'chain:cleanup', count: 1, orphans: 1 },
    ]);
  });

  it('computes node calls, errors and nearest-rank latency by hand', () => {
    // search latencies sorted [50, 100, 200]: mean 116.667; p50 rank ceil(1.5)=2 -> 100; p95 rank ceil(2.85)=3 -> 200
    expect(node('tool:search')).toEqual({
      id: 'tool:search',
      kind: 'tool',
      name: 'search',
      service_names: ['agent-api'],
      calls: 3,
      errors: 1,
      error_rate: 0.333,
      latency_ms: { mean: 116.667, p50: 100, p95: 200, p99: 200, max: 200 },
    });
    // planner [500, 1000]: p50 rank ceil(1)=1 -> 500
    expect(node('agent:planner')).toMatchObject({
      calls: 2,
      errors: 0,
      error_rate: 0,
      latency_ms: { mean: 750, p50: 500, p95: 1000, p99: 1000, max: 1000 },
    });
    expect(node('llm:gpt-4o')).toMatchObject({
      calls: 2,
      latency_ms: { mean: 200, p50: 100, p95: 300, p99: 300, max: 300 },
    });
    expect(g.nodes.map((n) => n.id)).toEqual(['tool:search', 'agent:planner', 'llm:gpt-4o', 'chain:cleanup']);
  });

  it('computes edges from the child calls', () => {
    expect(g.edges).toHaveLength(2);
    expect(edge('agent:planner', 'tool:search')).toEqual({
      source: 'agent:planner',
      target: 'tool:search',
      calls: 3,
      errors: 1,
      error_rate: 0.333,
      latency_ms: { mean: 116.667, p50: 100, p95: 200, p99: 200, max: 200 },
    });
    expect(edge('agent:planner', 'llm:gpt-4o')).toMatchObject({ calls: 2, errors: 0, error_rate: 0 });
  });

  it('resolves parents within the trace only (span ids repeat across traces)', () => {
    const g2 = buildTopology([s(T1, '1', null, 'agent', 'a', 1), s(T2, '2', '1', 'tool', 't', 1)]);
    expect(g2.orphan_spans).toBe(1);
    expect(g2.edges).toEqual([]);
  });

  it('handles an empty set', () => {
    expect(buildTopology([])).toEqual({
      nodes: [],
      edges: [],
      roots: [],
      trace_count: 0,
      span_count: 0,
      orphan_spans: 0,
    });
  });
});

describe('nearest-rank percentiles', () => {
  it('matches hand-computed ranks on 1..20', () => {
    const v = Array.from({ length: 20 }, (_, i) => 20 - i); // unsorted input
    // p50 rank ceil(10)=10 -> 10; p95 rank ceil(19)=19 -> 19; p99 rank ceil(19.8)=20 -> 20
    expect(latencyStats(v)).toEqual({ mean: 10.5, p50: 10, p95: 19, p99: 20, max: 20 });
    expect(nearestRank([7], 99)).toBe(7);
    expect(nearestRank([1, 2, 3, 4], 0)).toBe(1);
  });
});

describe('buildTopology of GenAI spans', () => {
  it('names agent and tool components by gen_ai.agent.name and gen_ai.tool.name, as the other conventions do', () => {
    const genai = (span_id: string, parent: string | null, name: string, attributes: Record<string, string>) =>
      ok(normaliseSpan(span({ span_id, parent_span_id: parent, name, attributes }), 'auto', keep)).span;
    const graph = buildTopology([
      genai('00f067aa0ba90201', null, 'invoke_agent support-agent', {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support-agent',
      }),
      genai('00f067aa0ba90202', '00f067aa0ba90201', 'chat gpt-4o', {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
      }),
      genai('00f067aa0ba90203', '00f067aa0ba90201', 'execute_tool lookup_order', {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup_order',
      }),
    ]);
    expect(graph.nodes.map((n) => n.id).sort()).toEqual([
      'agent:support-agent',
      'llm:chat gpt-4o',
      'tool:lookup_order',
    ]);
    expect(graph.edges.map((e) => `${e.source} -> ${e.target}`).sort()).toEqual([
      'agent:support-agent -> llm:chat gpt-4o',
      'agent:support-agent -> tool:lookup_order',
    ]);
  });
});
