import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { DomainError } from '#libs/common/domain-error.js';
import { RunErrors } from './runs.errors.js';

/**
 * Turns a JSON Lines upload (application/x-ndjson: one output object per line) into the JSON
 * body the route validates, `{results: [...]}`, before validation runs; a line that is not JSON
 * is 400 naming its number.
 */
@Injectable()
export class NdjsonBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    if (typeof req.body === 'string') {
      const results: unknown[] = [];
      req.body.split('\n').forEach((line, i) => {
        if (!line.trim()) return;
        try {
          results.push(JSON.parse(line));
        } catch (err) {
          throw new DomainError(RunErrors.upload_invalid, `line ${i + 1} is not JSON: ${(err as Error).message}`, {
            line: i + 1,
          });
        }
      });
      req.body = { results };
    }
    return next.handle();
  }
}
