import { applyDecorators, HttpCode, HttpStatus, type Type, UseInterceptors } from '@nestjs/common';
import { ApiAcceptedResponse } from '@nestjs/swagger';
import { ResponseHeaderInterceptor } from '#libs/common/response-header.interceptor.js';

export interface AcceptedAtOptions<T> {
  /** The response record (its `id` and state), e.g. `RunResponse`. */
  type: Type<T>;
  /** Where to poll, from the returned body, e.g. `(run) => \`/runs/${run.id}\``. */
  location: (body: T) => string;
  description?: string;
}

/**
 * For operations that start asynchronous work: answers 202 with the returned record and a
 * `Location` header to poll, and documents both in the OpenAPI document. The service
 * enqueues the job (in the transaction that creates the record) and returns the record.
 *
 * ```ts
 * @Post()
 * @WorkspaceRoleRequired('member', { body: 'workspace_id' })
 * @AcceptedAt({ type: RunResponse, location: (run) => `/runs/${run.id}` })
 * start(@Body() body: StartRunRequest, @CurrentUser() user: Principal) {
 *   return this.runs.start(body, user);
 * }
 * ```
 */
export function AcceptedAt<T>(options: AcceptedAtOptions<T>): MethodDecorator {
  return applyDecorators(
    HttpCode(HttpStatus.ACCEPTED),
    ApiAcceptedResponse({
      type: options.type,
      description: options.description ?? 'Accepted: the work runs asynchronously; poll the Location for its state.',
      headers: { Location: { description: 'Where to poll the record', schema: { type: 'string' } } },
    }),
    UseInterceptors(new ResponseHeaderInterceptor('Location', options.location)),
  );
}
