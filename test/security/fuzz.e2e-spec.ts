import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { AUDITED_OPERATIONS, AUDITED_READS, AUDITED_WHEN_CHANGED } from '../contract/audited-operations.js';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import { ensureSdkPackage } from '../utils/sdk-package.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import {
  bodyMembers,
  fillParams,
  fixtureFor,
  request,
  resolve,
  sample,
  validBody,
  walk,
  withValueAt,
  type BodyMember,
  type Schema,
  type WalkedOperation,
} from './openapi-walk.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const SEED = 20261122;
const RUNS_PER_OPERATION = 16;
/** Hostile-input runs per operation that takes a JSON body or a numeric query parameter (a second property, so the classic variants keep their share). */
const HOSTILE_RUNS_PER_OPERATION = 6;
/** Operations the fuzzer leaves alone, with why. */
const SKIP: Record<string, string> = {
  'POST /auth/logout': 'would revoke the token the rest of the run uses',
  'POST /auth/sso/logout': 'would revoke the token the rest of the run uses',
};

/** The audit actions test/contract/audited-operations.ts names for an operation; undefined when it writes none. */
function auditedActions(operationId: string): readonly string[] | undefined {
  const entry = AUDITED_OPERATIONS[operationId] ?? AUDITED_READS[operationId];
  return Array.isArray(entry) ? entry : undefined;
}

/** A broken variant of a valid request, or the valid one. */
type Variant =
  | { kind: 'valid' }
  | { kind: 'wrong-type'; prop: number; value: unknown }
  | { kind: 'missing'; prop: number }
  | { kind: 'huge-string'; prop: number }
  | { kind: 'not-an-object'; value: unknown }
  | { kind: 'bad-id'; param: number; value: string }
  | { kind: 'random-id'; param: number }
  | { kind: 'bad-query'; param: number; value: string }
  | { kind: 'malformed-json' }
  | { kind: 'wrong-content-type' }
  | { kind: 'oversize' };

/**
 * Hostile input (docs/security.md): each aims at one member of the body (by index into the
 * members of its kind) or one query parameter, so every shape reaches every place it fits.
 */
type HostileVariant =
  /** The whole body, or one member's value, nested `levels` deep. */
  | { kind: 'deep'; where: 'body' | 'member'; shape: 'array' | 'object'; levels: number; member: number }
  /** A string member holding an unpaired UTF-16 surrogate (a \uD800-\uDFFF escape without its pair). */
  | { kind: 'lone-surrogate'; member: number; text: string }
  /** In a list of objects an array, an empty array, null or a scalar where an element belongs; or an array where an object belongs. */
  | { kind: 'array-for-object'; member: number; shape: 'empty' | 'wrapped' | 'null' | 'scalar' }
  /** null in an optional member. */
  | { kind: 'null-member'; member: number }
  /** A number member set to a value at or past the edges of a double or of 2^53 (raw JSON text: 1e400 is not a JS number). */
  | { kind: 'extreme-number'; member: number; raw: string }
  /** A numeric query parameter set to the same, or to NaN-like text. */
  | { kind: 'extreme-query'; param: number; value: string }
  /** A member one past its documented bound: `maxLength` + 1 characters, `maxItems` + 1 elements, `maximum` + 1. */
  | { kind: 'past-bound'; member: number };

const EXTREME_NUMBERS = [
  '9007199254740993',
  '-9007199254740993',
  '1e308',
  '-1e308',
  '1e-308',
  '1e400',
  '-1e400',
  '2147483648',
  '-0',
];
const EXTREME_QUERY = [
  '9007199254740993',
  '1e308',
  '-1e308',
  '1e400',
  '1e-308',
  'NaN',
  'Infinity',
  '-Infinity',
  '2147483648',
  '0x10',
  '',
];

/** The members of an operation's body each hostile kind can aim at. */
interface Targets {
  strings: BodyMember[];
  objectPlaces: BodyMember[];
  optional: BodyMember[];
  numbers: BodyMember[];
  numericQuery: Array<{ name: string; schema: Schema }>;
  bounded: BodyMember[];
}

/** Bounds one past which a request still fits the body limit (a longer string or list meets 413 first). */
const PAST_BOUND_FITS = { maxLength: 100_000, maxItems: 10_000 };

