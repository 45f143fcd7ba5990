import type { OpenAPIObject } from '@nestjs/swagger';
import { allErrorCodes, CODE_FOR_STATUS, CommonErrors, errorCodeDefinition } from './error-codes.js';
import { EXAMPLE_ID } from './openapi-examples.js';
import { buildProblem, PROBLEM_CONTENT_TYPE } from './problem.js';
import { UUID_PATH_PARAMETERS } from './uuid-param.js';

type Paths = OpenAPIObject['paths'];
type PathItem = Paths[string];
type Operation = NonNullable<PathItem['get']>;
type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Record<string, unknown>;
};
type Response = {
  description: string;
  content?: Record<string, { schema?: unknown; example?: unknown; examples?: Record<string, { $ref: string }> }>;
  headers?: Record<string, unknown>;
};
type Access = { rule?: string; from?: { param?: string } };
/** The parts of an OpenAPI 3.0 schema object an example is composed from. */
export type SchemaObject = {
  $ref?: string;
  example?: unknown;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, SchemaObject>;
  items?: SchemaObject;
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  [keyword: string]: unknown;
};
type MediaType = { schema?: SchemaObject; example?: unknown; examples?: unknown };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const PROBLEM_SCHEMA = '#/components/schemas/ProblemResponse';
/** Media types whose example is a JSON value composed from the schema (not multipart files or JSON Lines). */
const COMPOSED_MEDIA_TYPE = /^application\/(json|x-www-form-urlencoded|[\w.-]+\+json)$/;

/** A realistic `detail` for the codes a client meets most; the others show the catalogue's line. */
const EXAMPLE_DETAILS: Record<string, { detail: string; extensions?: Record<string, unknown> }> = {
  [CommonErrors.validation_failed]: {
    detail: 'name must be shorter than or equal to 200 characters',
    extensions: { errors: [{ field: 'name', message: 'name must be shorter than or equal to 200 characters' }] },
  },
  [CommonErrors.malformed_json]: { detail: 'Unexpected token } in JSON at position 17' },
  [CommonErrors.json_too_deep]: { detail: 'The JSON body nests deeper than 64 levels', extensions: { max_depth: 64 } },
  [CommonErrors.invalid_identifier]: { detail: 'dataset_id must be a UUID' },
  [CommonErrors.unauthenticated]: { detail: 'The bearer token has expired' },
  [CommonErrors.forbidden]: {
    detail: 'This operation needs the member role or above in the workspace; you are viewer',
  },
  [CommonErrors.not_found]: {
    detail: 'dataset 6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c was not found',
    extensions: { resource: 'dataset' },
  },
  [CommonErrors.conflict]: {
    detail: 'The record refers to, or is referred to by, another record that does not allow this change',
  },
  [CommonErrors.unique_violation]: { detail: 'A record with the same workspace_id, name already exists' },
  [CommonErrors.precondition_failed]: { detail: 'If-Match "W/\\"3\\"" does not match the current ETag "W/\\"4\\""' },
  [CommonErrors.payload_too_large]: { detail: 'The body exceeds the limit of 10 MB for this operation' },
  [CommonErrors.unsupported_media_type]: {
    detail: 'Content-Type text/plain is not accepted here; send application/json',
    extensions: { accepted: ['application/json'] },
  },
  [CommonErrors.rate_limited]: {
    detail: 'Too many failed logins; try again in 60 seconds',
    extensions: { retry_after_seconds: 60 },
  },
  [CommonErrors.rate_limit_exceeded]: {
    detail: 'Too many write requests: this API key may send 300 in 60 s; retry in 42 s',
    extensions: { policy: 'write', quota: 300, window_seconds: 60, retry_after_seconds: 42 },
  },
  [CommonErrors.service_unavailable]: { detail: 'The database is not reachable; retry shortly' },
};

