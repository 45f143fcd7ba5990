import { describe, expect, it } from '@jest/globals';
import { joinLogRecords, MAX_LOG_RECORDS_PER_SPAN, normaliseLogRecord, type SpanLogRecord } from './genai-events.js';
import { decodeLogsRequest } from './otlp-logs.js';
import type { SourceLogRecord } from './otlp-logs.js';
import type { CanonicalSpan } from './span.types.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

function source(fields: Partial<SourceLogRecord>): SourceLogRecord {
  return {
    trace_id: TRACE,
    span_id: SPAN,
    event_name: null,
    time_unix_nano: '1764000000000000000',
    severity_number: 9,
    severity_text: null,
    body: null,
    attributes: {},
    resource: { 'service.name': 'bot' },
    scope: { name: 'tests', version: '' },
    source_ref: 'log record 1',
    ...fields,
  };
}

function record(fields: Partial<SourceLogRecord>): SpanLogRecord {
  const result = normaliseLogRecord(source(fields));
  if (!result.ok) throw new Error(result.drop.detail);
  return result.log.record;
}

const span = (fields: Partial<CanonicalSpan> = {}): CanonicalSpan => ({
  trace_id: TRACE,
  span_id: SPAN,
  parent_span_id: null,
  session_id: null,
  user_id: null,
  name: 'chat gpt-4o-mini',
  kind: 'llm',
  start_time: '2025-11-24T16:00:00.000Z',
  end_time: '2025-11-24T16:00:01.000Z',
  duration_ms: 1000,
  status: 'unset',
  error: null,
  input: null,
  output: null,
  model: 'gpt-4o-mini',
  tokens_input: null,
  tokens_output: null,
  tokens_total: null,
  cost: null,
  tool_calls: [],
  retrieved_documents: [],
  service_name: 'bot',
  convention: 'genai',
  attributes: {},
  ...fields,
});

const user = record({ event_name: 'gen_ai.user.message', body: { content: 'Where is order A1?' } });
const system = record({ event_name: 'gen_ai.system.message', body: { content: 'Be brief.' } });
const choice = record({
  event_name: 'gen_ai.choice',
  time_unix_nano: '1764000001000000000',
  body: {
    index: 0,
    finish_reason: 'tool_calls',
    message: {
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"id":"A1"}' } }],
    },
  },
});

describe('normaliseLogRecord (the keep/drop rule)', () => {
  it('keeps a record with trace context, naming it by its event_name or event.name attribute', () => {
    const result = normaliseLogRecord(source({ attributes: { 'event.name': 'gen_ai.user.message' } }));
    expect(result).toEqual({
      ok: true,
      log: expect.objectContaining({ trace_id: TRACE, span_id: SPAN, service_name: 'bot' }),
    });
  });

  it('drops a record without trace context, with bad ids, or too large', () => {
    expect(normaliseLogRecord(source({ trace_id: '', span_id: '' }))).toEqual({
      ok: false,
      drop: expect.objectContaining({ reason: 'missing_trace_context' }),
    });
    expect(normaliseLogRecord(source({ span_id: 'abc' }))).toEqual({
      ok: false,
      drop: expect.objectContaining({ reason: 'invalid_id' }),
    });
    expect(normaliseLogRecord(source({ body: 'x'.repeat(40_000) }))).toEqual({
      ok: false,
      drop: expect.objectContaining({ reason: 'record_too_large' }),
    });
  });

  it('gives the same record the same key (an exporter retry is kept once)', () => {
    expect(record({ body: 'a' }).key).toBe(record({ body: 'a' }).key);
    expect(record({ body: 'a' }).key).not.toBe(record({ body: 'b' }).key);
  });
});

