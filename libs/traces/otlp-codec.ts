/**
 * The OTLP/HTTP trace export, as the OpenTelemetry protocol specifies it
 * (opentelemetry-proto, `opentelemetry/proto/collector/trace/v1/trace_service.proto`):
 * an ExportTraceServiceRequest in, binary protobuf (`application/x-protobuf`) or its JSON
 * mapping (`application/json`); an ExportTraceServiceResponse out, in the request's encoding,
 * whose `partial_success` counts the spans the server rejected and says why; failures carry a
 * `google.rpc.Status` in the request's encoding.
 */
import { createRequire } from 'node:module';
import { MAX_BODY_DEPTH, scanJson } from '#libs/common/json-limits.js';
import { readProtobufBuffer, readRecordsAsync, type ReadItem } from './readers.js';

const require = createRequire(import.meta.url);

interface MessageType {
  fromObject(value: Record<string, unknown>): unknown;
  encode(message: unknown): { finish(): Uint8Array };
}
const otlpRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceResponse: MessageType } };
        logs: { v1: { ExportLogsServiceResponse: MessageType } };
      };
    };
  };
};
const ExportTraceServiceResponse = otlpRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
const ExportLogsServiceResponse = otlpRoot.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
// google.rpc.Status is not among the generated types; protobufjs (their runtime) writes it.
const { Writer } = require('protobufjs/minimal') as { Writer: { create(): ProtoWriter } };
interface ProtoWriter {
  uint32(value: number): ProtoWriter;
  int32(value: number): ProtoWriter;
  string(value: string): ProtoWriter;
  fork(): ProtoWriter;
  ldelim(): ProtoWriter;
  finish(): Uint8Array;
}

export type OtlpEncoding = 'protobuf' | 'json';

/** The media types of the two encodings (the protobuf one as the specification names it, and its older alias). */
export const OTLP_PROTOBUF_TYPES = ['application/x-protobuf', 'application/protobuf'];
export const OTLP_JSON_TYPE = 'application/json';

/** The encoding a Content-Type names, or null when it is neither. */
export function otlpEncoding(contentType: string | undefined): OtlpEncoding | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (OTLP_PROTOBUF_TYPES.includes(type)) return 'protobuf';
  if (type === OTLP_JSON_TYPE) return 'json';
  return null;
}

export class OtlpDecodeError extends Error {}

/**
 * Every span (or drop) of one export request. A body that is not an ExportTraceServiceRequest
 * at all throws OtlpDecodeError (the receiver answers 400, as the specification asks); a span
 * that cannot be used is a drop like any file landing's.
 */
export async function decodeExportRequest(body: unknown, encoding: OtlpEncoding): Promise<ReadItem[]> {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(0);
  const items: ReadItem[] = [];
  if (encoding === 'protobuf') {
    // An empty message is a valid (empty) ExportTraceServiceRequest.
    for await (const item of readProtobufBuffer(bytes)) {
      if ('fatal' in item && item.fatal) throw new OtlpDecodeError(item.drop.detail);
      items.push(item);
    }
    return items;
  }
  const request = parseJsonRequest(bytes, 'resourceSpans', 'ExportTraceServiceRequest');
  // A request without resourceSpans is valid OTLP: nothing to land.
  if (!request.resourceSpans) return items;
  for await (const item of readRecordsAsync([request], 'request')) items.push(item);
  return items;
}

/**
 * An OTLP/JSON export request (`list`: its top-level array, `resourceSpans` or `resourceLogs`),
 * parsed within the service's nesting limit; OtlpDecodeError when the body is not one.
 */
export function parseJsonRequest(bytes: Uint8Array, list: string, requestName: string): Record<string, unknown> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (scanJson(text, MAX_BODY_DEPTH).tooDeep)
    throw new OtlpDecodeError(`the JSON nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`);
  let request: unknown;
  try {
    request = JSON.parse(text.toString('utf8'));
  } catch (err) {
    throw new OtlpDecodeError(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (!request || typeof request !== 'object' || Array.isArray(request))
    throw new OtlpDecodeError(`an OTLP/JSON ${requestName} is a JSON object with \`${list}\``);
  const records = (request as Record<string, unknown>)[list];
  if (records !== undefined && records !== null && !Array.isArray(records))
    throw new OtlpDecodeError(`\`${list}\` must be an array`);
  return request as Record<string, unknown>;
}

/** What an export's records are: spans (TraceService) or log records (LogsService). */
export type OtlpSignal = 'traces' | 'logs';

/**
 * The success answer: empty when every record was accepted, else `partial_success` with the count
 * (`rejected_spans` or `rejected_log_records`) and the reason.
 */
export function encodeExportResponse(
  rejected: number,
  message: string,
  encoding: OtlpEncoding,
  signal: OtlpSignal = 'traces',
): Uint8Array | Record<string, unknown> {
  const count = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  const partialSuccess = rejected > 0 ? { [count]: rejected, errorMessage: message } : undefined;
  if (encoding === 'json')
    return partialSuccess ? { partialSuccess: { [count]: String(rejected), errorMessage: message } } : {};
  const type = signal === 'traces' ? ExportTraceServiceResponse : ExportLogsServiceResponse;
  return type.encode(type.fromObject(partialSuccess ? { partialSuccess } : {})).finish();
}

/** gRPC status codes for the HTTP statuses the receiver answers with (the OTLP/HTTP failure body is a google.rpc.Status). */
export function grpcCode(httpStatus: number): number {
  if (httpStatus === 400 || httpStatus === 413 || httpStatus === 415) return 3; // INVALID_ARGUMENT
  if (httpStatus === 401) return 16; // UNAUTHENTICATED
  if (httpStatus === 403) return 7; // PERMISSION_DENIED
  if (httpStatus === 404) return 5; // NOT_FOUND
  if (httpStatus === 429) return 8; // RESOURCE_EXHAUSTED
  if (httpStatus === 503) return 14; // UNAVAILABLE
  return 13; // INTERNAL
}

/**
 * A google.rpc.Status message: `code = 1`, `message = 2`, and with a retry delay one detail
 * (`details = 3`), a google.protobuf.Any holding a google.rpc.RetryInfo (`retry_delay = 1`, a
 * Duration of whole seconds), as the OTLP specification asks of a server that throttles.
 */
export function encodeStatus(code: number, message: string, retryDelaySeconds?: number): Uint8Array {
  const writer = Writer.create();
  if (code) writer.uint32(8).int32(code);
  if (message) writer.uint32(18).string(message);
  if (retryDelaySeconds !== undefined) {
    writer.uint32(26).fork().uint32(10).string('type.googleapis.com/google.rpc.RetryInfo');
    writer.uint32(18).fork().uint32(10).fork().uint32(8).int32(retryDelaySeconds).ldelim().ldelim();
    writer.ldelim();
  }
  return writer.finish();
}
