import type { RequestHandler } from 'express';
import { rawBodyParser } from '#libs/common/http-pipeline.js';
import { DomainError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { PROBLEM_CONTENT_TYPE, type ProblemWriter } from '#libs/common/problem.js';
import { encodeStatus, grpcCode, OTLP_JSON_TYPE, OTLP_PROTOBUF_TYPES, otlpEncoding } from '#libs/traces/otlp-codec.js';

/** The media type refusal of POST /v1/traces and /v1/logs. */
export function unsupportedOtlpType(contentType: string | undefined): DomainError {
  return new DomainError(
    CommonErrors.unsupported_media_type,
    `OTLP/HTTP takes ${OTLP_PROTOBUF_TYPES[0]} (binary protobuf) or ${OTLP_JSON_TYPE} (the OTLP JSON mapping); got ${contentType ?? 'no Content-Type'}`,
    { accepted: [...OTLP_PROTOBUF_TYPES, OTLP_JSON_TYPE] },
  );
}

/** The OTLP/HTTP trace path, as exporters append it to their endpoint. */
export const OTLP_TRACES_PATH = '/v1/traces';
/** The OTLP/HTTP log path, as exporters append it to their endpoint. */
export const OTLP_LOGS_PATH = '/v1/logs';

/** The OTLP/HTTP paths, what each receives, and its export request's top-level list. */
const OTLP_ROUTES = [
  {
    path: OTLP_TRACES_PATH,
    request: 'ExportTraceServiceRequest',
    response: 'ExportTraceServiceResponse',
    list: 'resourceSpans',
    ids: 'hex trace and span ids',
  },
  {
    path: OTLP_LOGS_PATH,
    request: 'ExportLogsServiceRequest',
    response: 'ExportLogsServiceResponse',
    list: 'resourceLogs',
    ids: 'hex trace and span ids',
  },
] as const;

/**
 * Failures of an OTLP/HTTP request in its own encoding, as the protocol asks: a binary
 * google.rpc.Status for protobuf requests; for JSON requests the problem+json document every
 * route answers, with the Status members `code` (gRPC) and `message` beside, so it reads as both.
 */
function otlpProblemWriter(encoding: 'protobuf' | 'json'): ProblemWriter {
  return (res, problem, headers) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    const message = `${problem.detail} (${problem.error_code})`;
    if (encoding === 'protobuf') {
      res
        .status(problem.status)
        .type('application/x-protobuf')
        .send(Buffer.from(encodeStatus(grpcCode(problem.status), message)));
      return;
    }
    res
      .status(problem.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify({ ...problem, code: grpcCode(problem.status), message: problem.detail }));
  };
}

/**
 * The body of POST /v1/traces and /v1/logs: binary protobuf or OTLP JSON, gzip- or deflate-compressed or not,
 * read whole (at most `limit` bytes once decompressed: a larger export is 413, however small it
 * was compressed) and left as bytes for the codec. Runs before the service's JSON parser, whose
 * limit is for API bodies.
 */
export function otlpBodyParser(limit: number): RequestHandler {
  const raw = rawBodyParser(
    limit,
    `The export exceeds the limit of ${limit} bytes (decompressed); send smaller batches (the batch span processor's maxExportBatchSize)`,
  );
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const encoding = otlpEncoding(req.headers['content-type']);
    // Another media type is refused by the route (415), after the guard has answered who may call it; its body is not read.
    if (!encoding) return next();
    res.locals.problemWriter = otlpProblemWriter(encoding);
    raw(req, res, next);
  };
}

/**
 * The request and answer of POST /v1/traces and /v1/logs per media type (decorators give one
 * schema to every type): binary protobuf as bytes, OTLP JSON as the export request object.
 */
export function describeOtlpRoute(
  document: { paths: Record<string, Record<string, any>> },
  jsonExamples: { traces: unknown; logs: unknown },
): void {
  for (const route of OTLP_ROUTES) {
    const operation = document.paths[route.path]?.post;
    if (!operation) continue;
    const bytes = {
      type: 'string',
      format: 'binary',
      // OTLP_MAX_BYTES' default, the bound once decompressed (docs/api-conventions.md, Limits).
      maxLength: 16 * 1024 ** 2,
      description: `An ${route.request}, binary protobuf (opentelemetry-proto), optionally gzip-compressed (Content-Encoding: gzip); at most OTLP_MAX_BYTES (default 16 MiB) decompressed`,
    };
    operation.requestBody = {
      required: true,
      description: `An OTLP ${route.request}, gzip or deflate Content-Encoding allowed; at most OTLP_MAX_BYTES once decompressed`,
      content: {
        'application/x-protobuf': { schema: bytes },
        'application/json': {
          schema: {
            type: 'object',
            description: `An ${route.request} in the OTLP JSON mapping (${route.ids}, integer enums, int64 times as strings)`,
            // Bounded by the body's OTLP_MAX_BYTES: each element takes `{},` at least.
            properties: {
              [route.list]: {
                type: 'array',
                maxItems: Math.floor((16 * 1024 ** 2) / 3),
                items: { type: 'object', additionalProperties: true },
              },
            },
            additionalProperties: true,
          },
          example: route.path === OTLP_TRACES_PATH ? jsonExamples.traces : jsonExamples.logs,
        },
      },
    };
    const ok = operation.responses?.['200'];
    const json = ok?.content?.['application/json'];
    if (ok && json)
      ok.content = {
        'application/x-protobuf': {
          schema: { type: 'string', format: 'binary', description: `An ${route.response}, binary protobuf` },
        },
        'application/json': json,
      };
  }
}

/**
 * A protobuf export's errors are answered in protobuf too (a google.rpc.Status, otlpProblemWriter):
 * beside each error's problem+json, once the document's errors are complete.
 */
export function describeOtlpErrors(document: { paths: Record<string, Record<string, any>> }): void {
  const responses = OTLP_ROUTES.flatMap((route) =>
    Object.entries<{ content?: Record<string, unknown> }>(document.paths[route.path]?.post?.responses ?? {}),
  );
  for (const [status, response] of responses) {
    if (!/^[45]\d\d$/.test(status) || !response.content) continue;
    response.content['application/x-protobuf'] = {
      schema: {
        type: 'string',
        format: 'binary',
        description: 'A google.rpc.Status (code and message), binary protobuf: the answer to a protobuf export',
      },
    };
  }
}
