/**
 * Reads trace records from the formats teams already produce into `SourceSpan`s: OTLP/JSON
 * (ExportTraceServiceRequest, streamed), OTLP/protobuf (decoded by the OpenTelemetry
 * project's generated protocol types), JSON Lines (the collector's file exporter writes one
 * request per line; span exports one span per line), and JSON arrays of span records
 * (Phoenix span exports, Langfuse observations or traces, or plain `trace_id`/`span_id`
 * records). A record that cannot be read becomes a `Drop` with its payload; nothing throws
 * for bad content, so every record is accounted for.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { MAX_BODY_DEPTH, scanJson, valueDepth } from '#libs/common/json-limits.js';
import { JsonPathSplitter, type JsonPathValue } from './json-values.js';
import type { AttributeValue, Drop, SourceSpan } from './span.types.js';

const require = createRequire(import.meta.url);

interface ProtobufType {
  decode(buf: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
/** The protocol types generated from opentelemetry-proto, shipped inside @opentelemetry/otlp-transformer (no package entry point exports them). */
const otlpRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      trace: { v1: { Span: ProtobufType } };
      resource: { v1: { Resource: ProtobufType } };
      common: { v1: { InstrumentationScope: ProtobufType } };
    };
  };
};
const ProtoSpan = otlpRoot.opentelemetry.proto.trace.v1.Span;
const ProtoResource = otlpRoot.opentelemetry.proto.resource.v1.Resource;
const ProtoScope = otlpRoot.opentelemetry.proto.common.v1.InstrumentationScope;
const TO_OBJECT = { longs: String, enums: Number, bytes: Array, defaults: false, arrays: true };

export const TRACE_FILE_FORMATS = ['otlp_json', 'otlp_protobuf', 'jsonl', 'json'] as const;
export type TraceFileFormat = (typeof TRACE_FILE_FORMATS)[number];

/** A span, or a drop; a `fatal` drop means the rest of the source could not be read (a broken protobuf envelope). */
export type ReadItem = { span: SourceSpan } | { drop: Drop; fatal?: true };

/** Spans of a record larger than this are not read (the record is dropped as `record_too_large`). */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;
/** A record (a line, an array element, an OTLP span or resource) nested deeper than this is dropped as `malformed_record`: what reads it next recurses. */
export const MAX_RECORD_DEPTH = MAX_BODY_DEPTH;

const tooDeep = (where: string, payload: Drop['payload'] = null): ReadItem => ({
  drop: {
    reason: 'malformed_record',
    detail: `nests arrays and objects deeper than ${MAX_RECORD_DEPTH} levels`,
    source_ref: where,
    payload,
  },
});
const isTooDeep = (value: unknown): boolean => valueDepth(value, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH;

const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/** The format of a file from its first bytes (and name): protobuf unless it starts like JSON. */
export async function sniffFormat(path: string, filename = ''): Promise<TraceFileFormat> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    return sniffBuffer(buffer.subarray(0, bytesRead), filename);
  } finally {
    await handle.close();
  }
}

