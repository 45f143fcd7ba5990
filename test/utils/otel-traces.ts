/**
 * Real OTLP payloads for tests: spans made by the OpenTelemetry JS SDK (sdk-trace) with
 * OpenInference and GenAI attributes, serialised by the OpenTelemetry project's own OTLP
 * serializers (JSON and protobuf), exactly as an exporter would send them.
 */
import { ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { credentials, Client as GrpcClient, Metadata, type ServiceError } from '@grpc/grpc-js';
import { createRequire } from 'node:module';
import type { Response } from 'superagent';
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';

export interface SpanPlan {
  name: string;
  attributes?: Attributes;
  /** Milliseconds from the trace's start */
  start: number;
  end: number;
  error?: string;
  children?: SpanPlan[];
}

/** Records the planned traces (one root plan per trace) and returns the SDK's finished spans. */
export function recordTraces(roots: SpanPlan[], t0 = Date.UTC(2026, 10, 1, 12, 0, 0)): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer('ews-tests', '1.0.0');
  const open = (plan: SpanPlan, parent: Span | null, base: number): void => {
    const ctx = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const span = tracer.startSpan(plan.name, { attributes: plan.attributes, startTime: base + plan.start }, ctx);
    for (const child of plan.children ?? []) open(child, span, base);
    if (plan.error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: plan.error });
      span.recordException({ name: 'Error', message: plan.error });
    }
    span.end(base + plan.end);
  };
  roots.forEach((root, i) => open(root, null, t0 + i * 60_000));
  return exporter.getFinishedSpans();
}

export function otlpJson(spans: ReadableSpan[]): Record<string, unknown> {
  return JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8'));
}

export function otlpProtobuf(spans: ReadableSpan[]): Buffer {
  return Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
}

/** An OpenInference agent trace: agent -> llm (tokens), tool x2 (one fails), retriever. */
export function agentTrace(session: string, question: string): SpanPlan {
  return {
    name: 'support-agent',
    start: 0,
    end: 1000,
    attributes: {
      'openinference.span.kind': 'AGENT',
      'session.id': session,
      'user.id': 'u-1',
      'input.value': question,
      'output.value': 'Your order ships tomorrow.',
      'app.release': '2026.11',
    },
    children: [
      {
        name: 'search-docs',
        start: 10,
        end: 110,
        attributes: {
          'openinference.span.kind': 'RETRIEVER',
          'input.value': question,
          'retrieval.documents.0.document.id': 'kb-1',
          'retrieval.documents.0.document.content': 'Shipping takes 1 day',
          'retrieval.documents.0.document.score': 0.9,
        },
      },
      {
        name: 'ChatCompletion',
        start: 120,
        end: 520,
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini',
          'llm.token_count.prompt': 100,
          'llm.token_count.completion': 20,
          'llm.token_count.total': 120,
          'input.value': question,
          'output.value': 'Let me check the order.',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'lookup_order',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"order":"A1"}',
        },
      },
      {
        name: 'lookup_order',
        start: 530,
        end: 730,
        attributes: {
          'openinference.span.kind': 'TOOL',
          'tool.name': 'lookup_order',
          'tool.parameters': '{"order":"A1"}',
        },
        error: 'order service timed out',
      },
      {
        name: 'lookup_order',
        start: 740,
        end: 840,
        attributes: {
          'openinference.span.kind': 'TOOL',
          'tool.name': 'lookup_order',
          'tool.parameters': '{"order":"A1"}',
        },
      },
    ],
  };
}

/** An OpenTelemetry GenAI chat span (semantic conventions gen_ai.*). */
export function genAiTrace(conversation: string): SpanPlan {
  return {
    name: 'chat gpt-4o',
    start: 0,
    end: 300,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.usage.input_tokens': 50,
      'gen_ai.usage.output_tokens': 10,
      'gen_ai.conversation.id': conversation,
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Hello' }] }]),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Hi!' }] }]),
    },
  };
}

/** google.rpc.Status { int32 code = 1; string message = 2; } read back from the wire. */
export function readRpcStatus(bytes: Buffer): { code: number; message: string } {
  const { Reader } = createRequire(import.meta.url)('protobufjs/minimal');
  const reader = Reader.create(bytes);
  const out = { code: 0, message: '' };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) out.code = reader.int32();
    else if (tag >>> 3 === 2) out.message = reader.string();
    else reader.skipType(tag & 7);
  }
  return out;
}

/** A supertest parser keeping a binary (protobuf) answer as bytes. */
export const binary = (res: Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

/** What a raw OTLP/gRPC Export call answered: the response bytes, or the status with its google.rpc.Status details. */
export interface GrpcAnswer {
  code: number;
  details?: string;
  response?: Buffer;
  statusDetails?: Buffer;
}

/** One TraceService/Export call with grpc-js's own client (no exporter: the bytes and metadata as given). */
export function grpcExport(
  address: string,
  body: Buffer,
  metadata: Record<string, string>,
  method = '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
): Promise<GrpcAnswer> {
  const client = new GrpcClient(address, credentials.createInsecure());
  const meta = new Metadata();
  for (const [key, value] of Object.entries(metadata)) meta.set(key, value);
  const bytes = (b: Buffer) => b;
  return new Promise<GrpcAnswer>((resolve) => {
    client.makeUnaryRequest(method, bytes, bytes, body, meta, (err: ServiceError | null, response?: Buffer) => {
      client.close();
      if (err)
        resolve({
          code: err.code,
          details: err.details,
          statusDetails: err.metadata?.get('grpc-status-details-bin')[0] as Buffer | undefined,
        });
      else resolve({ code: 0, response });
    });
  });
}

/** The retry delay (seconds) of the google.rpc.RetryInfo in a google.rpc.Status's details, if it has one. */
export function retryDelayOf(status: Buffer): number | undefined {
  const { Reader } = createRequire(import.meta.url)('protobufjs/minimal');
  const fields = (bytes: Uint8Array): Map<number, unknown[]> => {
    const reader = Reader.create(bytes);
    const out = new Map<number, unknown[]>();
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const value =
        (tag & 7) === 2 ? reader.bytes() : (tag & 7) === 0 ? reader.uint32() : (reader.skipType(tag & 7), undefined);
      out.set(tag >>> 3, [...(out.get(tag >>> 3) ?? []), value]);
    }
    return out;
  };
  for (const any of (fields(status).get(3) ?? []) as Uint8Array[]) {
    const detail = fields(any);
    if (Buffer.from(detail.get(1)![0] as Uint8Array).toString() !== 'type.googleapis.com/google.rpc.RetryInfo')
      continue;
    const retryInfo = fields(detail.get(2)![0] as Uint8Array);
    return fields(retryInfo.get(1)![0] as Uint8Array).get(1)?.[0] as number;
  }
  return undefined;
}
