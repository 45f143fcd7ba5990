import { describe, expect, it } from '@jest/globals';
import { trajectoryFromSpans } from './from-spans.js';
import { MAX_STORED_STEPS as MAX_TRAJECTORY_STEPS } from './trajectory.types.js';

type Row = Parameters<typeof trajectoryFromSpans>[0][number];

function span(over: Partial<Row> & Pick<Row, 'span_id' | 'kind'>): Row {
  return {
    parent_span_id: null,
    name: over.span_id,
    start_time: '2026-11-01T12:00:00.000Z',
    duration_ms: 1,
    status: 'ok',
    error: null,
    input: null,
    output: null,
    model: null,
    tool_calls: [],
    ...over,
  };
}

const at = (ms: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, 0, ms)).toISOString();

describe('trajectoryFromSpans', () => {
  it('reads the agent’s steps in tree order: a parent first, siblings by start, ties in landing order', () => {
    // Landing order: children end (and land) before their parent; two tools share a millisecond.
    const spans = [
      span({
        span_id: 'l1',
        parent_span_id: 'a',
        kind: 'llm',
        model: 'gpt',
        start_time: at(0),
        tool_calls: [
          { name: 'lookup', arguments: '{"id":1}', id: 'c1' },
          { name: 'refund', arguments: '{"id":1}', id: 'c2' },
        ],
      }),
      span({
        span_id: 't1',
        parent_span_id: 'a',
        kind: 'tool',
        name: 'execute_tool lookup',
        start_time: at(5),
        tool_calls: [{ name: 'lookup', arguments: '{"id":1}', id: 'c1' }],
        output: '{"ok":true}',
      }),
      span({
        span_id: 't2',
        parent_span_id: 'a',
        kind: 'tool',
        start_time: at(5),
        status: 'error',
        error: 'refused',
        tool_calls: [{ name: 'refund', arguments: { id: 1 }, id: 'c2' }],
      }),
      span({ span_id: 'l2', parent_span_id: 'a', kind: 'llm', model: 'gpt', start_time: at(9), output: 'done' }),
      span({ span_id: 'c', parent_span_id: 'a', kind: 'chain', start_time: at(10) }),
      span({ span_id: 'a', parent_span_id: 'remote-parent', kind: 'agent', name: 'support', start_time: at(0) }),
    ];
    const t = trajectoryFromSpans(spans, 'trace-1');
    expect(t.source).toBe('trace');
    expect(t.trace_id).toBe('trace-1');
    // The model's requested calls are the tool spans' (executed): one step each, the spans'.
    expect(t.steps.map((s) => [s.type, s.name, s.span_id])).toEqual([
      ['agent', 'support', 'a'],
      ['llm', 'gpt', 'l1'],
      ['tool_call', 'lookup', 't1'],
      ['tool_call', 'refund', 't2'],
      ['llm', 'gpt', 'l2'],
    ]);
    expect(t.steps[2]).toMatchObject({ arguments: { id: 1 }, call_id: 'c1', output: '{"ok":true}', error: null });
    expect(t.steps[3]).toMatchObject({ arguments: { id: 1 }, error: 'refused' });
  });

  it('takes a model’s requested calls as steps for tools that have no span of their own, and names MCP servers', () => {
    const spans = [
      span({
        span_id: 'l',
        kind: 'llm',
        model: 'm',
        start_time: at(0),
        tool_calls: [
          { name: 'search', arguments: '{"q":"x"}', id: null },
          { name: 'get_weather', arguments: '{}', id: null },
        ],
      }),
      span({
        span_id: 'w',
        kind: 'tool',
        name: 'tools/call get_weather',
        start_time: at(3),
        // As the GenAI convention lands an MCP tools/call span: its call names the server.
        tool_calls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}', id: null, mcp_server: 'weather' }],
      }),
    ];
    const t = trajectoryFromSpans(spans, null);
    expect(t.steps.map((s) => [s.type, s.name, s.mcp_server ?? null])).toEqual([
      ['llm', 'm', null],
      ['tool_call', 'search', null],
      ['tool_call', 'get_weather', 'weather'],
    ]);
    expect(t.steps[1].arguments).toEqual({ q: 'x' });
  });

  it('keeps the first steps of a very long trace and counts the rest', () => {
    const n = MAX_TRAJECTORY_STEPS + 250;
    const spans = Array.from({ length: n }, (_, i) =>
      span({ span_id: `s${String(i).padStart(5, '0')}`, kind: 'tool', name: `tool-${i}`, start_time: at(i) }),
    );
    const t = trajectoryFromSpans(spans, 'big');
    expect(t.steps).toHaveLength(MAX_TRAJECTORY_STEPS);
    expect(t.truncated).toBe(250);
    expect(t.steps[0].name).toBe('tool-0');
  });
});
