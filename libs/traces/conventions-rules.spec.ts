import { describe, expect, it } from '@jest/globals';
import { END, keep, oiLlm, ok, span, START, TRACE } from '../../test/utils/source-spans.js';
import { detectConventions, normaliseSpan, REPORTED_FIELDS } from './conventions.js';
import { foldKey } from './conventions/mapping-context.js';
import type { CanonicalSpan, SourceSpan } from './span.types.js';

describe('normaliseSpan: values the mapping does not know are kept, not consumed', () => {
  it('leaves an unknown kind marker in attributes', () => {
    const oi = ok(normaliseSpan(span({ attributes: { 'openinference.span.kind': 'PLANNER' } }), 'auto', keep));
    expect([oi.span.kind, oi.span.attributes['openinference.span.kind'], oi.used.kind]).toEqual([
      'unknown',
      'PLANNER',
      undefined,
    ]);
    const lf = ok(normaliseSpan(span({ attributes: { 'langfuse.observation.type': 'event' } }), 'auto', keep));
    expect([lf.span.kind, lf.span.attributes['langfuse.observation.type']]).toEqual(['unknown', 'event']);
  });

  it('infers llm kind from the model without consuming the request model', () => {
    const r = ok(
      normaliseSpan(
        span({
          attributes: {
            'gen_ai.system': 'openai',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.response.model': 'gpt-4o-2024-08-06',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect([r.span.kind, r.span.model, r.used.kind]).toEqual(['llm', 'gpt-4o-2024-08-06', ['gen_ai.response.model']]);
    expect(r.span.attributes['gen_ai.request.model']).toBe('gpt-4o');
  });
});

describe('normaliseSpan: key clashes', () => {
  it('reports a resource attribute that clashes with a span attribute key as dropped', () => {
    const r = ok(
      normaliseSpan(
        span({ attributes: { 'resource.region': 'span-level' }, resource: { region: 'eu-west-1' } }),
        'auto',
        keep,
      ),
    );
    expect(r.span.attributes['resource.region']).toBe('span-level');
    expect(r.dropped).toEqual(['resource.region']);
    expect(r.unmapped.filter((k) => k === 'resource.region')).toHaveLength(2);
  });
});

describe('normaliseSpan: plain_otel', () => {
  it('keeps name, status, times and resource; kind unknown', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'GET /orders',
          otel_kind: 'server',
          status_code: 'ok',
          attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 },
        }),
        'auto',
        keep,
      ),
    );
    const s: CanonicalSpan = r.span;
    expect(s.convention).toBe('plain_otel');
    expect([s.kind, s.name, s.status, s.service_name, s.model, s.input]).toEqual([
      'unknown',
      'GET /orders',
      'ok',
      'agent-api',
      null,
      null,
    ]);
    expect(s.attributes['http.response.status_code']).toBe(200);
  });
});