const DESCRIPTIONS: Record<string, string> = {
  '400': 'The request failed validation (body, query or path); `errors` lists each offending field',
  '401': 'Missing, invalid, expired or revoked token',
  '404': 'The record does not exist',
  '409': 'The change conflicts with the current state (a duplicate name, a record still in use)',
  '413': 'The body exceeds the documented size limit',
  '415': 'The Content-Type is not one this operation accepts',
  '429':
    "rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After",
  '503': 'The database or the queue does not answer; retry after the seconds in Retry-After',
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', example: 5 } },
};

/** The rate-limit fields of every counted answer (draft-ietf-httpapi-ratelimit-headers; docs/api-conventions.md). */
const RATE_LIMIT_HEADER_COMPONENTS = {
  'RateLimit-Policy': {
    description:
      "The quota of this operation's class (`read`, `write`, `ingestion` or `login`) for the caller: `q` requests per window of `w` seconds",
    schema: { type: 'string', maxLength: 64, example: '"write";q=300;w=60' },
  },
  RateLimit: {
    description: 'What remains of that quota: `r` requests, until the window resets in `t` seconds',
    schema: { type: 'string', maxLength: 64, example: '"write";r=287;t=42' },
  },
};
/** What each 2xx and 4xx answer refers to, once in `components.headers`. */
const RATE_LIMIT_HEADERS = Object.fromEntries(
  Object.keys(RATE_LIMIT_HEADER_COMPONENTS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

/** An example problem body for one error code, as the exception filter would write it. */
export function exampleProblem(code: string): Record<string, unknown> {
  const def = errorCodeDefinition(code);
  if (!def) throw new Error(`no error code ${code} in the catalogue`);
  const sample = EXAMPLE_DETAILS[code];
  return {
    ...buildProblem(code, sample?.detail ?? def.description, sample?.extensions),
    request_id: EXAMPLE_ID.request,
  };
}

export interface CompletionOptions {
  /** A description for every tag an operation uses. */
  tags: Record<string, string>;
  servers: Array<{ url: string; description?: string }>;
}

/**
 * What Nest's explorer leaves out of the document, filled from the routes' own metadata so the
 * document and the service cannot disagree:
 * - every `{name}` of a path declared as a path parameter (a UUID where the route validates one);
 * - protected operations accept the bearer token whichever way Swagger UI obtained it (pasted, or
 *   the OAuth2 password flow);
 * - every error status an operation can answer, as application/problem+json with the problem
 *   schema and one example per error code (from the error-code registry; a response whose
 *   description names codes, e.g. "rate_limited: …; auth_busy: …", gets an example of each);
 * - an example of every JSON (and form) request body that has none, composed from its schema's
 *   property examples (`composeExample`);
 * - tag descriptions (from `options.tags`) and `servers`.
 */
export function completeOpenApiDocument(document: OpenAPIObject, options: CompletionOptions): OpenAPIObject {
  const used = new Set<string>();
  const usedCodes = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const tag of operation.tags ?? []) used.add(tag);
      describeOperation(operation);
      declarePathParameters(path, operation);
      acceptEveryBearer(operation);
      declareErrors(path, method, operation, usedCodes);
      exampleRequestBody(operation, document.components?.schemas as Record<string, SchemaObject> | undefined);
    }
  }
  // A tag without a description (a test module's) is listed bare; openapi-drift requires one for every served tag.
  document.tags = [...used].map((name) => (options.tags[name] ? { name, description: options.tags[name] } : { name }));
  document.servers = options.servers;
  // One example problem per error code, referenced by every response that can carry it.
  const components = (document.components ??= {}) as {
    examples?: Record<string, unknown>;
    headers?: Record<string, unknown>;
  };
  components.headers = { ...components.headers, ...RATE_LIMIT_HEADER_COMPONENTS };
  components.examples = {
    ...components.examples,
    ...Object.fromEntries(
      [...usedCodes]
        .sort()
        .map((code) => [exampleName(code), { summary: errorCodeDefinition(code)!.title, value: exampleProblem(code) }]),
    ),
  };
  return document;
}