function targetsOf(document: OpenApiDocument, op: WalkedOperation): Targets {
  const members = op.consumes === 'application/json' ? bodyMembers(document, op.bodySchema) : [];
  const isObject = (m: BodyMember) => m.schema.type === 'object' || (!m.schema.type && !!m.schema.properties);
  return {
    strings: members.filter((m) => m.schema.type === 'string'),
    // A list element or a member whose schema is an object: where an array must not pass for one.
    objectPlaces: members.filter((m) => isObject(m) && m.schema.properties !== undefined),
    optional: members.filter((m) => m.optional),
    numbers: members.filter((m) => m.schema.type === 'integer' || m.schema.type === 'number'),
    numericQuery: op.queryParams.filter((q) => q.schema.type === 'integer' || q.schema.type === 'number'),
    bounded: members.filter(({ schema: s }) =>
      s.type === 'string'
        ? s.maxLength !== undefined && s.maxLength < PAST_BOUND_FITS.maxLength
        : s.type === 'array'
          ? s.maxItems !== undefined && s.maxItems < PAST_BOUND_FITS.maxItems
          : s.type === 'integer' && s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER,
    ),
  };
}

function hostileVariantsFor(op: WalkedOperation, targets: Targets): fc.Arbitrary<HostileVariant> | undefined {
  const arbitraries: Array<fc.Arbitrary<HostileVariant>> = [];
  if (op.consumes === 'application/json') {
    arbitraries.push(
      fc.record({
        kind: fc.constant('deep' as const),
        where: fc.constantFrom('body' as const, 'member' as const),
        shape: fc.constantFrom('array' as const, 'object' as const),
        levels: fc.constantFrom(65, 5_000, 100_000),
        member: fc.nat(),
      }),
    );
    if (targets.strings.length)
      arbitraries.push(
        fc.record({
          kind: fc.constant('lone-surrogate' as const),
          member: fc.nat(),
          text: fc.constantFrom('\ud800', 'x\udfff', '\udc00\ud800', 'ok \ud83d'),
        }),
      );
    // Weighted: few operations have nested objects, and each has several places and four shapes to try.
    if (targets.objectPlaces.length)
      arbitraries.push(
        ...Array.from({ length: 3 }, () =>
          fc.record({
            kind: fc.constant('array-for-object' as const),
            member: fc.nat(),
            shape: fc.constantFrom('empty' as const, 'wrapped' as const, 'null' as const, 'scalar' as const),
          }),
        ),
      );
    if (targets.optional.length)
      arbitraries.push(fc.record({ kind: fc.constant('null-member' as const), member: fc.nat() }));
    if (targets.bounded.length)
      arbitraries.push(fc.record({ kind: fc.constant('past-bound' as const), member: fc.nat() }));
    if (targets.numbers.length)
      arbitraries.push(
        fc.record({
          kind: fc.constant('extreme-number' as const),
          member: fc.nat(),
          raw: fc.constantFrom(...EXTREME_NUMBERS),
        }),
      );
  }
  if (targets.numericQuery.length)
    arbitraries.push(
      fc.record({
        kind: fc.constant('extreme-query' as const),
        param: fc.nat(),
        value: fc.constantFrom(...EXTREME_QUERY),
      }),
    );
  return arbitraries.length ? fc.oneof(...arbitraries) : undefined;
}

/** Serialises `body`, then swaps each placeholder string for raw JSON text (numbers JSON.stringify cannot write, nests it would overflow on). */
function withRaw(body: unknown, raw: Record<string, string>): string {
  let text = JSON.stringify(body === undefined ? {} : body);
  for (const [marker, json] of Object.entries(raw)) text = text.replace(JSON.stringify(marker), () => json);
  return text;
}

const nest = (shape: 'array' | 'object', levels: number) =>
  shape === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const dotted = (path: Array<string | number>) => path.join('.');

/**
 * An OpenAPI 3.0 schema as JSON Schema for ajv: `nullable` becomes a `null` type beside the
 * schema's own, and objects that list their properties admit no others.
 */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'example' ? v : jsonSchema(v)]));
  // A response member the document does not declare is a finding too (it may be a leak: a hash, a ciphertext).
  if (
    out.properties &&
    typeof out.properties === 'object' &&
    out.additionalProperties === undefined &&
    (out.type === 'object' || out.type === undefined)
  )
    out.additionalProperties = false;
  if (nullable !== true) return out;
  // `nullable` beside allOf/oneOf/$ref (the OpenAPI 3.0 idiom for a nullable reference) makes the whole schema nullable.
  if (typeof out.type === 'string' && !out.allOf && !out.oneOf && !out.$ref)
    return {
      ...out,
      type: [out.type, 'null'],
      ...(Array.isArray(out.enum) && !out.enum.includes(null) ? { enum: [...out.enum, null] } : {}),
    };
  return { anyOf: [out, { type: 'null' }] };
}

