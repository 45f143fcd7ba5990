/**
 * The error_code catalogue. Every problem+json body carries one of these codes; the filter
 * maps the code to its HTTP status and title. Families add their own codes with
 * `defineErrorCodes` in their `<family>.errors.ts`; docs/errors.md is generated from the
 * registry (test/contract/error-catalogue.e2e-spec.ts fails when it drifts).
 */
export interface ErrorCodeDefinition {
  status: number;
  title: string;
  /** One line for docs/errors.md: when a client sees this code. */
  description: string;
}

const registry = new Map<string, ErrorCodeDefinition & { family: string }>();

export function defineErrorCodes<K extends string>(
  family: string,
  codes: Record<K, ErrorCodeDefinition>,
): { [P in K]: P } {
  const names = {} as { [P in K]: P };
  for (const [code, def] of Object.entries(codes) as [K, ErrorCodeDefinition][]) {
    const existing = registry.get(code);
    if (existing && (existing.status !== def.status || existing.family !== family)) {
      throw new Error(`error code ${code} is defined twice (${existing.family}, ${family})`);
    }
    registry.set(code, { ...def, family });
    names[code] = code;
  }
  return names;
}

export function errorCodeDefinition(code: string): (ErrorCodeDefinition & { family: string }) | undefined {
  return registry.get(code);
}

export function allErrorCodes(): Array<ErrorCodeDefinition & { code: string; family: string }> {
  return [...registry.entries()]
    .map(([code, def]) => ({ code, ...def }))
    .sort((a, b) => a.family.localeCompare(b.family) || a.status - b.status || a.code.localeCompare(b.code));
}

export const CommonErrors = defineErrorCodes('common', {
  validation_failed: {
    status: 400,
    title: 'Validation failed',
    description: 'The request body, query or path failed validation; `errors` lists each offending field.',
  },
  malformed_json: { status: 400, title: 'Malformed JSON', description: 'The body is not parseable JSON.' },
  json_too_deep: {
    status: 400,
    title: 'JSON nested too deeply',
    description:
      'The JSON body (or a line of a JSON Lines body, named by `line`) nests arrays and objects deeper than `max_depth` (64) levels; it was refused before being parsed.',
  },
  invalid_signature: {
    status: 403,
    title: 'Invalid signature',
    description: 'The signed URL was altered or signed for something else.',
  },
  url_expired: { status: 403, title: 'URL expired', description: 'The signed URL has expired; ask for a new one.' },
  invalid_identifier: {
    status: 400,
    title: 'Invalid identifier',
    description: 'A path or query identifier is not a valid UUID.',
  },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    description: 'No bearer token was sent, or it is malformed, expired or revoked.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    description: 'The caller is authenticated but its role does not allow this operation on this workspace or record.',
  },
  not_found: { status: 404, title: 'Not found', description: 'The record does not exist (or has been deleted).' },
  route_not_found: { status: 404, title: 'Route not found', description: 'No operation answers at this path.' },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but not with this method; the Allow header lists the methods that do.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description:
      "The request did not arrive in full within the server's request timeout (refused before it reached an operation).",
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description: 'The request conflicts with the current state of the record.',
  },
  unique_violation: {
    status: 409,
    title: 'Already exists',
    description: 'A record with the same unique key already exists.',
  },
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    description: "The If-Match header does not match the record's current ETag: someone changed it since you read it.",
  },
  precondition_required: {
    status: 428,
    title: 'Precondition required',
    description: 'This write needs an If-Match header with the ETag you read.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    description: 'The request line and headers (a long URL or query string counts) exceed 16 KB.',
  },
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    description: 'The request is not valid HTTP/1.1 (refused before it reached an operation).',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The body exceeds the documented size limit.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'The Content-Type is not one this operation accepts.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description: 'Too many attempts; retry after the number of seconds in Retry-After.',
  },
  rate_limit_exceeded: {
    status: 429,
    title: 'Rate limit exceeded',
    description:
      'The caller (an API key, a user, or an address where no one is signed in) sent more requests of this class (`read`, `write`, `ingestion`, `login`) than its quota for the window; `policy`, `quota` and `window_seconds` say which, Retry-After when the window resets.',
  },
  internal_error: {
    status: 500,
    title: 'Internal server error',
    description: 'An unexpected failure; the log line with the same request id has the details.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'The database or the queue does not answer; retry later.',
  },
});

/** The code an error of each HTTP status stands for when nothing more specific names one. */
export const CODE_FOR_STATUS: Readonly<Record<number, string>> = {
  400: CommonErrors.validation_failed,
  401: CommonErrors.unauthenticated,
  403: CommonErrors.forbidden,
  404: CommonErrors.not_found,
  405: CommonErrors.method_not_allowed,
  409: CommonErrors.conflict,
  412: CommonErrors.precondition_failed,
  413: CommonErrors.payload_too_large,
  415: CommonErrors.unsupported_media_type,
  428: CommonErrors.precondition_required,
  429: CommonErrors.rate_limited,
  503: CommonErrors.service_unavailable,
};