export function sniffBuffer(head: Buffer, filename = ''): TraceFileFormat {
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (/\.(pb|bin|protobuf)$/i.test(filename) || !/^[[{]/.test(text)) return 'otlp_protobuf';
  if (/\.(jsonl|ndjson)$/i.test(filename)) return 'jsonl';
  if (text.startsWith('[')) return 'json';
  // A complete object on the first line with more after it is JSON Lines (one record or request per line).
  const newline = text.indexOf('\n');
  if (newline > 0 && safeParse(text.slice(0, newline)) !== undefined && text.slice(newline).trim()) return 'jsonl';
  return text.includes('"resourceSpans"') ? 'otlp_json' : 'json';
}

/** Every span (or drop) of a file, in file order. */
export async function* readTraceFile(path: string, format: TraceFileFormat): AsyncGenerator<ReadItem> {
  if (format === 'otlp_protobuf') {
    yield* readProtobufFile(path);
  } else if (format === 'jsonl') {
    yield* readJsonLines(path);
  } else if (format === 'otlp_json') {
    yield* readOtlpJsonStream(path);
  } else {
    yield* readJsonArrayStream(path);
  }
}

/** readRecords as an async iterable, the shape every other source has. */
export async function* readRecordsAsync(records: unknown[], wherePrefix = 'record'): AsyncGenerator<ReadItem> {
  yield* readRecords(records, wherePrefix);
}

/**
 * An OTLP/protobuf ExportTraceServiceRequest file read span by span, in flat memory however large
 * it is: the length-delimited envelope (resource_spans = 1; in it resource = 1, scope_spans = 2
 * or the older instrumentation_library_spans = 1000; in those scope = 1, spans = 2) is walked
 * from the file, and each Resource, InstrumentationScope and Span is decoded by OpenTelemetry's
 * generated protocol types.
 */
async function* readProtobufFile(path: string): AsyncGenerator<ReadItem> {
  yield* readProtobuf(await FileWindow.open(path), 'the file');
}

/**
 * An OTLP/protobuf ExportTraceServiceRequest held in memory (the body of an OTLP/HTTP export),
 * read as a file is: each span decoded on its own, so one span nested past the decoder's stack
 * is that span's drop. A body whose envelope is not a request ends with a `fatal` drop.
 */
export async function* readProtobufBuffer(body: Uint8Array): AsyncGenerator<ReadItem> {
  yield* readProtobuf(new BufferWindow(body), 'the body');
}

async function* readProtobuf(file: ByteWindow, whole: string): AsyncGenerator<ReadItem> {
  let n = 0;
  const broken = (detail: string): ReadItem => ({
    drop: {
      reason: 'malformed_record',
      detail: `not an OTLP/protobuf ExportTraceServiceRequest: ${detail}`,
      source_ref: n ? `after span ${n}` : whole,
      payload: { bytes: file.size },
    },
    fatal: true,
  });
  try {
    for await (const rs of file.fields(0, file.size, [1])) {
      // The resource (and each scope) is looked up first, wherever it sits in its message.
      let resource: Record<string, AttributeValue> = {};
      for await (const res of file.fields(rs.start, rs.end, [1])) {
        const decoded = ProtoResource.toObject(
          ProtoResource.decode(await file.bytes(res.start, res.end)),
          TO_OBJECT,
        ) as { attributes?: unknown };
        if (isTooDeep(decoded)) yield tooDeep(`the resource after span ${n}`);
        else resource = attributesOf(decoded.attributes);
      }
      for await (const ss of file.fields(rs.start, rs.end, [2, 1000])) {
        let scope = { name: '', version: '' };
        for await (const sc of file.fields(ss.start, ss.end, [1])) {
          const o = ProtoScope.toObject(ProtoScope.decode(await file.bytes(sc.start, sc.end)), TO_OBJECT) as {
            name?: string;
            version?: string;
          };
          scope = { name: String(o.name ?? ''), version: String(o.version ?? '') };
        }
        for await (const span of file.fields(ss.start, ss.end, [2])) {
          n++;
          const bytes = await file.bytes(span.start, span.end);
          let decoded: Record<string, unknown>;
          try {
            decoded = ProtoSpan.toObject(ProtoSpan.decode(bytes), TO_OBJECT);
          } catch (err) {
            // The generated decoder recurses into nested AnyValues: a span nested past the stack is this span's problem only.
            if (err instanceof RangeError) {
              yield tooDeep(`span ${n}`, { bytes: bytes.length });
              continue;
            }
            throw err;
          }
          yield isTooDeep(decoded)
            ? tooDeep(`span ${n}`, { bytes: bytes.length })
            : spanOf(decoded, resource, scope, `span ${n}`);
        }
      }
    }
  } catch (err) {
    yield broken((err as Error).message);
  } finally {
    await file.close();
  }
}

/** Positional reads of protobuf bytes, with the walk over length-delimited fields. */
abstract class ByteWindow {
  abstract readonly size: number;
  abstract bytes(start: number, end: number): Promise<Uint8Array>;
  abstract close(): Promise<void>;

  /** The length-delimited fields numbered `wanted` of the message in [start, end), in order; other fields are skipped. */
  async *fields(
    start: number,
    end: number,
    wanted: number[],
  ): AsyncGenerator<{ field: number; start: number; end: number }> {
    let pos = start;
    while (pos < end) {
      const [tag, afterTag] = await this.varint(pos, end);
      const field = Number(tag >> 3n);
      const wire = Number(tag & 7n);
      if (wire === 2) {
        const [length, afterLength] = await this.varint(afterTag, end);
        const stop = afterLength + Number(length);
        if (stop > end) throw new Error(`field ${field} at byte ${pos} is longer than its message`);
        if (wanted.includes(field)) yield { field, start: afterLength, end: stop };
        pos = stop;
      } else if (wire === 0) pos = (await this.varint(afterTag, end))[1];
      else if (wire === 1) pos = afterTag + 8;
      else if (wire === 5) pos = afterTag + 4;
      else throw new Error(`wire type ${wire} at byte ${pos}`);
    }
    if (pos !== end) throw new Error('a message ends inside a field');
  }

  private async varint(pos: number, end: number): Promise<[bigint, number]> {
    const bytes = await this.bytes(pos, Math.min(pos + 10, end));
    let value = 0n;
    for (let i = 0; i < bytes.length; i++) {
      value |= BigInt(bytes[i] & 0x7f) << BigInt(7 * i);
      if (!(bytes[i] & 0x80)) return [value, pos + i + 1];
    }
    throw new Error(`a varint at byte ${pos} does not end`);
  }
}

/** Positional reads of a file through a 1 MB window: the protobuf envelope is walked without loading the file. */
class FileWindow extends ByteWindow {
  private window = Buffer.alloc(0);
  private windowStart = 0;

  private constructor(
    private readonly handle: import('node:fs/promises').FileHandle,
    readonly size: number,
  ) {
    super();
  }

  static async open(path: string): Promise<FileWindow> {
    const handle = await open(path, 'r');
    return new FileWindow(handle, (await handle.stat()).size);
  }

  async bytes(start: number, end: number): Promise<Buffer> {
    if (end > this.size) throw new Error(`a field runs past the end of the file (byte ${end} of ${this.size})`);
    if (start < this.windowStart || end > this.windowStart + this.window.length) {
      const length = Math.max(end - start, 1 << 20);
      const buffer = Buffer.alloc(Math.min(length, this.size - start));
      const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, start);
      this.window = buffer.subarray(0, bytesRead);
      this.windowStart = start;
    }
    return this.window.subarray(start - this.windowStart, end - this.windowStart);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** The same reads over bytes already in memory. */
class BufferWindow extends ByteWindow {
  readonly size: number;

  constructor(private readonly buffer: Uint8Array) {
    super();
    this.size = buffer.length;
  }

  async bytes(start: number, end: number): Promise<Uint8Array> {
    if (end > this.size) throw new Error(`a field runs past the end of the body (byte ${end} of ${this.size})`);
    return this.buffer.subarray(start, end);
  }

  async close(): Promise<void> {}
}

/** Records in the body of land:inline or a parsed JSON document: each an OTLP request or a span record. */
export function* readRecords(records: unknown[], wherePrefix = 'record'): Generator<ReadItem> {
  for (let i = 0; i < records.length; i++) yield* recordSpans(records[i], `${wherePrefix} ${i + 1}`);
}

async function* readJsonLines(path: string): AsyncGenerator<ReadItem> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    const where = `line ${n}`;
    if (line.length > MAX_RECORD_BYTES) {
      yield {
        drop: {
          reason: 'record_too_large',
          detail: `${line.length} characters; a record may have at most ${MAX_RECORD_BYTES}`,
          source_ref: where,
          payload: { head: line.slice(0, 1024) },
        },
      };
      continue;
    }
    // Before JSON.parse: a deep line is refused on its text, and never built.
    if (scanJson(line, MAX_RECORD_DEPTH).tooDeep) {
      yield tooDeep(where, { head: line.slice(0, 1024) });
      continue;
    }
    const value = safeParse(line);
    if (value === undefined) {
      yield {
        drop: {
          reason: 'malformed_record',
          detail: 'not valid JSON',
          source_ref: where,
          payload: { text: line.slice(0, 8192) },
        },
      };
      continue;
    }
    yield* recordSpans(value, where);
  }
}

/**
 * The values at `paths` of a JSON document, read chunk by chunk (JsonPathSplitter: the skeleton
 * walked here, each value parsed by JSON.parse). Throws when the document stops being valid JSON
 * or ends early.
 */
async function* jsonValues(path: string, paths: string[]): AsyncGenerator<JsonPathValue> {
  const splitter = new JsonPathSplitter(paths);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) yield* splitter.write(chunk as Buffer);
  yield* splitter.end();
}