describe('joinLogRecords', () => {
  it('fills input, output and tool_calls from the GenAI events, saying where from', () => {
    const { span: joined, added } = joinLogRecords(span(), [system, user, choice]);
    expect(added).toBe(3);
    expect(joined.input).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Where is order A1?' },
    ]);
    expect(joined.output).toEqual([
      {
        role: 'assistant',
        content: null,
        finish_reason: 'tool_calls',
        tool_calls: [{ name: 'lookup', arguments: { id: 'A1' }, id: 'call_1' }],
      },
    ]);
    expect(joined.tool_calls).toEqual([{ name: 'lookup', arguments: { id: 'A1' }, id: 'call_1' }]);
    expect(joined.attributes['log.sources']).toEqual({
      input: ['gen_ai.system.message', 'gen_ai.user.message'],
      output: ['gen_ai.choice'],
      tool_calls: ['gen_ai.choice'],
    });
  });

  it('ends in the same row whatever batches and order the records came in, and keeps a record once', () => {
    const once = joinLogRecords(span(), [system, user, choice]).span;
    const first = joinLogRecords(span(), [choice]).span;
    const later = joinLogRecords(first, [system, user, choice]);
    expect(later.added).toBe(2);
    expect(later.span.input).toEqual(once.input);
    expect(later.span.output).toEqual(once.output);
    expect(later.span.attributes['log.records']).toEqual(once.attributes['log.records']);
    expect(joinLogRecords(once, [user]).added).toBe(0);
  });

  it('leaves fields the span has itself', () => {
    const joined = joinLogRecords(span({ input: 'from the span' }), [user, choice]).span;
    expect(joined.input).toBe('from the span');
    expect(joined.attributes['log.sources']).toEqual({ output: ['gen_ai.choice'], tool_calls: ['gen_ai.choice'] });
  });

  it('reads the single operation-details event of newer instrumentations', () => {
    const details = record({
      event_name: 'gen_ai.client.inference.operation.details',
      attributes: {
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'tool_call', id: 't1', name: 'search', arguments: { q: 'x' } }] },
        ]),
      },
    });
    const joined = joinLogRecords(span(), [details]).span;
    expect(joined.input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]);
    expect(joined.tool_calls).toEqual([{ name: 'search', arguments: { q: 'x' }, id: 't1' }]);
  });

  it('keeps evaluation results and other records on the span', () => {
    const evaluation = record({
      event_name: 'gen_ai.evaluation.result',
      attributes: { 'gen_ai.evaluation.name': 'relevance', 'gen_ai.evaluation.score.value': 0.5 },
    });
    const plain = record({ severity_text: 'WARN', body: 'retrying' });
    const joined = joinLogRecords(span(), [evaluation, plain]).span;
    expect(joined.attributes['gen_ai.evaluation.results']).toEqual([
      expect.objectContaining({ name: 'relevance', score_value: 0.5 }),
    ]);
    expect((joined.attributes['log.records'] as unknown[]).length).toBe(2);
    expect(joined.input).toBeNull();
  });

  it('has room for MAX_LOG_RECORDS_PER_SPAN records; the rest overflow', () => {
    const many = Array.from({ length: MAX_LOG_RECORDS_PER_SPAN + 2 }, (_, i) => record({ body: `line ${i}` }));
    const outcome = joinLogRecords(span(), many);
    expect(outcome.added).toBe(MAX_LOG_RECORDS_PER_SPAN);
    expect(outcome.overflow).toHaveLength(2);
  });
});

describe('decodeLogsRequest', () => {
  it('reads OTLP JSON log records with their resource and event name', () => {
    const body = Buffer.from(
      JSON.stringify({
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot' } }] },
            scopeLogs: [
              {
                logRecords: [
                  {
                    traceId: TRACE,
                    spanId: SPAN,
                    eventName: 'gen_ai.user.message',
                    body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'hi' } }] } },
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(decodeLogsRequest(body, 'json')).toEqual([
      {
        record: expect.objectContaining({
          trace_id: TRACE,
          span_id: SPAN,
          event_name: 'gen_ai.user.message',
          body: { content: 'hi' },
          resource: { 'service.name': 'bot' },
        }),
      },
    ]);
  });

  it('refuses a body that is not an ExportLogsServiceRequest', () => {
    expect(() => decodeLogsRequest(Buffer.from('{"resourceLogs": 1}'), 'json')).toThrow('must be an array');
    expect(() => decodeLogsRequest(Buffer.from([0xff, 0xff, 0xff]), 'protobuf')).toThrow('ExportLogsServiceRequest');
  });
});
