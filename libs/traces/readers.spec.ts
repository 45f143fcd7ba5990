import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentTrace, otlpProtobuf, recordTraces } from '../../test/utils/otel-traces.js';
import { isoToNanos, readRecords, readTraceFile, sniffBuffer, type ReadItem, type TraceFileFormat } from './readers.js';

const dir = mkdtempSync(join(tmpdir(), 'ews-readers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function read(text: string | Buffer, format: TraceFileFormat): Promise<ReadItem[]> {
  const path = join(dir, `f-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, text);
  const out: ReadItem[] = [];
  for await (const item of readTraceFile(path, format)) out.push(item);
  return out;
}

const otlpSpan = (spanId: string, extra: Record<string, unknown> = {}) => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId,
  name: `span-${spanId}`,
  kind: 3,
  startTimeUnixNano: '1793000000000000000',
  endTimeUnixNano: '1793000000250000000',
  attributes: [
    { key: 'llm.model_name', value: { stringValue: 'gpt-4o' } },
    { key: 'llm.token_count.prompt', value: { intValue: '12' } },
    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { boolValue: true }] } } },
  ],
  status: { code: 2, message: 'boom' },
  ...extra,
});
const request = (spans: unknown[]) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot' } }] },
      scopeSpans: [{ scope: { name: 'openinference', version: '1.2' }, spans }],
    },
  ],
});

describe('trace readers', () => {
  it('tells formats apart from their first bytes and name', () => {
    expect(sniffBuffer(Buffer.from(JSON.stringify(request([otlpSpan('b7ad6b7169203331')]), null, 2)))).toBe(
      'otlp_json',
    );
    expect(sniffBuffer(Buffer.from(`${JSON.stringify(request([]))}\n${JSON.stringify(request([]))}\n`))).toBe('jsonl');
    expect(sniffBuffer(Buffer.from('[{"trace_id": "t"}]'))).toBe('json');
    expect(sniffBuffer(Buffer.from('{"data": []}'))).toBe('json');
    expect(sniffBuffer(Buffer.from([0x0a, 0x12, 0x0a]))).toBe('otlp_protobuf');
    expect(sniffBuffer(Buffer.from('{}'), 'x.pb')).toBe('otlp_protobuf');
  });

  it('streams an OTLP/JSON document: resource, scope, attributes, kinds, status', async () => {
    const items = await read(
      JSON.stringify(
        request([otlpSpan('b7ad6b7169203331'), otlpSpan('c7ad6b7169203332', { parentSpanId: 'b7ad6b7169203331' })]),
      ),
      'otlp_json',
    );
    expect(items).toHaveLength(2);
    const [first, second] = items.map((i) => ('span' in i ? i.span : null));
    expect(first).toEqual(
      expect.objectContaining({
        trace_id: '0af7651916cd43dd8448eb211c80319c',
        span_id: 'b7ad6b7169203331',
        parent_span_id: null,
        otel_kind: 'client',
        status_code: 'error',
        status_message: 'boom',
        resource: { 'service.name': 'bot' },
        scope: { name: 'openinference', version: '1.2' },
        attributes: { 'llm.model_name': 'gpt-4o', 'llm.token_count.prompt': 12, tags: ['a', true] },
        source_ref: 'span 1',
      }),
    );
    expect(second?.parent_span_id).toBe('b7ad6b7169203331');
  });

  it('walks an OTLP/protobuf file made by the OpenTelemetry SDK span by span, and stops with a drop where it breaks', async () => {
    const bytes = otlpProtobuf(recordTraces([agentTrace('s-1', 'q')]));
    const items = await read(bytes, 'otlp_protobuf');
    const spans = items.flatMap((i) => ('span' in i ? [i.span] : []));
    expect(spans).toHaveLength(5);
    expect(new Set(spans.map((x) => x.trace_id)).size).toBe(1);
    expect(spans.find((x) => x.name === 'support-agent')).toEqual(
      expect.objectContaining({
        parent_span_id: null,
        scope: { name: 'ews-tests', version: '1.0.0' },
        attributes: expect.objectContaining({ 'session.id': 's-1' }),
      }),
    );
    expect(
      spans.filter((x) => x.parent_span_id === spans.find((y) => y.name === 'support-agent')!.span_id),
    ).toHaveLength(4);
    expect(spans[0].resource).toEqual(expect.objectContaining({ 'service.name': expect.any(String) }));
    const cut = await read(bytes.subarray(0, bytes.length - 7), 'otlp_protobuf');
    expect(cut[cut.length - 1]).toEqual({ drop: expect.objectContaining({ reason: 'malformed_record' }), fatal: true });
  });

  it('keeps the spans read before a document breaks, then one drop saying where', async () => {
    const whole = JSON.stringify(request([otlpSpan('b7ad6b7169203331'), otlpSpan('c7ad6b7169203332')]));
    const items = await read(whole.slice(0, whole.lastIndexOf('{"traceId"') + 40), 'otlp_json');
    expect(items.filter((i) => 'span' in i)).toHaveLength(1);
    expect(items[items.length - 1]).toEqual({
      drop: expect.objectContaining({ reason: 'malformed_record', source_ref: 'after span 1' }),
    });
  });

  it('reads JSON Lines of requests and records, dropping lines that are not JSON', async () => {
    const lines = [
      JSON.stringify(request([otlpSpan('b7ad6b7169203331')])),
      'not json',
      JSON.stringify({
        trace_id: 't-1',
        span_id: 's-1',
        name: 'plain',
        start_time: '2026-11-01T00:00:00.123456Z',
        end_time: 1793000000,
      }),
    ].join('\n');
    const items = await read(lines, 'jsonl');
    expect(items.map((i) => ('span' in i ? i.span.source_ref : `${i.drop.reason} ${i.drop.source_ref}`))).toEqual([
      'line 1, span 1',
      'malformed_record line 2',
      'line 3',
    ]);
    const plain = items[2] as { span: { start_time_unix_nano: string; end_time_unix_nano: string } };
    expect(plain.span.start_time_unix_nano).toBe('1793491200123456000');
    expect(plain.span.end_time_unix_nano).toBe('1793000000000000000');
  });

  it('reads arrays of Phoenix spans and objects holding Langfuse observations', async () => {
    const phoenix = [
      {
        name: 'llm',
        context: { trace_id: 'pt', span_id: 'ps' },
        parent_id: null,
        span_kind: 'LLM',
        start_time: '2026-11-01T09:00:00+00:00',
        end_time: '2026-11-01T09:00:01+00:00',
        status_code: 'OK',
        attributes: { llm: { model_name: 'gpt-4o' } },
      },
    ];
    const [p] = await read(JSON.stringify(phoenix), 'json');
    expect('span' in p && p.span.attributes).toEqual({ 'llm.model_name': 'gpt-4o', 'openinference.span.kind': 'LLM' });
    const langfuse = {
      data: [
        {
          id: 'o1',
          traceId: 'lt',
          type: 'GENERATION',
          name: 'g',
          startTime: '2026-11-01T09:00:00Z',
          model: 'gpt-4o',
          usage: { input: 3, output: 4 },
        },
      ],
    };
    const [l] = await read(JSON.stringify(langfuse), 'json');
    expect('span' in l && l.span.attributes).toEqual(
      expect.objectContaining({
        'langfuse.observation.type': 'generation',
        'langfuse.observation.model.name': 'gpt-4o',
        'langfuse.observation.usage_details': '{"input":3,"output":4}',
      }),
    );
  });

  it('drops records of no known shape with their payload', () => {
    const items = [...readRecords([{ hello: 1 }, 42, null])];
    expect(items.map((i) => ('drop' in i ? [i.drop.reason, i.drop.payload] : null))).toEqual([
      ['unsupported_record', { hello: 1 }],
      ['unsupported_record', 42],
      ['unsupported_record', null],
    ]);
  });

  it('drops records nested deeper than 64 levels in every format, and reads on', async () => {
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    const fine = JSON.stringify({
      trace_id: 't-1',
      span_id: 's-1',
      name: 'fine',
      start_time: '2026-11-01T00:00:00Z',
      end_time: '2026-11-01T00:00:01Z',
    });
    const lines = await read(`{"trace_id": "t-1", "span_id": "s-0", "x": ${deep(100_000)}}\n${fine}\n`, 'jsonl');
    expect(
      lines.map((i) => ('span' in i ? i.span.source_ref : [i.drop.reason, i.drop.source_ref, i.drop.detail])),
    ).toEqual([['malformed_record', 'line 1', 'nests arrays and objects deeper than 64 levels'], 'line 2']);
    const array = await read(`[{"trace_id": "t-1", "span_id": "s-0", "x": ${deep(5_000)}}, ${fine}]`, 'json');
    expect(array.map((i) => ('span' in i ? i.span.source_ref : `${i.drop.reason} ${i.drop.source_ref}`))).toEqual([
      'malformed_record record 1',
      'record 2',
    ]);
    const otlp = JSON.stringify(request([otlpSpan('b7ad6b7169203331'), otlpSpan('c7ad6b7169203332')])).replace(
      '"kind":3',
      `"kind":3,"deep":${deep(5_000)}`,
    );
    const stream = await read(otlp, 'otlp_json');
    expect(stream.map((i) => ('span' in i ? i.span.source_ref : `${i.drop.reason} ${i.drop.source_ref}`))).toEqual([
      'malformed_record span 1',
      'span 2',
    ]);
    expect([...readRecords([JSON.parse(`{"x": ${deep(65)}}`)])]).toEqual([
      { drop: expect.objectContaining({ reason: 'malformed_record', source_ref: 'record 1', payload: null }) },
    ]);
  });

  it("drops an OTLP/protobuf span whose AnyValue nests past the decoder's stack, and reads the spans after it", async () => {
    const varint = (n: number) => {
      const out: number[] = [];
      for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
      out.push(n);
      return Buffer.from(out);
    };
    const field = (no: number, bytes: Buffer) => Buffer.concat([varint((no << 3) | 2), varint(bytes.length), bytes]);
    // AnyValue{array_value: ArrayValue{values: [AnyValue{…}]}}, 100,000 levels, built from the inside out.
    const inner = field(1, Buffer.from('leaf'));
    const prefixes: Buffer[] = [];
    let length = inner.length;
    for (let i = 0; i < 100_000; i++) {
      const arrayValue = Buffer.concat([varint((1 << 3) | 2), varint(length)]);
      length += arrayValue.length;
      const anyValue = Buffer.concat([varint((5 << 3) | 2), varint(length)]);
      length += anyValue.length;
      // Reversed below: the outermost AnyValue comes first, each ArrayValue right after its AnyValue.
      prefixes.push(arrayValue, anyValue);
    }
    const value = Buffer.concat([...prefixes.reverse(), inner]);
    const span = (id: number, attribute?: Buffer) =>
      Buffer.concat([
        field(1, Buffer.alloc(16, 1)),
        field(2, Buffer.alloc(8, id)),
        field(5, Buffer.from(`span-${id}`)),
        ...(attribute ? [field(9, Buffer.concat([field(1, Buffer.from('deep')), field(2, attribute)]))] : []),
      ]);
    const file = field(1, field(2, Buffer.concat([field(2, span(1, value)), field(2, span(2))])));
    const items = await read(file, 'otlp_protobuf');
    expect(items.map((i) => ('span' in i ? i.span.name : `${i.drop.reason} ${i.drop.source_ref}`))).toEqual([
      'malformed_record span 1',
      'span-2',
    ]);
  });

  it('converts ISO times and epoch numbers of any unit to nanoseconds', () => {
    expect(isoToNanos('2026-11-01T00:00:00Z')).toBe('1793491200000000000');
    expect(isoToNanos('2026-11-01T00:00:00.000000001Z')).toBe('1793491200000000001');
    expect(isoToNanos('2026-11-01T01:00:00+01:00')).toBe('1793491200000000000');
    expect(isoToNanos(1793491200)).toBe('1793491200000000000');
    expect(isoToNanos(1793491200123)).toBe('1793491200123000000');
    expect(isoToNanos('yesterday')).toBeNull();
    expect(isoToNanos(null)).toBeNull();
  });
});
