import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { Logger } from 'pino';
import { CommonErrors } from './error-codes.js';
import { buildProblem, writeProblem } from './problem.js';
import { requestContext } from './request-context.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's X-Request-Id when well-formed, else makes one; echoes it and logs the request. */
export function requestIdMiddleware(logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    const ctx = { requestId } as { requestId: string; userId?: string };
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        { request_id: requestId, user_id: ctx.userId, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, duration_ms: Math.round(ms * 10) / 10 },
        'request',
      );
    });
    requestContext.run(ctx, () => next());
  };
}

/**
 * JSON, form and JSON Lines body parsing whose failures are problem+json: malformed JSON is 400,
 * a body over the limit 413, a charset or encoding it cannot read 415.
 */
export function bodyParsers(limit: string): RequestHandler[] {
  const wrap = (parser: RequestHandler): RequestHandler => (req, res, next) =>
    parser(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; status?: number; message?: string; limit?: number };
      if (e.type === 'entity.too.large') {
        return writeProblem(res, buildProblem(CommonErrors.payload_too_large, `The body exceeds the limit of ${limit}`, { limit_bytes: e.limit }));
      }
      if (e.type === 'entity.parse.failed') {
        return writeProblem(res, buildProblem(CommonErrors.malformed_json, `The body is not valid JSON: ${e.message}`));
      }
      if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported') {
        return writeProblem(res, buildProblem(CommonErrors.unsupported_media_type, e.message ?? 'Unsupported body encoding'));
      }
      return writeProblem(res, buildProblem(CommonErrors.validation_failed, e.message ?? 'The body could not be read'));
    });
  return [
    wrap(express.json({ limit, type: ['application/json', 'application/*+json'] })),
    wrap(express.urlencoded({ limit, extended: false })),
    // JSON Lines stay text here; the routes that take them (declared by @ApiConsumes) parse the lines.
    wrap(express.text({ limit, type: ['application/x-ndjson', 'application/jsonl'] })),
  ];
}