/** An OTLP/JSON document read span by span, so a file larger than memory lands in flat memory. */
async function* readOtlpJsonStream(path: string): AsyncGenerator<ReadItem> {
  let resource: Record<string, AttributeValue> = {};
  let scope = { name: '', version: '' };
  let n = 0;
  try {
    for await (const item of jsonValues(path, [
      '$.resourceSpans.*.resource',
      '$.resourceSpans.*.scopeSpans.*.scope',
      '$.resourceSpans.*.scopeSpans.*.spans.*',
    ])) {
      // The splitter measured each value's nesting as it read it.
      if (item.depth > MAX_RECORD_DEPTH) {
        if (item.key !== 'resource' && item.key !== 'scope') n++;
        yield tooDeep(
          item.key === 'resource'
            ? `the resource after span ${n}`
            : item.key === 'scope'
              ? `the scope after span ${n}`
              : `span ${n}`,
        );
        // A resource that cannot be read leaves its spans without one rather than with the previous one.
        if (item.key === 'resource') resource = {};
      } else if (item.key === 'resource') {
        resource = attributesOf((item.value as { attributes?: unknown }).attributes);
        scope = { name: '', version: '' };
      } else if (item.key === 'scope') {
        const s = item.value as { name?: string; version?: string };
        scope = { name: String(s?.name ?? ''), version: String(s?.version ?? '') };
      } else {
        n++;
        yield spanOf(item.value, resource, scope, `span ${n}`);
      }
    }
  } catch (err) {
    yield {
      drop: {
        reason: 'malformed_record',
        detail: `the document stops being valid JSON after span ${n}: ${(err as Error).message}`,
        source_ref: n ? `after span ${n}` : 'the document',
        payload: null,
      },
    };
  }
}

