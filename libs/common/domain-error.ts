import { CommonErrors, errorCodeDefinition } from './error-codes.js';

/**
 * A failure the service means to report. Knows nothing of HTTP beyond its code: the
 * exception filter maps the code to a status through the error code registry.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly detail: string,
    /** Extra problem+json members (RFC 9457 extensions), e.g. `errors` or `available`. */
    readonly extensions: Record<string, unknown> = {},
    /** Extra response headers, e.g. Retry-After or Allow. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    if (!errorCodeDefinition(code)) throw new Error(`unregistered error code ${code}`);
    this.name = 'DomainError';
  }
}

export class NotFoundError extends DomainError {
  constructor(kind: string, id?: string) {
    super(CommonErrors.not_found, id ? `${kind} ${id} was not found` : `${kind} was not found`, { resource: kind });
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail = 'Your role does not allow this operation') {
    super(CommonErrors.forbidden, detail);
  }
}

export class ConflictError extends DomainError {
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(CommonErrors.conflict, detail, extensions);
  }
}

export class ValidationFailedError extends DomainError {
  constructor(detail: string, errors: Array<{ field: string; message: string }> = []) {
    super(CommonErrors.validation_failed, detail, { errors });
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(detail = 'A valid bearer token is required') {
    super(CommonErrors.unauthenticated, detail, {}, { 'WWW-Authenticate': 'Bearer' });
  }
}