/**
 * The route's doc comment arrives whole as the summary: Swagger UI and generators want a short
 * summary (one line in the operation list, a method's doc title) and the rest as description.
 */
function describeOperation(operation: Operation): void {
  const text = (operation.summary ?? '').replace(/\s*\n\s*/g, ' ').trim();
  if (!text || operation.description) return;
  const first = /^(.+?[.!?])(?:\s+(?=[A-Z`(])|$)/.exec(text)?.[1] ?? text;
  operation.summary = first.replace(/\.$/, '');
  operation.description = text;
}

function declarePathParameters(path: string, operation: Operation): void {
  const access = (operation as { 'x-access'?: Access })['x-access'];
  const parameters = (operation.parameters ??= []) as Parameter[];
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  for (const name of names) {
    let parameter = parameters.find((p) => p.in === 'path' && p.name === name);
    if (!parameter) {
      parameter = { name, in: 'path', required: true };
      parameters.splice(names.indexOf(name), 0, parameter);
    }
    const uuid = UUID_PATH_PARAMETERS.has(name) || access?.from?.param === name;
    parameter.schema = uuid ? { type: 'string', format: 'uuid' } : { type: 'string', ...(parameter.schema ?? {}) };
    if (uuid) parameter.description ??= `The ${name.replace(/_id$/, '').replace(/_/g, ' ')}'s id`;
  }
}

function acceptEveryBearer(operation: Operation): void {
  const security = operation.security ?? [];
  if (
    security.some((requirement) => 'bearer' in requirement) &&
    !security.some((requirement) => 'oauth2' in requirement)
  ) {
    operation.security = [...security, { oauth2: [] }];
  }
}

function declareErrors(
  path: string,
  method: (typeof METHODS)[number],
  operation: Operation,
  usedCodes: Set<string>,
): void {
  const access = (operation as { 'x-access'?: Access })['x-access'];
  const responses = operation.responses as Record<string, Response>;
  const parameters = (operation.parameters ?? []) as Parameter[];
  const body = operation.requestBody as { content?: Record<string, unknown> } | undefined;
  const isPublic = access?.rule === 'public';
  const liveness = path === '/live';

  const add = (status: string) => {
    responses[status] ??= { description: DESCRIPTIONS[status] };
  };
  if (body || parameters.some((p) => p.in === 'path' || p.in === 'query')) add('400');
  if (!isPublic) add('401');
  if (parameters.some((p) => p.in === 'path')) add('404');
  if (method !== 'get' && access?.rule === 'workspace') add('409');
  // Any body sent to a POST, PUT or PATCH meets the size limit and the media-type check, even
  // where the operation takes none.
  if (body || method === 'post' || method === 'put' || method === 'patch') {
    add('413');
    add('415');
  }
  add('429');
  if (!liveness) add('503');
  // Every request is counted against its caller's quota for the operation's class (libs/auth/rate-limits.ts).
  const record = operation as { 'x-rate-limit'?: string };
  record['x-rate-limit'] ??= method === 'get' ? 'read' : 'write';

  for (const [status, response] of Object.entries(responses)) {
    if (/^[24]\d\d$/.test(status)) response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS };
    if (!/^[45]\d\d$/.test(status)) continue;
    if (status === '429' && !/\brate_limit_exceeded\b/.test(response.description))
      response.description = `${response.description}; ${DESCRIPTIONS['429']}`;
    const codes = codesFor(status, response.description, {
      body,
      query: parameters.some((p) => p.in === 'query'),
      uuidPath: parameters.some((p) => p.in === 'path' && (p.schema as { format?: string })?.format === 'uuid'),
    });
    for (const code of codes) usedCodes.add(code);
    const schema = Object.values(response.content ?? {})[0]?.schema as { $ref?: string } | undefined;
    if (schema?.$ref && schema.$ref !== PROBLEM_SCHEMA) {
      // A problem of its own shape (GET /ready's 503 with `checks`): its schema's examples stand.
      response.content = { [PROBLEM_CONTENT_TYPE]: { schema } };
    } else {
      const examples = Object.fromEntries(
        codes.map((code) => [code, { $ref: `#/components/examples/${exampleName(code)}` }]),
      );
      response.content = {
        [PROBLEM_CONTENT_TYPE]: { schema: { $ref: PROBLEM_SCHEMA }, ...(codes.length ? { examples } : {}) },
      };
    }
    if (status === '503' || status === '429') response.headers = { ...RETRY_AFTER, ...response.headers };
  }
}

/** The error codes a response stands for: those its description names, else the status's default. */
function exampleName(code: string): string {
  return `problem_${code}`;
}

function codesFor(
  status: string,
  description: string | undefined,
  shape: { body: unknown; query: boolean; uuidPath: boolean },
): string[] {
  const words = new Set(description?.match(/\w+/g));
  const named = allErrorCodes()
    .filter((c) => String(c.status) === status && words.has(c.code))
    .map((c) => c.code);
  if (named.length) return named;
  if (status === '400') {
    return [
      ...(shape.body || shape.query ? [CommonErrors.validation_failed] : []),
      ...(shape.uuidPath ? [CommonErrors.invalid_identifier] : []),
      ...(shape.body ? [CommonErrors.malformed_json, CommonErrors.json_too_deep] : []),
    ];
  }
  if (status === '409') return [CommonErrors.conflict, CommonErrors.unique_violation];
  const fallback = CODE_FOR_STATUS[Number(status)];
  return fallback ? [fallback] : [];
}

/** Gives each JSON or form content of the request body without an example one composed from its schema. */
function exampleRequestBody(operation: Operation, schemas: Record<string, SchemaObject> = {}): void {
  const body = operation.requestBody as { content?: Record<string, MediaType> } | undefined;
  for (const [type, media] of Object.entries(body?.content ?? {})) {
    if (!media.schema || media.example !== undefined || media.examples !== undefined || !COMPOSED_MEDIA_TYPE.test(type))
      continue;
    const example = composeExample(media.schema, schemas);
    if (example !== undefined) media.example = structuredClone(example);
  }
}

/**
 * An example value of `schema`, composed from the examples its parts carry: the schema's own
 * `example`, else (through `$ref`, `allOf`, the first of `oneOf`/`anyOf`) an object of its
 * properties' examples, an array of one example item, or the `default` or first `enum` value.
 * Undefined when nothing in the schema gives one; a property without one is left out (a required
 * one too, which the example-validating contract test then reports).
 */
export function composeExample(
  schema: SchemaObject | undefined,
  schemas: Record<string, SchemaObject>,
  seen: ReadonlySet<string> = new Set(),
): unknown {
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    // A schema that contains itself: stop at the second visit.
    return seen.has(name) ? undefined : composeExample(schemas[name], schemas, new Set(seen).add(name));
  }
  if (schema.allOf) {
    const parts = schema.allOf.map((part) => composeExample(part, schemas, seen)).filter((part) => part !== undefined);
    if (parts.length === 1 && !schema.properties) return parts[0];
    const own = schema.properties ? composeExample({ properties: schema.properties }, schemas, seen) : undefined;
    const objects = [...parts, own].filter((part): part is Record<string, unknown> => isPlainObject(part));
    return objects.length ? Object.assign({}, ...objects) : undefined;
  }
  for (const alternative of schema.oneOf ?? schema.anyOf ?? []) {
    const example = composeExample(alternative, schemas, seen);
    if (example !== undefined) return example;
  }
  if (schema.properties) {
    const entries = Object.entries(schema.properties)
      .map(([name, property]) => [name, composeExample(property, schemas, seen)] as const)
      .filter(([, value]) => value !== undefined);
    if (entries.length) return Object.fromEntries(entries);
  }
  if (schema.items) {
    const item = composeExample(schema.items, schemas, seen);
    if (item !== undefined) return [item];
  }
  if (schema.default !== undefined) return schema.default;
  return schema.enum?.[0];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