describe('normaliseSpan: drops and ids', () => {
  const reason = (over: Partial<SourceSpan>, opts = keep): string => {
    const r = normaliseSpan(span(over), 'auto', opts);
    return r.ok ? 'ok' : r.drop.reason;
  };

  it('drops each invalid record with its reason and never throws', () => {
    expect(reason({ trace_id: '' })).toBe('missing_trace_id');
    expect(reason({ trace_id: '   ' })).toBe('missing_trace_id');
    expect(reason({ span_id: '' })).toBe('missing_span_id');
    expect(reason({ trace_id: '4bf92f3577b34da6a3ce929d0e0e473' })).toBe('invalid_id'); // 31 hex
    expect(reason({ trace_id: '0'.repeat(32) })).toBe('invalid_id');
    expect(reason({ span_id: '00f067aa0ba902b7aa' })).toBe('invalid_id'); // 18 hex
    expect(reason({ start_time_unix_nano: null })).toBe('missing_timestamps');
    expect(reason({ end_time_unix_nano: '0' })).toBe('missing_timestamps');
    expect(reason({ start_time_unix_nano: '2023-11-14' })).toBe('missing_timestamps');
    expect(reason({ start_time_unix_nano: END, end_time_unix_nano: START })).toBe('end_before_start');
    expect(
      reason({ attributes: { big: 'x'.repeat(2000) } }, { keepUnmapped: true, maxRecordBytes: 1000 } as typeof keep),
    ).toBe('record_too_large');
    expect(reason({ attributes: null as unknown as SourceSpan['attributes'] })).toBe('malformed_record');
  });

  it('keeps the drop payload and source_ref', () => {
    const s = span({ trace_id: '' });
    const r = normaliseSpan(s, 'auto', keep);
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.drop.source_ref, r.drop.payload]).toEqual([s.source_ref, s]);
  });

  it('accepts non-OTLP ids verbatim and lower-cases OTLP hex ids', () => {
    const uuid = ok(
      normaliseSpan(
        span({ trace_id: '9f3c2a1e-7b4d-4e8a-9c1f-2d3e4f5a6b7c', span_id: 'run-42', parent_span_id: 'run-41' }),
        'auto',
        keep,
      ),
    ).span;
    expect([uuid.trace_id, uuid.span_id, uuid.parent_span_id]).toEqual([
      '9f3c2a1e-7b4d-4e8a-9c1f-2d3e4f5a6b7c',
      'run-42',
      'run-41',
    ]);
    const short = ok(normaliseSpan(span({ trace_id: '12345', span_id: '17' }), 'auto', keep)).span;
    expect([short.trace_id, short.span_id]).toEqual(['12345', '17']);
    const upper = ok(
      normaliseSpan(span({ trace_id: TRACE.toUpperCase(), parent_span_id: '0000000000000000' }), 'auto', keep),
    ).span;
    expect([upper.trace_id, upper.parent_span_id]).toEqual([TRACE, null]);
  });

  it('converts nanoseconds beyond 2^53 exactly and rounds the duration to microseconds', () => {
    const s = ok(
      normaliseSpan(
        span({ start_time_unix_nano: '1700000000123456789', end_time_unix_nano: '1700000000123457289' }),
        'auto',
        keep,
      ),
    ).span;
    expect(s.start_time).toBe('2023-11-14T22:13:20.123Z');
    expect(s.duration_ms).toBe(0.001); // 500 ns rounds half up to 1 µs
  });
});

