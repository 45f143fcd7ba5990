import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { Logger } from 'pino';
import { CommonErrors } from './error-codes.js';
import {
  loneSurrogatePath,
  MAX_BODY_DEPTH,
  RESERVED_MEMBER_NAMES,
  reservedMemberPath,
  scanJson,
} from './json-limits.js';
import { buildProblem, type Problem, writeProblem } from './problem.js';
import { requestContext } from './request-context.js';
import type { HttpDrain } from './http-drain.js';
import { requestPressure } from './request-pressure.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * First in the pipeline, for every request: admits it past the shutdown drain (or lets the drain
 * answer 503), takes the caller's X-Request-Id when well-formed (else makes one) and echoes it,
 * counts the request in flight for background work to give way to (request-pressure.ts), runs the
 * rest in the request's context (request-context.ts), and logs one access line when the response
 * closes. One listener does all that ends with the response: the closing of a response is on
 * every request's path (docs/performance.md#an-authenticated-get-of-a-record).
 */
export function requestMiddleware(logger: Logger, drain?: HttpDrain): RequestHandler {
  // The access line's fields are fixed and hold no secret (the path without its query), so it skips the root
  // logger's redaction: a walk of every wildcard path, most of a line's cost (docs/performance.md#the-access-log-line).
  const access = logger.child({}, { redact: [] });
  return (req: Request, res: Response, next: NextFunction) => {
    if (drain && !drain.admit(req, res)) return;
    const incoming = req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    const ctx = { requestId } as { requestId: string; userId?: string };
    requestPressure.begin(res);
    // 'close' follows 'finish' when the response was sent, and comes alone when the client went away first.
    res.once('close', () => {
      drain?.done(res);
      requestPressure.end(res);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      access.info(
        {
          request_id: requestId,
          user_id: ctx.userId,
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          duration_ms: Math.round(ms * 10) / 10,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    });
    requestContext.run(ctx, next);
  };
}

/** Thrown from a parser's `verify` (before JSON.parse runs) when the raw body breaks a limit of json-limits.ts. */
class JsonLimitError extends Error {
  readonly type = 'json.limit';
  constructor(
    readonly code: string,
    detail: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

const tooDeep = (where: string, extensions: Record<string, unknown> = {}) =>
  new JsonLimitError(
    CommonErrors.json_too_deep,
    `${where} nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    { max_depth: MAX_BODY_DEPTH, ...extensions },
  );

/** What the raw text of a JSON body showed, so that only the bodies that need it are walked once parsed. */
const RAW_SIGNS = Symbol('rawSigns');
type WithSigns = Request & { [RAW_SIGNS]?: { loneSurrogate: boolean; reservedName: boolean } };

/** The raw JSON body, before JSON.parse: deeper than MAX_BODY_DEPTH is refused; unpaired surrogates and reserved member names are looked for. */
function verifyJson(req: Request, _res: Response, buf: Buffer): void {
  const scan = scanJson(buf, MAX_BODY_DEPTH);
  if (scan.tooDeep) throw tooDeep('The body');
  // A \u escape can spell a reserved name too.
  const reservedName = buf.includes('\\u') || [...RESERVED_MEMBER_NAMES].some((name) => buf.includes(name));
  if (scan.loneSurrogate || reservedName)
    (req as WithSigns)[RAW_SIGNS] = { loneSurrogate: scan.loneSurrogate, reservedName };
}

/** The problem with a parsed JSON body the raw scan pointed at: a string with an unpaired surrogate, or a member named `__proto__` or `constructor`. */
function parsedBodyProblem(req: Request): JsonLimitError | undefined {
  const signs = (req as WithSigns)[RAW_SIGNS];
  if (!signs) return undefined;
  // Each parser's wrapper calls back; the body is walked for the first only.
  delete (req as WithSigns)[RAW_SIGNS];
  const lone = signs.loneSurrogate ? loneSurrogatePath(req.body) : undefined;
  if (lone !== undefined) return unpairedSurrogate(lone);
  const reserved = signs.reservedName ? reservedMemberPath(req.body) : undefined;
  if (reserved === undefined) return undefined;
  const message = `${reserved} is not accepted here: members named __proto__ or constructor are refused anywhere in a body`;
  return new JsonLimitError(CommonErrors.validation_failed, message, { errors: [{ field: reserved, message }] });
}

/** A JSON Lines body, line by line, held to the same limits as a JSON body (each line is one value). */
function verifyJsonLines(_req: Request, _res: Response, buf: Buffer): void {
  let start = 0;
  for (let line = 1; start <= buf.length; line++) {
    const end = buf.indexOf(0x0a, start);
    const stop = end === -1 ? buf.length : end;
    const scan = scanJson(buf.subarray(start, stop), MAX_BODY_DEPTH);
    if (scan.tooDeep) throw tooDeep(`Line ${line}`, { line });
    if (scan.loneSurrogate) throw unpairedSurrogate(`line ${line}`, { line });
    if (end === -1) break;
    start = end + 1;
  }
}

function unpairedSurrogate(field: string, extensions: Record<string, unknown> = {}): JsonLimitError {
  const message = `${field} holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair), which is not text`;
  return new JsonLimitError(CommonErrors.validation_failed, message, { errors: [{ field, message }], ...extensions });
}

/**
 * JSON, form and JSON Lines body parsing whose failures are problem+json: malformed JSON is 400,
 * a body over the limit 413, a charset or encoding it cannot read 415, nesting deeper than
 * MAX_BODY_DEPTH 400 `json_too_deep` (checked on the raw text, before anything parses or walks
 * it), and a string with an unpaired surrogate or a member named `__proto__` or `constructor`
 * 400 naming the field. One layer of the pipeline: a request without a body (most are GETs) passes
 * at once, without visiting three parsers that would each find nothing to read.
 */
export function bodyParser(limit: string): RequestHandler {
  const wrap =
    (parser: RequestHandler): RequestHandler =>
    (req, res, next) =>
      parser(req, res, (err?: unknown) => {
        if (!err) {
          const problem = parsedBodyProblem(req);
          return problem ? writeProblem(res, buildProblem(problem.code, problem.message, problem.extensions)) : next();
        }
        const e = err as { type?: string; status?: number; message?: string; limit?: number };
        if (err instanceof JsonLimitError) {
          return writeProblem(res, buildProblem(err.code, err.message, err.extensions));
        }
        if (e.type === 'entity.too.large') {
          return writeProblem(
            res,
            buildProblem(CommonErrors.payload_too_large, `The body exceeds the limit of ${limit}`, {
              limit_bytes: e.limit,
            }),
          );
        }
        if (e.type === 'entity.parse.failed') {
          return writeProblem(
            res,
            buildProblem(CommonErrors.malformed_json, `The body is not valid JSON: ${e.message}`),
          );
        }
        if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported') {
          return writeProblem(
            res,
            buildProblem(CommonErrors.unsupported_media_type, e.message ?? 'Unsupported body encoding'),
          );
        }
        return writeProblem(
          res,
          buildProblem(CommonErrors.validation_failed, e.message ?? 'The body could not be read'),
        );
      });
  const parsers = [
    wrap(express.json({ limit, type: ['application/json', 'application/*+json'], verify: verifyJson })),
    wrap(express.urlencoded({ limit, extended: false })),
    // JSON Lines stay text here; the routes that take them (declared by @ApiConsumes) parse the lines.
    wrap(express.text({ limit, type: ['application/x-ndjson', 'application/jsonl'], verify: verifyJsonLines })),
  ];
  return (req, res, next) => {
    // What body-parser itself takes for "has a body" (type-is's hasBody).
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) return next();
    let at = 0;
    const step = (err?: unknown): void => {
      if (err || at === parsers.length) return next(err);
      parsers[at++](req, res, step);
    };
    step();
  };
}

/**
 * Requests Node's HTTP server refuses before any route sees them (headers or URL over Node's
 * 16 KB limit, malformed request lines, a request not received within its timeout) are answered
 * as problem+json too: 431 `headers_too_large`, 400 `malformed_request` or 408
 * `request_timeout`, instead of Node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [problem, reason]: [Problem, string] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [
            buildProblem(
              CommonErrors.headers_too_large,
              'The request line and headers exceed 16 KB; send long values in a body',
            ),
            'Request Header Fields Too Large',
          ]
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [
              buildProblem(
                CommonErrors.request_timeout,
                "The request did not arrive in full within the server's request timeout",
              ),
              'Request Timeout',
            ]
          : [buildProblem(CommonErrors.malformed_request, 'The request is not valid HTTP/1.1'), 'Bad Request'];
    const body = JSON.stringify(problem);
    socket.end(
      `HTTP/1.1 ${problem.status} ${reason}\r\n` +
        `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * A body read whole as bytes (a protocol's binary body, such as OTLP/HTTP's protobuf), inflated
 * from gzip or deflate and measured decompressed: over `limit` bytes is 413, however small it was
 * compressed; an encoding it cannot inflate 415; a body it cannot read 400. `tooLarge` words the 413.
 */
export function rawBodyParser(limit: number, tooLarge: string): RequestHandler {
  const raw = express.raw({ type: () => true, limit, inflate: true });
  return (req, res, next) =>
    raw(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; message?: string };
      if (e.type === 'entity.too.large')
        return writeProblem(res, buildProblem(CommonErrors.payload_too_large, tooLarge, { limit_bytes: limit }));
      if (e.type === 'encoding.unsupported')
        return writeProblem(
          res,
          buildProblem(
            CommonErrors.unsupported_media_type,
            `${e.message ?? 'Unsupported Content-Encoding'}: send gzip, deflate or no encoding`,
          ),
        );
      return writeProblem(
        res,
        buildProblem(CommonErrors.validation_failed, `The body could not be read: ${e.message ?? 'unknown error'}`),
      );
    });
}