/** A JSON array of records, or an object holding one under `data`, `observations`, `spans` or `traces` (API pages saved to a file). */
async function* readJsonArrayStream(path: string): AsyncGenerator<ReadItem> {
  const handle = await open(path, 'r');
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(1024), 0, 1024, 0).finally(() => handle.close());
  const isArray = buffer
    .subarray(0, bytesRead)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .startsWith('[');
  let n = 0;
  try {
    for await (const item of jsonValues(
      path,
      isArray ? ['$.*'] : ['$.data.*', '$.observations.*', '$.spans.*', '$.traces.*'],
    )) {
      n++;
      yield* recordSpans(item.value, `record ${n}`);
    }
  } catch (err) {
    yield {
      drop: {
        reason: 'malformed_record',
        detail: `the document stops being valid JSON after record ${n}: ${(err as Error).message}`,
        source_ref: n ? `after record ${n}` : 'the document',
        payload: null,
      },
    };
    return;
  }
  if (!n)
    yield {
      drop: {
        reason: 'unsupported_record',
        detail:
          'the document holds no records: send an array of span records, an object with data, observations, spans or traces, or an OTLP request with resourceSpans',
        source_ref: 'the document',
        payload: null,
      },
    };
}

/** One record of any supported shape. */
export function* recordSpans(record: unknown, where: string): Generator<ReadItem> {
  if (isTooDeep(record)) {
    yield tooDeep(where);
    return;
  }
  if (!record || typeof record !== 'object' || Array.isArray(record)) {
    yield {
      drop: {
        reason: 'unsupported_record',
        detail: `expected an object, got ${Array.isArray(record) ? 'an array' : typeof record}`,
        source_ref: where,
        payload: record ?? null,
      },
    };
    return;
  }
  const r = record as Record<string, unknown>;
  if (Array.isArray(r.resourceSpans)) yield* otlpRequestSpans(r, where);
  else if (isPhoenixSpan(r)) yield phoenixSpan(r, where);
  else if (isLangfuseTrace(r)) yield* langfuseTrace(r, where);
  else if (isLangfuseObservation(r)) yield langfuseObservation(r, where, {});
  else if ('trace_id' in r || 'traceId' in r || 'span_id' in r || 'spanId' in r) yield flatSpan(r, where);
  else
    yield {
      drop: {
        reason: 'unsupported_record',
        detail:
          'neither an OTLP request (resourceSpans) nor a span record (trace_id and span_id, a Phoenix span, a Langfuse observation or trace)',
        source_ref: where,
        payload: record,
      },
    };
}

