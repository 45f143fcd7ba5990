import { applyDecorators, createParamDecorator, type ExecutionContext, UseInterceptors } from '@nestjs/common';
import type { Request } from 'express';
import { ValidationFailedError } from './domain-error.js';
import { IfMatchPrecondition, IfNoneMatchCondition } from './etag.js';
import { ResponseHeaderInterceptor } from './response-header.interceptor.js';

/** The longest If-Match or If-None-Match the service reads (a list of entity tags; the document's `maxLength`). */
export const ENTITY_TAGS_MAX = 1024;

/** A conditional header's value, refused with 400 naming it when longer than `ENTITY_TAGS_MAX`. */
function conditionalHeader(
  context: ExecutionContext,
  name: 'If-Match' | 'If-None-Match',
): string | string[] | undefined {
  const value = context.switchToHttp().getRequest<Request>().headers[name.toLowerCase()];
  if ([value ?? ''].flat().join(',').length > ENTITY_TAGS_MAX) {
    const message = `${name} must be at most ${ENTITY_TAGS_MAX} characters`;
    throw new ValidationFailedError(message, [{ field: name, message }]);
  }
  return value;
}

/** The request's If-Match as an `IfMatchPrecondition`, for the service to check: HTTP ends at the controller. */
export const IfMatch = createParamDecorator((_: unknown, context: ExecutionContext): IfMatchPrecondition =>
  IfMatchPrecondition.of(conditionalHeader(context, 'If-Match')),
);

/** The request's If-None-Match as an `IfNoneMatchCondition`. */
export const IfNoneMatch = createParamDecorator((_: unknown, context: ExecutionContext): IfNoneMatchCondition =>
  IfNoneMatchCondition.of(conditionalHeader(context, 'If-None-Match')),
);

/**
 * Answers with an `ETag` header computed from the returned record, e.g.
 * `@WithETag(userEtag)` on the reads and writes of a record that takes If-Match.
 */
export function WithETag<T>(etagOf: (body: T) => string): MethodDecorator {
  return applyDecorators(UseInterceptors(new ResponseHeaderInterceptor('ETag', etagOf)));
}
