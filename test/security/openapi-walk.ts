import type supertest from 'supertest';
import type { Test } from 'supertest';
import { admitsNull } from '#libs/common/openapi-nullable.js';
import { HTTP_METHODS, type OpenApiDocument, type OpenApiOperation } from '../contract/support/spec-operations.js';

export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  nullable?: boolean;
  example?: unknown;
};

export interface WalkedOperation {
  method: string;
  /** OpenAPI path, e.g. /datasets/{dataset_id}/dimensions:assign */
  path: string;
  operation: OpenApiOperation;
  rule: string;
  /** The media type of the request body, when the operation takes one. */
  consumes?: string;
  bodySchema?: Schema;
  pathParams: string[];
  queryParams: Array<{ name: string; required: boolean; schema: Schema }>;
}

/** Every operation of the served document with what a caller needs to build a request. */
export function walk(document: OpenApiDocument): WalkedOperation[] {
  const ops: WalkedOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = (operation.parameters ?? []) as Array<{
        name: string;
        in: string;
        required?: boolean;
        schema?: Schema;
      }>;
      const content =
        (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content ?? {};
      const consumes = Object.keys(content)[0];
      ops.push({
        method: method.toUpperCase(),
        path,
        operation,
        rule: operation['x-access']?.rule ?? 'none',
        consumes,
        bodySchema: consumes ? content[consumes].schema : undefined,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, required: p.required === true, schema: p.schema ?? {} })),
      });
    }
  }
  return ops;
}

export function resolve(document: OpenApiDocument, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  // A nullable reference (`anyOf: [{$ref}, null]`, libs/common/openapi-nullable.ts) stands for its reference.
  const referenced = s.anyOf?.filter((alternative) => !admitsNull(alternative));
  if (referenced?.length === 1 && s.anyOf!.length === 2) s = referenced[0];
  for (let i = 0; s.$ref && i < 20; i++)
    s = (document.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')] ?? {}) as Schema;
  if (s.allOf?.length)
    return s.allOf
      .map((part) => resolve(document, part))
      .reduce(
        (a, b) => ({
          ...a,
          ...b,
          properties: { ...a.properties, ...b.properties },
          required: [...(a.required ?? []), ...(b.required ?? [])],
        }),
        {},
      );
  return s;
}

/**
 * A minimal valid value for a schema: required properties only, the first enum value, the
 * smallest allowed number. `ids` supplies UUIDs by property name (workspace_id, dataset_id…).
 */
export function sample(
  document: OpenApiDocument,
  schema: Schema | undefined,
  ids: (name: string) => string | undefined,
  name = '',
  depth = 0,
): unknown {
  const s = resolve(document, schema);
  if (depth > 6) return undefined;
  if (s.enum?.length) return s.enum[0];
  if (s.oneOf?.length) return sample(document, s.oneOf[0], ids, name, depth + 1);
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const prop of s.required ?? []) out[prop] = sample(document, s.properties?.[prop], ids, prop, depth + 1);
      return out;
    }
    case 'array':
      return s.minItems ? [sample(document, s.items, ids, name, depth + 1)] : [];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (s.format === 'uuid' || name.endsWith('_id')) return ids(name) ?? '00000000-0000-4000-8000-000000000000';
      // A documented example satisfies rules the generator cannot (a `pattern`, a colour, a URL scheme).
      if (typeof s.example === 'string') return s.example;
      if (s.format === 'email' || name.includes('email'))
        return `walk-${Math.random().toString(36).slice(2, 8)}@example.com`;
      if (s.format === 'date-time') return new Date().toISOString();
      if (s.format === 'uri' || s.format === 'url' || /(^|_)url$/.test(name)) return 'https://walk.example.com/v1';
      if (s.format === 'binary') return 'binary';
      if (name === 'password' || name.includes('password')) return 'walk-password-1234';
      return 'walk-sample';
    default:
      return s.properties ? sample(document, { ...s, type: 'object' }, ids, name, depth) : 'walk-sample';
  }
}

/**
 * Rules between members that a schema cannot state, merged into the generated body of these
 * operations (keyed `METHOD /path` as the document spells it) so that it is valid. Add one when
 * an operation's minimal body is refused with 400 for a reason other than the field under test.
 */
