/**
 * The OTLP log export, as the OpenTelemetry protocol specifies it
 * (opentelemetry-proto, `opentelemetry/proto/collector/logs/v1/logs_service.proto`): an
 * ExportLogsServiceRequest in, binary protobuf or its JSON mapping, read into one
 * `SourceLogRecord` per log record (its trace context, event name, body and attributes, with its
 * resource and scope). Decoded by the OpenTelemetry project's generated types, as spans are.
 */
import { createRequire } from 'node:module';
import { valueDepth } from '#libs/common/json-limits.js';
import { OtlpDecodeError, parseJsonRequest, type OtlpEncoding } from './otlp-codec.js';
import { anyValue, attributesOf, idOf, MAX_RECORD_DEPTH, nanosOf } from './readers.js';
import type { AttributeValue, Drop } from './span.types.js';

const require = createRequire(import.meta.url);

interface MessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
const otlpRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { logs: { v1: { ExportLogsServiceRequest: MessageType } } } } };
};
const ExportLogsServiceRequest = otlpRoot.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
const TO_OBJECT = { longs: String, enums: Number, bytes: Array, defaults: false, arrays: true };

/** Log records one export may carry (OTLP_MAX_BYTES bounds its bytes); more is 413. */
export const MAX_LOG_RECORDS_PER_EXPORT = 10_000;

/** A log record as read from an export, before it is joined to its span. Ids are lower-case hex, empty when absent. */
export interface SourceLogRecord {
  trace_id: string;
  span_id: string;
  /** The record's `event_name` field, else its `event.name` attribute (older SDKs), else null */
  event_name: string | null;
  /** Unix epoch nanoseconds as a decimal string: the record's time, else its observed time */
  time_unix_nano: string | null;
  severity_number: number | null;
  severity_text: string | null;
  body: AttributeValue;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
  scope: { name: string; version: string };
  /** Where it sat in the export (`log record 3`), for drops */
  source_ref: string;
}

export type LogReadItem = { record: SourceLogRecord } | { drop: Drop };

/**
 * Every log record of one export. A body that is not an ExportLogsServiceRequest throws
 * OtlpDecodeError (400); a record nested past the service's depth limit is a drop.
 */
export function decodeLogsRequest(body: unknown, encoding: OtlpEncoding): LogReadItem[] {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(0);
  let request: Record<string, unknown>;
  if (encoding === 'protobuf') {
    try {
      request = ExportLogsServiceRequest.toObject(ExportLogsServiceRequest.decode(bytes), TO_OBJECT);
    } catch (err) {
      const reason = err instanceof RangeError ? `it nests deeper than the decoder allows` : (err as Error).message;
      throw new OtlpDecodeError(`not an OTLP/protobuf ExportLogsServiceRequest: ${reason}`);
    }
  } else request = parseJsonRequest(bytes, 'resourceLogs', 'ExportLogsServiceRequest');
  return [...logRecordsOf(request)];
}

function* logRecordsOf(request: Record<string, unknown>): Generator<LogReadItem> {
  let n = 0;
  for (const rl of asArray(request.resourceLogs)) {
    const resource = attributesOf((rl?.resource as { attributes?: unknown } | undefined)?.attributes);
    for (const sl of asArray(rl?.scopeLogs)) {
      const s = (sl?.scope ?? {}) as { name?: unknown; version?: unknown };
      const scope = { name: String(s.name ?? ''), version: String(s.version ?? '') };
      for (const raw of asArray(sl?.logRecords)) {
        n++;
        const where = `log record ${n}`;
        if (!raw || typeof raw !== 'object') {
          yield {
            drop: {
              reason: 'malformed_record',
              detail: 'a log record must be an object',
              source_ref: where,
              payload: raw ?? null,
            },
          };
          continue;
        }
        if (valueDepth(raw, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH) {
          yield {
            drop: {
              reason: 'malformed_record',
              detail: `the log record nests values deeper than ${MAX_RECORD_DEPTH} levels`,
              source_ref: where,
              payload: null,
            },
          };
          continue;
        }
        yield { record: logRecordOf(raw, resource, scope, where) };
      }
    }
  }
}

function logRecordOf(
  r: Record<string, unknown>,
  resource: Record<string, AttributeValue>,
  scope: { name: string; version: string },
  where: string,
): SourceLogRecord {
  const attributes = attributesOf(r.attributes);
  const named = r.eventName ?? r.event_name;
  const eventName = typeof named === 'string' && named ? named : attributes['event.name'];
  const severity = Number(r.severityNumber ?? r.severity_number);
  const text = r.severityText ?? r.severity_text;
  return {
    trace_id: idOf(r.traceId ?? r.trace_id, 16),
    span_id: idOf(r.spanId ?? r.span_id, 8),
    event_name: typeof eventName === 'string' && eventName ? eventName : null,
    time_unix_nano:
      nanosOf(r.timeUnixNano ?? r.time_unix_nano) ?? nanosOf(r.observedTimeUnixNano ?? r.observed_time_unix_nano),
    severity_number: Number.isInteger(severity) && severity > 0 ? severity : null,
    severity_text: typeof text === 'string' && text ? text : null,
    body: r.body === undefined || r.body === null ? null : anyValue(r.body),
    attributes,
    resource,
    scope,
    source_ref: where,
  };
}

function asArray(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? (value as Array<Record<string, unknown>>) : [];
}
