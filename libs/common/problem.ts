import type { Response } from 'express';
import { errorCodeDefinition } from './error-codes.js';
import { currentRequestId } from './request-context.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 problem details, with the service's required error_code member. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  error_code: string;
  instance?: string;
  request_id?: string;
  [extension: string]: unknown;
}

export function problemType(code: string): string {
  return `/problems/${code.replace(/_/g, '-')}`;
}

export function buildProblem(
  code: string,
  detail: string,
  extensions: Record<string, unknown> = {},
  instance?: string,
): Problem {
  const def = errorCodeDefinition(code);
  const status = def?.status ?? 500;
  return {
    ...extensions,
    type: problemType(code),
    title: def?.title ?? 'Error',
    status,
    detail,
    error_code: code,
    ...(instance ? { instance } : {}),
    ...(currentRequestId() ? { request_id: currentRequestId() } : {}),
  };
}

/**
 * How a route renders its failures when its protocol has its own error shape (OTLP/HTTP's
 * google.rpc.Status): set on `res.locals.problemWriter` by the route's middleware, before the
 * guard runs, and given the same problem every other route answers as problem+json.
 */
export type ProblemWriter = (res: Response, problem: Problem, headers: Record<string, string>) => void;

export function writeProblem(res: Response, problem: Problem, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const custom = (res.locals as { problemWriter?: ProblemWriter } | undefined)?.problemWriter;
  if (custom) return custom(res, problem, headers);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}