export const BODY_HINTS: Record<string, (ids: (name: string) => string | undefined) => Record<string, unknown>> = {
  // config_ref is accepted only with provider `remote`.
  'PUT /workspaces/{workspace_id}/embedding-config': (ids) => ({ provider: 'remote', config_ref: ids('config_ref') }),
  // Exactly one of user_id and email.
  'POST /workspaces/{workspace_id}/members': (ids) => ({ user_id: ids('user_id') }),
  // Exactly one of row_ids and rule.
  'POST /datasets/{dataset_id}/dimensions:assign': () => ({ rule: { field: 'answer', op: 'eq', value: 4 } }),
  // A connection's transport must fit its kind; offline needs none.
  'POST /suts/{sut_id}/connections': () => ({ kind: 'offline' }),
  // Paths must parse in their language.
  'POST /suts/{sut_id}/connections/{connection_id}/adapter': () => ({
    request: {},
    response: { language: 'jmespath', output: 'answer' },
  }),
  // A plan is attached by its id or name.
  'POST /projects/{project_id}/test-plan': (ids) => ({ test_plan: ids('ref') }),
  'PUT /projects/{project_id}/test-plan': (ids) => ({ test_plan: ids('ref') }),
  // The metric must exist for its kind.
  'POST /metric-configs': () => ({ metric: 'exact_match' }),
  // A default pins a config that computes the metric.
  'POST /workspaces/{workspace_id}/metric-config-defaults': (ids) => ({
    defaults: [{ metric_name: ids('config_name'), config_name: ids('config_name') }],
  }),
  // Metrics must name the workspace's configs or built-ins.
  'POST /eval-configs': (ids) => ({ metrics: [{ config_name: ids('config_name') }] }),
  'PUT /eval-configs/{eval_config_id}': (ids) => ({ metrics: [{ config_name: ids('config_name') }] }),
  // An op is served by one of the workspace's custom ops.
  'POST /ops': (ids) => ({ name: 'walk_op', custom_op: ids('name') }),
  'POST /workspaces/{workspace_id}/ops': (ids) => ({ name: 'walk_op', custom_op: ids('name') }),
  // A template adapter needs its column templates.
  'POST /sdg/adapters': () => ({ kind: 'template', columns: { question: 'q{{index}}' } }),
  // A run writes into a dataset of the workspace.
  'POST /sdg/adapters/{adapter_id}/runs': (ids) => ({ target_dataset_id: ids('dataset_id') }),
  // Runs name metrics to score with.
  'POST /runs': () => ({ metrics: ['exact_match'] }),
  // A user's token names the workspace feedback goes to (an API key's own is used otherwise).
  'POST /traces/feedback': (ids) => ({ workspace_id: ids('workspace_id') }),
  'POST /traces/feedback:batch': (ids) => ({ workspace_id: ids('workspace_id') }),
  // An online evaluator scores a trace dataset with at least one metric; a backfill's range runs forwards.
  'POST /online-evaluators': (ids) => ({ dataset_id: ids('trace_dataset_id'), metrics: [{ name: 'exact_match' }] }),
  'POST /online-evaluators/{evaluator_id}/backfills': () => ({
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-02T00:00:00Z',
  }),
  // A custom op's endpoint that refuses at once, so its queued health check ends fast.
  'POST /workspaces/{workspace_id}/custom_ops': () => ({ endpoint_url: 'http://127.0.0.1:9/score', timeout_ms: 200 }),
};

/** A plausible valid body for an operation: `sample()` of its request schema plus its BODY_HINTS. */
export function validBody(
  document: OpenApiDocument,
  op: WalkedOperation,
  ids: (name: string) => string | undefined,
): unknown {
  if (!op.bodySchema) return undefined;
  const body = sample(document, op.bodySchema, ids);
  const key = `${op.method} ${op.path}`;
  const hint = Object.hasOwn(BODY_HINTS, key) ? BODY_HINTS[key] : undefined;
  return hint && body && typeof body === 'object' && !Array.isArray(body) ? { ...body, ...hint(ids) } : body;
}

/** Path parameters that name a built-in entry, the same for every tenant, on these paths (elsewhere the name is a tenant's record). */
const FIXED_PATH_VALUES: Record<string, Record<string, string>> = { '/templates/{name}': { name: 'summarisation' } };

/** Path parameters whose record is of another kind on these paths than the fixture of the same name: the fixture to use instead. */
const PATH_FIXTURES: Record<string, Record<string, string>> = {
  '/datasets/{dataset_id}/versions/{version_id}/quality-checks/runs/{run_id}': { run_id: 'quality_run_id' },
  '/datasets/{dataset_id}/versions/{version_id}/analysis-runs/{run_id}': { run_id: 'analysis_run_id' },
  '/datasets/{dataset_id}/versions/{version_id}/cluster-runs/{run_id}': { run_id: 'cluster_run_id' },
  '/datasets/{dataset_id}/versions/{version_id}/cluster-runs/{run_id}/result': { run_id: 'cluster_run_id' },
  '/sdg/adapters/{adapter_id}/runs/{run_id}': { run_id: 'sdg_run_id' },
  // A live stream lasts until its run ends: the suites stream an ended run, whose stream ends after the backlog.
  '/runs/{run_id}/events/stream': { run_id: 'ended_run_id' },
  '/traces/connections/{connection_id}/land': { connection_id: 'trace_connection_id' },
  '/traces/runs/{run_id}': { run_id: 'trace_run_id' },
  '/traces/datasets/{dataset_id}/live': { dataset_id: 'trace_dataset_id' },
  '/traces/datasets/{dataset_id}/live:seal': { dataset_id: 'trace_dataset_id' },
  '/traces/datasets/{dataset_id}/retention': { dataset_id: 'trace_dataset_id' },
  '/traces/runs/{run_id}/drops': { run_id: 'trace_run_id' },
  '/traces/versions/{version_id}/drops': { version_id: 'trace_version_id' },
  '/traces/versions/{version_id}/ground-truth': { version_id: 'trace_version_id' },
  '/traces/versions/{version_id}:promote': { version_id: 'trace_version_id' },
  ...Object.fromEntries(
    [
      'topology',
      'trace-enrichment',
      'trace-enrichment/results',
      'trace-enrichment:recompute',
      'trace-tags',
      'span-tree/children',
      'span-tree/by-depth',
    ].map((suffix) => [
      `/datasets/{dataset_id}/versions/{version_id}/${suffix}`,
      { dataset_id: 'trace_dataset_id', version_id: 'trace_version_id' },
    ]),
  ),
};