/** The variants that apply to an operation: body ones when it takes a body, id ones when its path names records, query ones when it reads a query. */
function variantsFor(op: WalkedOperation): fc.Arbitrary<Variant> {
  const takesBody =
    op.consumes === 'application/json' || (!op.consumes && op.method !== 'GET' && op.method !== 'DELETE');
  const arbitraries: Array<fc.Arbitrary<Variant>> = [fc.constant<Variant>({ kind: 'valid' })];
  for (const [kind, arbitrary] of Object.entries(VARIANTS)) {
    const applies = ['wrong-type', 'missing', 'huge-string', 'not-an-object'].includes(kind)
      ? op.consumes === 'application/json'
      : ['malformed-json', 'wrong-content-type', 'oversize'].includes(kind)
        ? takesBody
        : ['bad-id', 'random-id'].includes(kind)
          ? op.pathParams.length > 0
          : kind === 'bad-query'
            ? op.queryParams.length > 0
            : false;
    if (applies) arbitraries.push(arbitrary);
  }
  return fc.oneof(...arbitraries);
}

const VARIANTS: Record<string, fc.Arbitrary<Variant>> = {
  'wrong-type': fc.record({
    kind: fc.constant('wrong-type' as const),
    prop: fc.nat(),
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  missing: fc.record({ kind: fc.constant('missing' as const), prop: fc.nat() }),
  'huge-string': fc.record({ kind: fc.constant('huge-string' as const), prop: fc.nat() }),
  'not-an-object': fc.record({
    kind: fc.constant('not-an-object' as const),
    value: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer())),
  }),
  'bad-id': fc.record({
    kind: fc.constant('bad-id' as const),
    param: fc.nat(),
    value: fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.constant('1 OR 1=1'),
      fc.constant('../../etc/passwd'),
      fc.constant('%00'),
    ),
  }),
  'random-id': fc.record({ kind: fc.constant('random-id' as const), param: fc.nat() }),
  'bad-query': fc.record({
    kind: fc.constant('bad-query' as const),
    param: fc.nat(),
    value: fc.oneof(
      fc.constant('-1'),
      fc.constant('0'),
      fc.constant('1000000'),
      fc.constant('abc'),
      fc.constant('x'.repeat(10_000)),
      fc.constant('[]'),
      fc.string({ maxLength: 20 }),
    ),
  }),
  'malformed-json': fc.constant<Variant>({ kind: 'malformed-json' }),
  'wrong-content-type': fc.constant<Variant>({ kind: 'wrong-content-type' }),
  oversize: fc.constant<Variant>({ kind: 'oversize' }),
};

/**
 * Property-based fuzzing from the served OpenAPI document (OWASP API4, RFC 9457): for every
 * operation, seeded requests, valid and broken (wrong types, missing fields, huge strings, bad
 * and unknown ids, malformed JSON, wrong content types, bodies over the limit), sent by the
 * owner of a workspace with a record of every kind. Every answer must be below 500; every
 * error a problem+json with its five members and `status` equal to the HTTP status; every
 * JSON success must validate against the operation's documented response schema.
 */
