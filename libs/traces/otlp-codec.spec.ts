import { describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { agentTrace, otlpJson, otlpProtobuf, readRpcStatus, recordTraces } from '../../test/utils/otel-traces.js';
import {
  decodeExportRequest,
  encodeExportResponse,
  encodeStatus,
  grpcCode,
  OtlpDecodeError,
  otlpEncoding,
} from './otlp-codec.js';

const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceResponse = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

describe('OTLP/HTTP codec', () => {
  const spans = recordTraces([agentTrace('s', 'q')]);

  it('names the encoding from the Content-Type, parameters and case aside', () => {
    expect(otlpEncoding('application/x-protobuf')).toBe('protobuf');
    expect(otlpEncoding('Application/Protobuf; charset=binary')).toBe('protobuf');
    expect(otlpEncoding('application/json; charset=utf-8')).toBe('json');
    expect(otlpEncoding('text/plain')).toBeNull();
    expect(otlpEncoding(undefined)).toBeNull();
  });

  it("decodes the same spans from the protobuf and the JSON made by OpenTelemetry's serializers", async () => {
    const fromProto = await decodeExportRequest(otlpProtobuf(spans), 'protobuf');
    const fromJson = await decodeExportRequest(Buffer.from(JSON.stringify(otlpJson(spans))), 'json');
    expect(fromProto).toHaveLength(5);
    const ids = (items: typeof fromProto) => items.map((item) => ('span' in item ? item.span.span_id : null)).sort();
    expect(ids(fromProto)).toEqual(ids(fromJson));
    // An empty message, or a request without resourceSpans, is a valid empty export.
    expect(await decodeExportRequest(new Uint8Array(0), 'protobuf')).toEqual([]);
    expect(await decodeExportRequest(Buffer.from('{}'), 'json')).toEqual([]);
  });

  it('refuses what is not an ExportTraceServiceRequest', async () => {
    await expect(decodeExportRequest(Buffer.from([0x0a, 0xff, 0xff, 0x01]), 'protobuf')).rejects.toBeInstanceOf(
      OtlpDecodeError,
    );
    await expect(decodeExportRequest(Buffer.from('[1]'), 'json')).rejects.toThrow('JSON object');
    await expect(decodeExportRequest(Buffer.from('{"resourceSpans": {}}'), 'json')).rejects.toThrow('must be an array');
    await expect(decodeExportRequest(Buffer.from(`${'['.repeat(100)}${']'.repeat(100)}`), 'json')).rejects.toThrow(
      'deeper than',
    );
  });

  it('answers partial success in either encoding, and nothing when every span was taken', () => {
    expect(encodeExportResponse(0, '', 'json')).toEqual({});
    expect(encodeExportResponse(2, 'two bad', 'json')).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: 'two bad' },
    });
    expect((encodeExportResponse(0, '', 'protobuf') as Uint8Array).length).toBe(0);
    const decoded = ExportTraceServiceResponse.toObject(
      ExportTraceServiceResponse.decode(encodeExportResponse(3, 'three bad', 'protobuf')),
      { longs: String },
    );
    expect(decoded).toEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: 'three bad' } });
  });

  it('writes google.rpc.Status with the gRPC code of the HTTP status', () => {
    expect([400, 401, 403, 404, 413, 415, 429, 500, 503].map(grpcCode)).toEqual([3, 16, 7, 5, 3, 3, 8, 13, 14]);
    expect(readRpcStatus(Buffer.from(encodeStatus(8, 'slow down')))).toEqual({ code: 8, message: 'slow down' });
  });
});
