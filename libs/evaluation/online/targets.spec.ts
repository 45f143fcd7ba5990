import { describe, expect, it } from '@jest/globals';
import { isSampled } from './sampling.js';
import { asText, mappedValue, targetContext, targetKey, targetsOf, type Span } from './targets.js';

const T1 = '4bf92f3577b34da6a3ce929d0e0e4736';
const T2 = '5b8efff798038103d269b633813fc60c';

function span(over: Partial<Span> & { span_id: string }): Span {
  return {
    trace_id: T1,
    parent_span_id: null,
    session_id: null,
    name: 'step',
    kind: 'chain',
    start_time: '2026-11-01T12:00:00.000Z',
    end_time: '2026-11-01T12:00:01.000Z',
    input: null,
    output: null,
    tool_calls: [],
    retrieved_documents: [],
    ...over,
  };
}

const root = span({
  span_id: 'a1',
  kind: 'agent',
  input: 'Where is my order?',
  output: 'It ships tomorrow.',
  service_name: 'bot',
});
const retriever = span({
  span_id: 'a2',
  parent_span_id: 'a1',
  kind: 'retriever',
  start_time: '2026-11-01T12:00:00.100Z',
  retrieved_documents: [
    { id: 'kb-1', content: 'Orders ship in a day.', score: 0.9, metadata: null },
    { id: 'kb-2', content: 'Refunds take a week.', score: 0.4, metadata: null },
  ],
});
const llm = span({
  span_id: 'a3',
  parent_span_id: 'a1',
  kind: 'llm',
  model: 'gpt-4o-mini',
  start_time: '2026-11-01T12:00:00.200Z',
  end_time: '2026-11-01T12:00:02.500Z',
  tokens_input: 120,
  tokens_output: 24,
  output: 'It ships tomorrow.',
  tool_calls: [{ name: 'lookup_order', arguments: { id: 7 }, id: 'c1' }],
});

describe('online targets', () => {
  it('keys spans, traces and sessions', () => {
    expect(targetKey('trace', llm)).toBe(T1);
    expect(targetKey('span', llm)).toBe(`${T1}/a3`);
    expect(targetKey('session', llm)).toBeNull();
    expect(targetKey('session', { ...llm, session_id: 's-1' })).toBe('s-1');
  });

  it('names each target once, matched when any of its spans matched, complete when its root ended', () => {
    const other = span({ span_id: 'b2', trace_id: T2, parent_span_id: 'b1' });
    const seen = targetsOf(
      [
        { span: llm, matched: false },
        { span: other, matched: true },
        { span: root, matched: true },
      ],
      'trace',
      1,
    );
    expect(seen).toEqual([
      expect.objectContaining({ key: T1, trace_id: T1, matched: true, complete: true, sampled: true }),
      expect.objectContaining({ key: T2, trace_id: T2, matched: true, complete: false, sampled: true }),
    ]);
    // A root span that has not ended does not complete its trace.
    expect(targetsOf([{ span: { ...root, end_time: null }, matched: true }], 'trace', 1)[0].complete).toBe(false);
    // A span is complete when it lands; sessions never are.
    expect(targetsOf([{ span: llm, matched: true }], 'span', 1)[0]).toEqual(
      expect.objectContaining({ key: `${T1}/a3`, span_id: 'a3', complete: true }),
    );
    expect(targetsOf([{ span: { ...llm, session_id: 's-1' }, matched: true }], 'session', 1)[0]).toEqual(
      expect.objectContaining({ key: 's-1', trace_id: null, session_id: 's-1', complete: false }),
    );
  });

  it('samples by the trace id, as the consistent sampler decides', () => {
    const ids = Array.from(
      { length: 200 },
      (_, i) => `${(i * 7919 + 104729).toString(16).padStart(8, '0')}${T1.slice(8)}`,
    );
    const seen = targetsOf(
      ids.map((id) => ({ span: span({ span_id: 'x', trace_id: id }), matched: true })),
      'span',
      0.3,
    );
    expect(seen.map((t) => t.sampled)).toEqual(ids.map((id) => isSampled(id, 0.3)));
  });

  it('reads mapped fields from the picked spans, with defaults', () => {
    const spans = [llm, root, retriever];
    const ctx = targetContext(spans, {});
    expect(ctx.fields.input).toBe('Where is my order?');
    expect(ctx.fields.output).toBe('It ships tomorrow.');
    expect(asText(ctx.fields.context)).toBe('Orders ship in a day.\n\nRefunds take a week.');
    expect(ctx.fields.tool_calls).toEqual([{ name: 'lookup_order', arguments: { id: 7 }, id: 'c1' }]);
    expect(ctx.fields.expected_output).toBeNull();
    expect(ctx.latency_ms).toBe(2500);
    expect(ctx.tokens).toEqual({ prompt_tokens: 120, completion_tokens: 24 });
    expect(ctx.observed_at.toISOString()).toBe('2026-11-01T12:00:00.000Z');
    expect(ctx).toEqual(expect.objectContaining({ service_name: 'bot', model: 'gpt-4o-mini' }));
    expect(mappedValue(spans, { pick: 'last', kind: 'llm', field: 'model' })).toBe('gpt-4o-mini');
    expect(mappedValue(spans, { pick: 'first', name: 'nothing', field: 'output' })).toBeNull();
    expect(mappedValue(spans, { pick: 'all', field: 'span_id' })).toEqual(['a1', 'a2', 'a3']);
    // Without a root (it did not land), a root pick reads the spans there are.
    expect(mappedValue([llm], { pick: 'first_root', field: 'output' })).toBe('It ships tomorrow.');
  });

  it('turns values into text for metrics', () => {
    expect(asText(null)).toBeNull();
    expect(asText('a')).toBe('a');
    expect(asText(['a', 'b'])).toBe('a\n\nb');
    expect(asText({ role: 'assistant' })).toBe('{"role":"assistant"}');
  });
});