/** The fixture that fills `{param}` of `path`. */
export function fixtureFor(path: string, param: string): string {
  return PATH_FIXTURES[path]?.[param] ?? param;
}

/** Whether `{param}` of `path` names a built-in entry (the same for every tenant) rather than a record. */
export function isFixedParam(path: string, param: string): boolean {
  return FIXED_PATH_VALUES[path]?.[param] !== undefined;
}

/** Fills `{param}` from `values`; throws naming a parameter it has no value for. */
export function fillParams(path: string, values: (param: string) => string | undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_, param: string) => {
    const value = FIXED_PATH_VALUES[path]?.[param] ?? values(fixtureFor(path, param));
    if (value === undefined)
      throw new Error(`no fixture for path parameter {${param}} (${path}): add one to test/security/fixtures.ts`);
    return encodeURIComponent(value);
  });
}

/** Sends one walked operation with its body (JSON, or a small CSV file for multipart uploads). */
export function request(
  http: ReturnType<typeof supertest>,
  op: WalkedOperation,
  url: string,
  body: unknown,
  auth?: Record<string, string>,
  workspaceId?: string,
): Test {
  const verb = op.method.toLowerCase() as (typeof HTTP_METHODS)[number];
  let req = http[verb](url);
  if (auth) req = req.set(auth);
  // Protocol routes (OTLP/HTTP) name the workspace in a header when the caller is a user, not an API key.
  const header = (op.operation['x-access'] as { from?: { apiKeyOrHeader?: string } } | undefined)?.from?.apiKeyOrHeader;
  if (header && workspaceId) req = req.set(header, workspaceId);
  if (op.consumes === 'multipart/form-data')
    return req.attach('file', Buffer.from('question,answer\nq,a\n'), 'walk.csv');
  if (op.consumes) return req.send(body as object);
  return req;
}

/** A member a request body can hold, found by walking its schema: `path` from the body's root (`0` for a list's element). */
export interface BodyMember {
  path: Array<string | number>;
  schema: Schema;
  /** Not in its object's `required` (a list element counts as required). */
  optional: boolean;
  /** Documented `nullable` (beside a `$ref` or `allOf` too, which `schema`, resolved, no longer shows). */
  nullable: boolean;
}

/**
 * Every member of a request body schema down to `maxDepth` levels, optional ones too: what the
 * fuzzer's hostile variants aim at (a string for an unpaired surrogate, an optional member for
 * null, a list of objects for an array in an object's place, a number for an extreme value).
 */
export function bodyMembers(document: OpenApiDocument, schema: Schema | undefined, maxDepth = 5): BodyMember[] {
  const out: BodyMember[] = [];
  const visit = (node: Schema | undefined, path: Array<string | number>, depth: number) => {
    const s = resolve(document, node);
    if (depth >= maxDepth) return;
    if (s.type === 'array' && s.items) {
      const item = resolve(document, s.items);
      out.push({
        path: [...path, 0],
        schema: item,
        optional: false,
        nullable: s.items.nullable === true || item.nullable === true,
      });
      visit(s.items, [...path, 0], depth + 1);
      return;
    }
    for (const [name, child] of Object.entries(s.properties ?? {})) {
      const resolved = resolve(document, child);
      // Or an alternative of a oneOf that takes null (how an "any JSON value" member says it, OpenAPI 3.0 having no null type).
      const nullable = admitsNull(child) || admitsNull(resolved);
      out.push({ path: [...path, name], schema: resolved, optional: !(s.required ?? []).includes(name), nullable });
      visit(child, [...path, name], depth + 1);
    }
  };
  visit(schema, [], 0);
  return out;
}

/**
 * `body` with `value` at `path`; containers missing on the way are filled with the schema's
 * minimal sample (a list with one element), so the rest of the body stays as valid as it was.
 */
export function withValueAt(
  document: OpenApiDocument,
  body: unknown,
  schema: Schema | undefined,
  path: Array<string | number>,
  value: unknown,
  ids: (name: string) => string | undefined,
): unknown {
  if (!path.length) return value;
  const s = resolve(document, schema);
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(body) && body.length ? [...body] : [sample(document, s.items, ids, '', 1)];
    list[head] = withValueAt(document, list[head], s.items, rest, value, ids);
    return list;
  }
  const object =
    body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  const child = s.properties?.[head];
  const current =
    head in object
      ? object[head]
      : rest.length
        ? sample(document, { ...resolve(document, child), minItems: 1 }, ids, head, 1)
        : undefined;
  object[head] = withValueAt(document, current, child, rest, value, ids);
  return object;
}
