import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { DomainError } from './domain-error.js';
import { CODE_FOR_STATUS, CommonErrors } from './error-codes.js';
import { buildProblem, Problem, writeProblem } from './problem.js';
import type { RouteTable } from './route-table.js';

/** PostgreSQL SQLSTATEs the service answers with a client error instead of a 500. */
const PG_CLIENT_ERRORS: Record<string, string> = {
  '23505': CommonErrors.unique_violation,
  '23503': CommonErrors.conflict,
  // ON DELETE RESTRICT: PostgreSQL 17 (the embedded PGlite) reports it as restrict_violation.
  '23001': CommonErrors.conflict,
  '22P02': CommonErrors.validation_failed,
  '22001': CommonErrors.validation_failed,
  // A number past its column's range (DTOs bound every integer; this is the backstop).
  '22003': CommonErrors.validation_failed,
  // A NUL character in text, or a \u0000 escape in JSON: PostgreSQL stores neither.
  '22021': CommonErrors.validation_failed,
  '22P05': CommonErrors.validation_failed,
  '40001': CommonErrors.conflict,
};
// Connection exceptions, shutdowns and resource exhaustion; 08P01 (protocol violation) is a bug, not an outage.
const PG_UNAVAILABLE = /^(08(?!P01)|57P0[1-3]|53)/;
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

interface Mapped {
  problem: Problem;
  headers?: Record<string, string>;
}

/** The one exception filter: every failure leaves the service as application/problem+json. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(
    private readonly logger: Logger,
    private readonly routes?: Pick<RouteTable, 'allowedMethods'>,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const { problem, headers } = this.map(exception, req);
    if (problem.status === 503) {
      this.logger.warn({ err: exception, method: req.method, path: req.originalUrl }, 'dependency unavailable');
    } else if (problem.status >= 500) {
      this.logger.error({ err: exception, method: req.method, path: req.originalUrl }, 'request failed');
    }
    writeProblem(res, problem, headers);
  }

  map(exception: unknown, req: Request): Mapped {
    if (exception instanceof DomainError) {
      return {
        problem: buildProblem(exception.code, exception.detail, exception.extensions),
        headers: exception.headers,
      };
    }
    if (exception instanceof HttpException) return this.mapHttp(exception, req);
    const db = mapDatabaseError(exception);
    if (db) return db;
    return { problem: buildProblem(CommonErrors.internal_error, 'An unexpected error occurred') };
  }

  private mapHttp(exception: HttpException, req: Request): Mapped {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message = typeof body === 'string' ? body : (body as { message?: unknown }).message;
    if (status === HttpStatus.NOT_FOUND && typeof message === 'string' && message.startsWith('Cannot ')) {
      const path = req.path;
      const allowed = this.routes?.allowedMethods(path) ?? [];
      if (allowed.length > 0 && !allowed.includes(req.method)) {
        return {
          problem: buildProblem(
            CommonErrors.method_not_allowed,
            `${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`,
          ),
          headers: { Allow: allowed.join(', ') },
        };
      }
      return { problem: buildProblem(CommonErrors.route_not_found, `No operation answers ${req.method} ${path}`) };
    }
    const code =
      CODE_FOR_STATUS[status] ?? (status >= 500 ? CommonErrors.internal_error : CommonErrors.validation_failed);
    const detail = Array.isArray(message)
      ? message.join('; ')
      : typeof message === 'string'
        ? message
        : exception.message;
    const problem = buildProblem(code, status >= 500 ? 'An unexpected error occurred' : detail);
    problem.status = status >= 500 ? problem.status : status;
    return { problem };
  }
}

export function mapDatabaseError(exception: unknown): Mapped | undefined {
  type PgError = { code?: string; detail?: string; constraint?: string; message?: string };
  const err = exception as PgError & { driverError?: PgError };
  const driver: PgError = err?.driverError ?? err ?? {};
  const sqlState = typeof driver?.code === 'string' ? driver.code : undefined;
  if (sqlState && PG_CLIENT_ERRORS[sqlState]) {
    const code = PG_CLIENT_ERRORS[sqlState];
    const detail =
      sqlState === '23505'
        ? `A record with the same ${describeConstraint(driver.detail)} already exists`
        : sqlState === '23503' || sqlState === '23001'
          ? 'The record refers to, or is referred to by, another record that does not allow this change'
          : sqlState === '40001'
            ? 'A concurrent change conflicted with this one; retry the request'
            : sqlState === '22021' || sqlState === '22P05'
              ? 'A text value holds a character the database cannot store (NUL, U+0000)'
              : sqlState === '22003'
                ? 'A number is out of range for its field'
                : 'A value has the wrong format for its field';
    return { problem: buildProblem(code, detail, driver.constraint ? { constraint: driver.constraint } : {}) };
  }
  const message = String(err?.message ?? '');
  if (
    (sqlState && PG_UNAVAILABLE.test(sqlState)) ||
    (sqlState && NETWORK_ERRORS.has(sqlState)) ||
    /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection|the database system is|timeout exceeded when trying to connect|not currently accepting connections/i.test(
      message,
    )
  ) {
    return {
      problem: buildProblem(CommonErrors.service_unavailable, 'The database is not reachable; retry shortly'),
      headers: { 'Retry-After': '5' },
    };
  }
  return undefined;
}

function describeConstraint(detail?: string): string {
  // "Key (workspace_id, lower(name))=(…) already exists." → "workspace_id, name"
  const match = detail?.match(/^Key \((.+?)\)=\(/);
  return match ? match[1].replace(/\b(?:lower|upper)\(([^()]+)\)/g, '$1') : 'unique key';
}
