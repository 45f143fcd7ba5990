import { applyDecorators, createParamDecorator, type ExecutionContext, UseInterceptors } from '@nestjs/common';
import type { Request } from 'express';
import { IfMatchPrecondition, IfNoneMatchCondition } from './etag.js';
import { ResponseHeaderInterceptor } from './response-header.interceptor.js';

/** The request's If-Match as an `IfMatchPrecondition`, for the service to check: HTTP ends at the controller. */
export const IfMatch = createParamDecorator((_: unknown, context: ExecutionContext): IfMatchPrecondition =>
  IfMatchPrecondition.of(context.switchToHttp().getRequest<Request>().headers['if-match']),
);

/** The request's If-None-Match as an `IfNoneMatchCondition`. */
export const IfNoneMatch = createParamDecorator((_: unknown, context: ExecutionContext): IfNoneMatchCondition =>
  IfNoneMatchCondition.of(context.switchToHttp().getRequest<Request>().headers['if-none-match']),
);

/**
 * Answers with an `ETag` header computed from the returned record, e.g.
 * `@WithETag(userEtag)` on the reads and writes of a record that takes If-Match.
 */
export function WithETag<T>(etagOf: (body: T) => string): MethodDecorator {
  return applyDecorators(UseInterceptors(new ResponseHeaderInterceptor('ETag', etagOf)));
}