function* otlpRequestSpans(request: Record<string, unknown>, where: string): Generator<ReadItem> {
  const resourceSpans = Array.isArray(request.resourceSpans) ? request.resourceSpans : [];
  let n = 0;
  for (const rs of resourceSpans as Array<Record<string, unknown>>) {
    const resource = attributesOf((rs?.resource as { attributes?: unknown } | undefined)?.attributes);
    for (const ss of (Array.isArray(rs?.scopeSpans)
      ? rs.scopeSpans
      : Array.isArray(rs?.instrumentationLibrarySpans)
        ? rs.instrumentationLibrarySpans
        : []) as Array<Record<string, unknown>>) {
      const s = (ss?.scope ?? ss?.instrumentationLibrary ?? {}) as { name?: string; version?: string };
      const scope = { name: String(s.name ?? ''), version: String(s.version ?? '') };
      for (const span of (Array.isArray(ss?.spans) ? ss.spans : []) as unknown[]) {
        n++;
        yield spanOf(span, resource, scope, `${where}, span ${n}`);
      }
    }
  }
}

/** One OTLP span (JSON encoding: hex ids, string or number times; protobuf toObject: byte arrays, string longs). */
function spanOf(
  raw: unknown,
  resource: Record<string, AttributeValue>,
  scope: { name: string; version: string },
  where: string,
): ReadItem {
  if (!raw || typeof raw !== 'object')
    return {
      drop: { reason: 'malformed_record', detail: 'a span must be an object', source_ref: where, payload: raw ?? null },
    };
  const s = raw as Record<string, unknown>;
  const status = (s.status ?? {}) as { code?: unknown; message?: unknown };
  return {
    span: {
      trace_id: idOf(s.traceId ?? s.trace_id, 16),
      span_id: idOf(s.spanId ?? s.span_id, 8),
      parent_span_id: idOf(s.parentSpanId ?? s.parent_span_id, 8) || null,
      name: String(s.name ?? ''),
      otel_kind: kindOf(s.kind),
      start_time_unix_nano: nanosOf(s.startTimeUnixNano ?? s.start_time_unix_nano),
      end_time_unix_nano: nanosOf(s.endTimeUnixNano ?? s.end_time_unix_nano),
      status_code: statusOf(status.code),
      status_message: typeof status.message === 'string' ? status.message : '',
      attributes: attributesOf(s.attributes),
      resource,
      scope,
      events: (Array.isArray(s.events) ? s.events : []).map((e: Record<string, unknown>) => ({
        name: String(e?.name ?? ''),
        time_unix_nano: nanosOf(e?.timeUnixNano ?? e?.time_unix_nano),
        attributes: attributesOf(e?.attributes),
      })),
      source_ref: where,
    },
  };
}