describe('security: fuzzing every operation from the OpenAPI document', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;
  let ajv: Ajv;
  const validators = new Map<string, ValidateFunction>();
  /** The request ids of each audited operation's successful calls (docs/audit.md). */
  const succeeded = new Map<string, string[]>();

  beforeAll(async () => {
    await ensureSdkPackage();
    ({ t, document, a } = await startSweep('fuzz'));
    ajv = addFormats(new Ajv({ strict: false, allErrors: false, validateFormats: true }));
    ajv.addSchema({ $id: 'openapi.json', components: jsonSchema(document.components) });
  }, 180_000);
  afterAll(async () => t?.close());

  function responseValidator(op: WalkedOperation, status: number): ValidateFunction | undefined {
    const key = `${op.method} ${op.path} ${status}`;
    if (validators.has(key)) return validators.get(key);
    const schema = (op.operation.responses?.[String(status)]?.content?.['application/json']?.schema ?? undefined) as
      object | undefined;
    const validate = schema
      ? ajv.compile(
          jsonSchema(
            JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi.json#/components/')),
          ) as object,
        )
      : undefined;
    if (validate) validators.set(key, validate);
    return validate;
  }

  it('has a response validator that can fail: a real body passes, one with an undeclared member or without a required one does not', async () => {
    const op = walk(document).find((o) => o.method === 'GET' && o.path === '/workspaces/{workspace_id}')!;
    const validate = responseValidator(op, 200)!;
    const body = (await t.http.get(`/workspaces/${a.workspaceId}`).set(a.owner.auth).expect(200)).body as Record<
      string,
      unknown
    >;
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, password_hash: 'x' })).toBe(false);
    const { id: _, ...withoutId } = body;
    expect(validate(withoutId)).toBe(false);
  });

  it('answers no 5xx, only well-formed problems, and only documented success bodies', async () => {
    const sysadmin = await t.factory.actor({ systemRole: 'admin' });
    const stats = {
      kinds: {} as Record<string, number>,
      hostile: {} as Record<string, number>,
      sent: 0,
      validated: 0,
      fivexx: [] as string[],
      badProblems: [] as string[],
      badBodies: [] as string[],
      undocumentedErrors: [] as string[],
      missingNotRequired: [] as string[],
      hostileMissed: [] as string[],
      hostileMs: 0,
    };
    // Destructive operations last, so the fixtures live for everything else.
    const ops = walk(document)
      .filter((op) => !SKIP[`${op.method} ${op.path}`])
      // Deletes last and deepest first (a partition before its dataset, a member before the workspace).
      .sort(
        (x, y) =>
          Number(x.method === 'DELETE') - Number(y.method === 'DELETE') ||
          (x.method === 'DELETE' ? y.path.split('/').length - x.path.split('/').length : 0) ||
          x.path.localeCompare(y.path),
      );
    const idsOf = (name: string) => a.params[name];
    for (const [index, op] of ops.entries()) {
      const params = (name: string) => a.params[name] ?? (name === 'filename' ? 'x.csv' : undefined);
      await fc.assert(
        fc.asyncProperty(variantsFor(op), async (v) => {
          let url = fillParams(op.path, params);
          if ((v.kind === 'bad-id' || v.kind === 'random-id') && op.pathParams.length) {
            const target = op.pathParams[v.param % op.pathParams.length];
            const value = v.kind === 'bad-id' ? v.value : '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c10';
            url = fillParams(op.path, (p) => (p === fixtureFor(op.path, target) ? value : params(p)));
          }
          const query: Record<string, unknown> = Object.fromEntries(
            op.queryParams
              .filter((q) => q.required || ['workspace_id', 'dataset_id'].includes(q.name))
              .map((q) => [q.name, idsOf(q.name) ?? sample(document, q.schema, idsOf, q.name)]),
          );
          if (v.kind === 'bad-query' && op.queryParams.length)
            query[op.queryParams[v.param % op.queryParams.length].name] = v.value;
          let body = validBody(document, op, idsOf);
          const props = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
          let removed: string | undefined;
          if (props.length && (v.kind === 'wrong-type' || v.kind === 'missing' || v.kind === 'huge-string')) {
            const prop = props[v.prop % props.length];
            if (v.kind === 'missing') removed = prop;
            body = { ...(body as object) };
            if (v.kind === 'missing') delete (body as Record<string, unknown>)[prop];
            else (body as Record<string, unknown>)[prop] = v.kind === 'huge-string' ? 'x'.repeat(100_000) : v.value;
          }
          if (v.kind === 'not-an-object' && op.consumes === 'application/json') body = v.value;
          let req = request(
            t.http,
            op,
            url,
            undefined,
            (op.rule === 'system-admin' ? sysadmin : a.owner).auth,
            a.params.workspace_id,
          ).query(query);
          if (op.consumes === 'application/json' || (!op.consumes && op.method !== 'GET' && op.method !== 'DELETE')) {
            if (v.kind === 'malformed-json')
              req = req.set('Content-Type', 'application/json').send('{"unterminated": ');
            else if (v.kind === 'wrong-content-type') req = req.set('Content-Type', 'text/plain').send('plain text');
            else if (v.kind === 'oversize')
              req = req.set('Content-Type', 'application/json').send(JSON.stringify({ blob: 'x'.repeat(1_100_000) }));
            else req = req.send(body === undefined ? {} : JSON.stringify(body)).set('Content-Type', 'application/json');
          }
          const res = await req;
          const operationId = String(op.operation.operationId);
          if (res.status < 300 && auditedActions(operationId))
            succeeded.set(operationId, [...(succeeded.get(operationId) ?? []), String(res.headers['x-request-id'])]);
          stats.sent++;
          stats.kinds[v.kind] = (stats.kinds[v.kind] ?? 0) + 1;
          const label = `${op.method} ${url.slice(0, 120)} [${v.kind}]`;
          if (res.status >= 500) stats.fivexx.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          const json = /json/.test(res.headers['content-type'] ?? '');
          if (res.status >= 400) {
            const b = res.body ?? {};
            const ok =
              /^application\/problem\+json/.test(res.headers['content-type'] ?? '') &&
              ['type', 'title', 'detail', 'error_code'].every((m) => typeof b[m] === 'string') &&
              b.status === res.status;
            if (!ok)
              stats.badProblems.push(
                `${label}: ${res.status} ${res.headers['content-type']} ${JSON.stringify(b).slice(0, 160)}`,
              );
            // An error status a client can meet is one the operation documents (generated clients type them).
            if (!op.operation.responses?.[String(res.status)])
              stats.undocumentedErrors.push(
                `${label}: ${res.status} ${b.error_code} is not documented (${Object.keys(op.operation.responses ?? {}).join(', ')})`,
              );
            // A required member left out is named as required, whatever its type (not "must be one of …").
            if (
              removed &&
              b.error_code === 'validation_failed' &&
              (resolve(document, op.bodySchema!).required ?? []).includes(removed)
            ) {
              const said = ((b.errors ?? []) as Array<{ field: string; message: string }>)
                .filter((e) => e.field === removed)
                .map((e) => e.message);
              if (said.length && !said.some((m) => m.startsWith(`${removed} is required`)))
                stats.missingNotRequired.push(`${label}: ${removed}: ${said.join('; ')}`);
            }
          } else {
            // A success must be one the operation documents, with the documented media type and schema.
            const documented = op.operation.responses?.[String(res.status)];
            const schema = documented?.content?.['application/json']?.schema;
            const mediaTypes = Object.keys(documented?.content ?? {});
            const served = (res.headers['content-type'] ?? '').split(';')[0].trim();
            if (!documented)
              stats.badBodies.push(
                `${label}: status ${res.status} is not documented (${Object.keys(op.operation.responses ?? {}).join(', ')})`,
              );
            else if (mediaTypes.length && !mediaTypes.includes(served))
              stats.badBodies.push(
                `${label}: ${res.status} documented as ${mediaTypes.join(' or ')}, served as ${res.headers['content-type']}`,
              );
            else if (schema && json) {
              const validate = responseValidator(op, res.status)!;
              stats.validated++;
              if (!validate(res.body)) stats.badBodies.push(`${label}: ${ajv.errorsText(validate.errors)}`);
            }
          }
          return true;
        }),
        { seed: SEED + index, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
      const targets = targetsOf(document, op);
      const hostile = hostileVariantsFor(op, targets);
      if (!hostile) continue;
      const hostileStarted = Date.now();
      await fc.assert(
        fc.asyncProperty(hostile, async (v) => {
          const url = fillParams(op.path, params);
          const query: Record<string, unknown> = Object.fromEntries(
            op.queryParams
              .filter((q) => q.required || ['workspace_id', 'dataset_id'].includes(q.name))
              .map((q) => [q.name, idsOf(q.name) ?? sample(document, q.schema, idsOf, q.name)]),
          );
          const base = validBody(document, op, idsOf);
          let text: string | undefined = op.consumes === 'application/json' ? JSON.stringify(base ?? {}) : undefined;
          let target = '';
          // What the answer must be, beyond "below 500": the json_too_deep code, a 400 naming a field, or any 4xx.
          let expect: { code?: string; field?: string; refused?: boolean; enclosing?: boolean } = {};
          if (v.kind === 'deep') {
            const deep = nest(v.shape, v.levels);
            const members = targets.strings.length ? [...targets.strings, ...targets.objectPlaces] : [];
            if (v.where === 'body' || !members.length) text = deep;
            else {
              const m = members[v.member % members.length];
              target = dotted(m.path);
              text = withRaw(withValueAt(document, base, op.bodySchema, m.path, '\u0000DEEP', idsOf), {
                '\u0000DEEP': deep,
              });
            }
            if (v.levels > 64) expect = { code: 'json_too_deep' };
          } else if (v.kind === 'lone-surrogate') {
            const m = targets.strings[v.member % targets.strings.length];
            target = dotted(m.path);
            text = JSON.stringify(withValueAt(document, base, op.bodySchema, m.path, v.text, idsOf));
            expect = { code: 'validation_failed', field: target };
          } else if (v.kind === 'array-for-object') {
            const m = targets.objectPlaces[v.member % targets.objectPlaces.length];
            target = dotted(m.path);
            const element = sample(document, m.schema, idsOf, String(m.path.at(-1)));
            const value = v.shape === 'empty' ? [] : v.shape === 'wrapped' ? [element] : v.shape === 'null' ? null : 42;
            text = JSON.stringify(withValueAt(document, base, op.bodySchema, m.path, value, idsOf));
            // An array, null or a number is not an object; a list of open objects (records, rows) may say what it does with one instead.
            if (m.schema.additionalProperties !== true && !(v.shape === 'null' && m.nullable))
              expect = { refused: true };
          } else if (v.kind === 'null-member') {
            const m = targets.optional[v.member % targets.optional.length];
            target = dotted(m.path);
            text = JSON.stringify(withValueAt(document, base, op.bodySchema, m.path, null, idsOf));
            // null is accepted only where the document says `nullable` (docs/api-conventions.md, Null in request bodies).
            if (!m.nullable) expect = { refused: true };
          } else if (v.kind === 'extreme-number') {
            const m = targets.numbers[v.member % targets.numbers.length];
            target = dotted(m.path);
            text = withRaw(withValueAt(document, base, op.bodySchema, m.path, '\u0000NUMBER', idsOf), {
              '\u0000NUMBER': v.raw,
            });
            // Every integer has a documented maximum of at most 2^31 - 1, and 1e400 is no finite number.
            if ((m.schema.type === 'integer' && v.raw !== '-0') || /e400/.test(v.raw)) expect = { refused: true };
          } else if (v.kind === 'past-bound') {
            const m = targets.bounded[v.member % targets.bounded.length];
            // class-validator names a list's own rules, `each` ones included, by the list (`tags`, not `tags.0`).
            target = dotted(typeof m.path.at(-1) === 'number' ? m.path.slice(0, -1) : m.path);
            const s = m.schema;
            const element = s.items && sample(document, s.items, idsOf, String(m.path.at(-1)));
            const value =
              s.type === 'string'
                ? 'x'.repeat(s.maxLength! + 1)
                : s.type === 'array'
                  ? Array.from({ length: s.maxItems! + 1 }, () => element)
                  : s.maximum! + 1;
            text = JSON.stringify(withValueAt(document, base, op.bodySchema, m.path, value, idsOf));
            // A 400 naming the member, or a member holding it (a list's check of its elements names the list);
            // its code is the operation's own (validation_failed, mcp_message_invalid).
            expect = { field: target, enclosing: true };
          } else {
            const q = targets.numericQuery[v.param % targets.numericQuery.length];
            target = q.name;
            query[q.name] = v.value;
            // Refused unless a whole number within the documented maximum (2^31 - 1 for all but int64 counters such as a run event's seq).
            const n = Number(v.value);
            const withinMaximum =
              Number.isSafeInteger(n) && n <= ((q.schema as { maximum?: number }).maximum ?? 2 ** 31 - 1);
            if (q.schema.type === 'integer' && !['0x10', ''].includes(v.value) && !withinMaximum)
              expect = { refused: true };
          }
          const caller = (op.rule === 'system-admin' ? sysadmin : a.owner).auth;
          let req = request(t.http, op, url, undefined, caller, a.params.workspace_id).query(query);
          if (text !== undefined) req = req.set('Content-Type', 'application/json').send(text);
          const res = await req;
          stats.sent++;
          stats.hostile[v.kind] = (stats.hostile[v.kind] ?? 0) + 1;
          const label = `${op.method} ${url.slice(0, 120)} [${v.kind}${target ? ` ${target}` : ''}${'raw' in v ? `=${v.raw}` : 'value' in v ? `=${v.value}` : 'shape' in v ? ` ${v.shape}` : ''}${'levels' in v ? ` ${v.levels}` : ''}]`;
          if (res.status >= 500) stats.fivexx.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          if (res.status >= 400) {
            const b = res.body ?? {};
            const ok =
              /^application\/problem\+json/.test(res.headers['content-type'] ?? '') &&
              ['type', 'title', 'detail', 'error_code'].every((m) => typeof b[m] === 'string') &&
              b.status === res.status;
            if (!ok)
              stats.badProblems.push(
                `${label}: ${res.status} ${res.headers['content-type']} ${JSON.stringify(b).slice(0, 160)}`,
              );
          }
          // Access is decided after the body is read, so these hold for every caller.
          if (expect.code && (res.status !== 400 || res.body?.error_code !== expect.code))
            stats.hostileMissed.push(
              `${label}: expected 400 ${expect.code}, got ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
            );
          else if (
            expect.field !== undefined &&
            (res.status !== 400 ||
              !(res.body?.errors ?? []).some(
                (e: { field?: string }) =>
                  e.field === expect.field || (expect.enclosing && expect.field!.startsWith(`${e.field}.`)),
              ))
          )
            stats.hostileMissed.push(
              `${label}: the 400 does not name ${expect.field}: ${JSON.stringify(res.body).slice(0, 160)}`,
            );
          else if (expect.refused && res.status < 400)
            stats.hostileMissed.push(`${label}: accepted with ${res.status}`);
          return true;
        }),
        { seed: SEED + 7919 * (index + 1), numRuns: HOSTILE_RUNS_PER_OPERATION, endOnFailure: true },
      );
      stats.hostileMs += Date.now() - hostileStarted;
    }
    console.log(
      `security/fuzz: ${stats.sent} requests sent over ${ops.length} operations (seed ${SEED}, ${Object.entries(
        stats.kinds,
      )
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}; hostile, in ${Math.round(stats.hostileMs / 1000)} s: ${Object.entries(stats.hostile)
        .map(([k, n]) => `${n} ${k}`)
        .join(
          ', ',
        )}); ${stats.fivexx.length} × 5xx; ${stats.badProblems.length} error bodies not problem+json; ${stats.undocumentedErrors.length} error statuses not documented; ${stats.missingNotRequired.length} required members left out and not called required; ${stats.hostileMissed.length} hostile inputs not refused as documented; ${stats.validated} success bodies validated, ${stats.badBodies.length} not matching their documented response`,
    );
    expect(stats.fivexx).toEqual([]);
    expect(stats.badProblems).toEqual([]);
    expect(stats.undocumentedErrors).toEqual([]);
    expect(stats.missingNotRequired).toEqual([]);
    expect(stats.badBodies).toEqual([]);
    expect(stats.hostileMissed).toEqual([]);
    expect(stats.sent).toBeGreaterThanOrEqual(500);
    expect(stats.validated).toBeGreaterThanOrEqual(100);
    // A sweep of every operation: about 45 s alone on the 2-core machine, more beside other suites.
  }, 600_000);

  /**
   * Every successful call of an operation test/contract/audited-operations.ts lists with actions
   * wrote an event under its request id (unless it only writes when it changes something, and
   * changed nothing), and only actions the list names for it.
   */
  it('wrote an audit event for every audited operation whose calls succeeded, of the actions its list names', async () => {
    const silent: string[] = [];
    const unlisted: string[] = [];
    for (const [operationId, requestIds] of succeeded) {
      const events: Array<{ action: string }> = await t.dataSource.query(
        'SELECT DISTINCT action FROM audit_events WHERE request_id = ANY($1)',
        [requestIds],
      );
      if (!events.length && !(operationId in AUDITED_WHEN_CHANGED))
        silent.push(`${operationId}: ${requestIds.length} successful calls, no event`);
      for (const { action } of events)
        if (!auditedActions(operationId)!.includes(action)) unlisted.push(`${operationId} wrote ${action}`);
    }
    console.log(
      `security/fuzz: ${succeeded.size} audited operations answered a success; ${silent.length} of them wrote no event, ${unlisted.length} actions written that test/contract/audited-operations.ts does not list`,
    );
    expect({ silent, unlisted }).toEqual({ silent: [], unlisted: [] });
    expect(succeeded.size).toBeGreaterThanOrEqual(40);
  });
});