describe('detectConventions', () => {
  const mixed = (): SourceSpan[] => [
    oiLlm(),
    span({
      name: 'agent',
      attributes: { 'openinference.span.kind': 'AGENT', 'input.value': 'hi', 'session.id': 's1' },
    }),
    span({
      name: 'search',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'search',
        'input.value': '{"q":1}',
        'session.id': 's1',
      },
    }),
    span({ name: 'chat', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' } }),
    span({ name: 'GET /x', attributes: { 'http.request.method': 'GET' } }),
    span({ name: 'SELECT', attributes: { 'db.system': 'postgresql' } }),
    span({ trace_id: '', source_ref: 'line 900' }),
    span({ start_time_unix_nano: null, source_ref: 'line 901' }),
    span({ start_time_unix_nano: null, source_ref: 'line 902' }),
  ];

  it('picks the convention with most marked spans and reports confidence and candidates', () => {
    const d = detectConventions(mixed());
    expect(d.convention).toBe('openinference');
    expect(d.span_count).toBe(9);
    expect(d.sampled).toBe(9);
    // Candidates share the whole sample (invalid spans carry no markers: plain_otel); confidence = 3 of the 4 marked spans.
    expect(d.candidates).toEqual([
      { convention: 'plain_otel', spans: 5, confidence: 0.556 },
      { convention: 'openinference', spans: 3, confidence: 0.333 },
      { convention: 'genai', spans: 1, confidence: 0.111 },
    ]);
    expect(d.confidence).toBe(0.75);
    expect(d.dropped_records).toEqual([
      { reason: 'missing_timestamps', count: 2, example_source_ref: 'line 901' },
      { reason: 'missing_trace_id', count: 1, example_source_ref: 'line 900' },
    ]);
    expect(d.warnings).toEqual(
      expect.arrayContaining([
        'mixed conventions: openinference (3 spans), genai (1 spans)',
        '3 of 9 records cannot be landed (missing_timestamps: 2, missing_trace_id: 1)',
      ]),
    );
  });

  it('reports every canonical field, with source attributes and coverage', () => {
    const d = detectConventions(mixed());
    expect(d.field_mappings.map((f) => f.field)).toEqual([...REPORTED_FIELDS]);
    const f = Object.fromEntries(d.field_mappings.map((m) => [m.field, m]));
    expect(f.kind).toEqual({
      field: 'kind',
      source_attributes: ['gen_ai.operation.name', 'openinference.span.kind'],
      spans_mapped: 4,
      coverage: 0.444,
    });
    expect(f.tokens_input).toEqual({
      field: 'tokens_input',
      source_attributes: ['llm.token_count.prompt'],
      spans_mapped: 1,
      coverage: 0.111,
    });
    expect(f.retrieved_documents).toEqual({
      field: 'retrieved_documents',
      source_attributes: [],
      spans_mapped: 0,
      coverage: 0,
    });
    expect(f.tool_calls.source_attributes).toEqual([
      'input.value',
      'llm.output_messages.*.message.tool_calls.*.tool_call.function.arguments',
      'llm.output_messages.*.message.tool_calls.*.tool_call.function.name',
      'llm.output_messages.*.message.tool_calls.*.tool_call.id',
      'tool.name',
    ]);
    expect(f.tool_calls.spans_mapped).toBe(2);
    expect(f.service_name.spans_mapped).toBe(6);
    expect(f.trace_id).toEqual({
      field: 'trace_id',
      source_attributes: ['@span.trace_id'],
      spans_mapped: 6,
      coverage: 0.667,
    });
    expect(f.duration_ms.source_attributes).toEqual(['@span.end_time_unix_nano', '@span.start_time_unix_nano']);
    expect(f.parent_span_id.spans_mapped).toBe(0);
  });

  it('lists unmapped attributes folded by index with their fate', () => {
    const d = detectConventions(mixed(), { keepUnmapped: true, maxAttributeBytes: 18 });
    const u = Object.fromEntries(d.unmapped_attributes.map((x) => [x.key, x]));
    expect(u['llm.input_messages.*.message.content']).toEqual({
      key: 'llm.input_messages.*.message.content',
      spans: 1,
      fate: 'dropped', // '"Weather in Paris?"' is 19 bytes > 18; '"You are helpful."' (18) is kept
      spans_dropped: 1,
      examples: ['llm.input_messages.0.message.content', 'llm.input_messages.1.message.content'],
    });
    expect(u['llm.input_messages.*.message.role']).toMatchObject({ spans: 1, fate: 'kept', spans_dropped: 0 });
    expect(u['db.system']).toMatchObject({ spans: 1, fate: 'kept' });
    expect(u['resource.telemetry.sdk.language']).toMatchObject({ spans: 6, fate: 'kept' });
    const all = detectConventions(mixed(), { keepUnmapped: false });
    expect(all.unmapped_attributes.every((x) => x.fate === 'dropped' && x.spans_dropped === x.spans)).toBe(true);
  });

  it('warns about sessions, token counts and sampling', () => {
    const d = detectConventions(mixed());
    expect(d.warnings).toContain(
      '1 of 2 llm spans have no token counts: cost can only be reported, not estimated, for them',
    );
    // All valid spans share one trace and one of them has a session id: no session warning.
    expect(d.warnings.some((w) => w.includes('session'))).toBe(false);

    const other = '5bf92f3577b34da6a3ce929d0e0e4737';
    const two = detectConventions([
      oiLlm(),
      span({
        trace_id: other,
        attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o', 'llm.token_count.prompt': 1 },
      }),
    ]);
    expect(two.warnings).toContain('1 of 2 sampled traces have no span with a session id');
    const noSession = detectConventions([
      span({ trace_id: other, attributes: { 'openinference.span.kind': 'CHAIN' } }),
    ]);
    expect(noSession.warnings).toContain('no session id on any sampled span: traces cannot be grouped into sessions');

    const sampled = detectConventions(mixed(), { sample: 3 });
    expect(sampled.sampled).toBe(3);
    expect(sampled.warnings[0]).toBe('examined 3 of 9 spans (sample cap 3)');
  });

  it('gives plain_otel with confidence 1 when no span carries LLM markers, and 0 for no spans', () => {
    const d = detectConventions([span({ attributes: { 'http.request.method': 'GET' } })]);
    expect([d.convention, d.confidence]).toEqual(['plain_otel', 1]);
    const none = detectConventions([]);
    expect([none.convention, none.confidence, none.sampled, none.field_mappings.length]).toEqual([
      'plain_otel',
      0,
      0,
      REPORTED_FIELDS.length,
    ]);
  });
});

describe('foldKey', () => {
  it('folds numeric segments only', () => {
    expect(foldKey('llm.input_messages.10.message.contents.0.message_content.text')).toBe(
      'llm.input_messages.*.message.contents.*.message_content.text',
    );
    expect(foldKey('gen_ai.usage.input_tokens')).toBe('gen_ai.usage.input_tokens');
    expect(foldKey('0.a')).toBe('*.a');
  });
});