/** OTLP ids: hex in OTLP/JSON, byte arrays from protobuf, base64 from some older JSON exporters. All-zero ids mean absent. */
export function idOf(value: unknown, bytes: number): string {
  let hex = '';
  if (Array.isArray(value) || value instanceof Uint8Array) hex = Buffer.from(value as number[]).toString('hex');
  else if (typeof value === 'string') {
    const v = value.trim();
    if (/^[0-9a-fA-F]+$/.test(v)) hex = v.toLowerCase();
    else if (v.length === Math.ceil(bytes / 3) * 4 && /^[A-Za-z0-9+/]+=*$/.test(v))
      hex = Buffer.from(v, 'base64').toString('hex');
    else hex = v;
  }
  return /^0+$/.test(hex) ? '' : hex;
}

function kindOf(value: unknown): string {
  if (typeof value === 'number') return SPAN_KINDS[value] ?? 'unspecified';
  if (typeof value === 'string') return value.replace(/^SPAN_KIND_/, '').toLowerCase() || 'unspecified';
  return 'unspecified';
}

function statusOf(code: unknown): 'unset' | 'ok' | 'error' {
  if (code === 1 || code === 'STATUS_CODE_OK' || code === 'OK' || code === 'ok') return 'ok';
  if (code === 2 || code === 'STATUS_CODE_ERROR' || code === 'ERROR' || code === 'error') return 'error';
  return 'unset';
}

export function nanosOf(value: unknown): string | null {
  if (typeof value === 'string' && /^\d+$/.test(value)) return value === '0' ? null : value;
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return BigInt(Math.round(value)).toString();
  if (value && typeof value === 'object' && 'low' in value && 'high' in value) {
    const l = value as { low: number; high: number };
    const n = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
    return n === 0n ? null : n.toString();
  }
  return null;
}

/** ISO 8601 (any fraction of a second) or epoch numbers (seconds, milliseconds, microseconds or nanoseconds by magnitude) to epoch nanoseconds. */
export function isoToNanos(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))) {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) return null;
    if (n < 1e11) return BigInt(Math.round(n * 1e6)).toString() + '000';
    if (n < 1e14) return BigInt(Math.round(n * 1e3)).toString() + '000';
    if (n < 1e17) return BigInt(Math.round(n)).toString() + '000';
    return typeof value === 'string' && !value.includes('.') ? value : BigInt(Math.round(n)).toString();
  }
  if (typeof value !== 'string') return null;
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}${m[3] ?? 'Z'}`);
  if (Number.isNaN(seconds)) return null;
  const fraction = (m[2] ?? '').padEnd(9, '0').slice(0, 9);
  return (BigInt(seconds) * 1_000_000n + BigInt(fraction)).toString();
}

/** OTLP KeyValue lists (or already-flat objects) to a flat key -> value map; nested objects become dotted keys. */
export function attributesOf(raw: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  if (Array.isArray(raw)) {
    for (const kv of raw as Array<{ key?: unknown; value?: unknown }>)
      if (kv && typeof kv.key === 'string') out[kv.key] = anyValue(kv.value);
  } else if (raw && typeof raw === 'object') {
    flattenInto(out, '', raw as Record<string, unknown>);
  }
  return out;
}

function flattenInto(out: Record<string, AttributeValue>, prefix: string, value: Record<string, unknown>): void {
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (v && typeof v === 'object' && !Array.isArray(v)) flattenInto(out, path, v as Record<string, unknown>);
    else out[path] = plain(v);
  }
}

function plain(v: unknown): AttributeValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object')
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, plain(x)]));
  return String(v);
}

/** OTLP AnyValue (JSON or protobuf object form) to a plain value. */
export function anyValue(v: unknown): AttributeValue {
  if (!v || typeof v !== 'object') return plain(v);
  const a = v as Record<string, unknown>;
  if ('stringValue' in a) return String(a.stringValue);
  if ('boolValue' in a) return Boolean(a.boolValue);
  if ('intValue' in a) {
    const n = Number(a.intValue);
    return Number.isSafeInteger(n) ? n : String(a.intValue);
  }
  if ('doubleValue' in a) return Number(a.doubleValue);
  if ('arrayValue' in a) return ((a.arrayValue as { values?: unknown[] })?.values ?? []).map(anyValue);
  if ('kvlistValue' in a) return attributesOf((a.kvlistValue as { values?: unknown[] })?.values ?? []);
  if ('bytesValue' in a)
    return Array.isArray(a.bytesValue)
      ? Buffer.from(a.bytesValue as number[]).toString('base64')
      : String(a.bytesValue);
  return null;
}

function isPhoenixSpan(r: Record<string, unknown>): boolean {
  return (
    !!r.context &&
    typeof r.context === 'object' &&
    ('span_id' in (r.context as object) || 'trace_id' in (r.context as object))
  );
}

/** A Phoenix span export (REST /v1/projects/{project}/spans or a span dataframe row as JSON). */
function phoenixSpan(r: Record<string, unknown>, where: string): ReadItem {
  const context = r.context as Record<string, unknown>;
  const attributes = attributesOf(r.attributes ?? {});
  if (r.span_kind && !('openinference.span.kind' in attributes))
    attributes['openinference.span.kind'] = String(r.span_kind);
  return {
    span: {
      trace_id: stringId(context.trace_id),
      span_id: stringId(context.span_id),
      parent_span_id: stringId(r.parent_id) || null,
      name: String(r.name ?? ''),
      otel_kind: 'internal',
      start_time_unix_nano: isoToNanos(r.start_time),
      end_time_unix_nano: isoToNanos(r.end_time),
      status_code: statusOf(r.status_code),
      status_message: typeof r.status_message === 'string' ? r.status_message : '',
      attributes,
      resource: {},
      scope: { name: 'phoenix', version: '' },
      events: (Array.isArray(r.events) ? r.events : []).map((e: Record<string, unknown>) => ({
        name: String(e?.name ?? ''),
        time_unix_nano: isoToNanos(e?.timestamp),
        attributes: attributesOf(e?.attributes ?? {}),
      })),
      source_ref: where,
    },
  };
}

function isLangfuseTrace(r: Record<string, unknown>): boolean {
  return typeof r.id === 'string' && Array.isArray(r.observations) && !('traceId' in r);
}

function isLangfuseObservation(r: Record<string, unknown>): boolean {
  return typeof r.id === 'string' && typeof r.traceId === 'string' && ('startTime' in r || 'type' in r);
}

function* langfuseTrace(r: Record<string, unknown>, where: string): Generator<ReadItem> {
  const context = { sessionId: r.sessionId, userId: r.userId, traceName: r.name };
  const observations = (r.observations as unknown[]).filter((o) => o && typeof o === 'object');
  if (!observations.length) {
    yield {
      drop: {
        reason: 'unsupported_record',
        detail:
          'a Langfuse trace whose observations are ids only: fetch the observations (GET /api/public/observations?traceId=) or export them with the trace',
        source_ref: where,
        payload: r,
      },
    };
    return;
  }
  let i = 0;
  for (const o of observations as Array<Record<string, unknown>>)
    yield langfuseObservation({ traceId: r.id, ...o }, `${where}, observation ${++i}`, context);
}

/** A Langfuse observation (public API or export) expressed in Langfuse's own OpenTelemetry attribute names. */
export function langfuseObservation(
  r: Record<string, unknown>,
  where: string,
  trace: { sessionId?: unknown; userId?: unknown; traceName?: unknown },
): ReadItem {
  const attributes: Record<string, AttributeValue> = {};
  const set = (key: string, value: unknown, asJson = false) => {
    if (value === undefined || value === null) return;
    attributes[key] = asJson && typeof value !== 'string' ? JSON.stringify(value) : plain(value);
  };
  set('langfuse.observation.type', typeof r.type === 'string' ? r.type.toLowerCase() : undefined);
  set('langfuse.observation.input', r.input, true);
  set('langfuse.observation.output', r.output, true);
  set('langfuse.observation.model.name', r.model);
  const usage = (r.usageDetails ?? r.usage) as Record<string, unknown> | undefined;
  if (usage && typeof usage === 'object')
    set(
      'langfuse.observation.usage_details',
      {
        input: usage.input ?? usage.promptTokens,
        output: usage.output ?? usage.completionTokens,
        total: usage.total ?? usage.totalTokens,
      },
      true,
    );
  const cost =
    r.costDetails ??
    (r.calculatedTotalCost !== undefined && r.calculatedTotalCost !== null
      ? { total: r.calculatedTotalCost }
      : undefined);
  set('langfuse.observation.cost_details', cost, true);
  set('langfuse.observation.level', r.level);
  set('langfuse.observation.status_message', r.statusMessage);
  set('langfuse.session.id', r.sessionId ?? trace.sessionId);
  set('langfuse.user.id', r.userId ?? trace.userId);
  set('langfuse.trace.name', r.traceName ?? trace.traceName);
  if (r.metadata && typeof r.metadata === 'object')
    for (const [k, v] of Object.entries(attributesOf(r.metadata))) attributes[`langfuse.observation.metadata.${k}`] = v;
  const error = r.level === 'ERROR';
  return {
    span: {
      trace_id: stringId(r.traceId),
      span_id: stringId(r.id),
      parent_span_id: stringId(r.parentObservationId) || null,
      name: String(r.name ?? ''),
      otel_kind: 'internal',
      start_time_unix_nano: isoToNanos(r.startTime),
      end_time_unix_nano: isoToNanos(r.endTime ?? r.startTime),
      status_code: error ? 'error' : 'unset',
      status_message: error && typeof r.statusMessage === 'string' ? r.statusMessage : '',
      attributes,
      resource: {},
      scope: { name: 'langfuse', version: '' },
      events: [],
      source_ref: where,
    },
  };
}

/** A plain span record: trace_id/span_id (or camelCase), parent, name, times (ISO or epoch), attributes (flat or nested). */
function flatSpan(r: Record<string, unknown>, where: string): ReadItem {
  const status =
    r.status && typeof r.status === 'object'
      ? (r.status as Record<string, unknown>)
      : { code: r.status_code ?? r.status, message: r.status_message };
  return {
    span: {
      trace_id: stringId(r.trace_id ?? r.traceId),
      span_id: stringId(r.span_id ?? r.spanId),
      parent_span_id: stringId(r.parent_span_id ?? r.parentSpanId ?? r.parent_id) || null,
      name: String(r.name ?? ''),
      otel_kind: kindOf(r.kind),
      start_time_unix_nano:
        r.start_time_unix_nano !== undefined
          ? nanosOf(r.start_time_unix_nano)
          : isoToNanos(r.start_time ?? r.startTime ?? r.timestamp),
      end_time_unix_nano:
        r.end_time_unix_nano !== undefined ? nanosOf(r.end_time_unix_nano) : isoToNanos(r.end_time ?? r.endTime),
      status_code: statusOf(status.code),
      status_message: typeof status.message === 'string' ? status.message : '',
      attributes: attributesOf(r.attributes ?? {}),
      resource: attributesOf(r.resource ?? {}),
      scope: { name: '', version: '' },
      events: [],
      source_ref: where,
    },
  };
}

function stringId(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number') return String(v);
  return '';
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
