import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import { fillParams, request, sample, walk, type WalkedOperation } from './openapi-walk.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const SEED = 20261122;
const RUNS_PER_OPERATION = 12;
/** Operations the fuzzer leaves alone, with why. */
const SKIP: Record<string, string> = {
  'POST /auth/logout': 'would revoke the token the rest of the run uses',
};

/** A broken variant of a valid request, or the valid one. */
type Variant =
  | { kind: 'valid' }
  | { kind: 'wrong-type'; prop: number; value: unknown }
  | { kind: 'missing'; prop: number }
  | { kind: 'huge-string'; prop: number }
  | { kind: 'not-an-object'; value: unknown }
  | { kind: 'bad-id'; param: number; value: string }
  | { kind: 'random-id'; param: number }
  | { kind: 'malformed-json' }
  | { kind: 'wrong-content-type' }
  | { kind: 'oversize' };

/** OpenAPI 3.0 `nullable` as JSON Schema: a `null` type beside the schema's own. */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'example' ? v : jsonSchema(v)]));
  if (nullable !== true) return out;
  // `nullable` beside allOf/oneOf/$ref (the OpenAPI 3.0 idiom for a nullable reference) makes the whole schema nullable.
  if (typeof out.type === 'string' && !out.allOf && !out.oneOf && !out.$ref) return { ...out, type: [out.type, 'null'], ...(Array.isArray(out.enum) ? { enum: [...out.enum, null] } : {}) };
  return { anyOf: [out, { type: 'null' }] };
}

const variant: fc.Arbitrary<Variant> = fc.oneof(
  fc.constant<Variant>({ kind: 'valid' }),
  fc.record({ kind: fc.constant('wrong-type' as const), prop: fc.nat(), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ kind: fc.constant('missing' as const), prop: fc.nat() }),
  fc.record({ kind: fc.constant('huge-string' as const), prop: fc.nat() }),
  fc.record({ kind: fc.constant('not-an-object' as const), value: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer())) }),
  fc.record({ kind: fc.constant('bad-id' as const), param: fc.nat(), value: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constant('1 OR 1=1'), fc.constant('../../etc/passwd'), fc.constant('%00')) }),
  fc.record({ kind: fc.constant('random-id' as const), param: fc.nat() }),
  fc.constant<Variant>({ kind: 'malformed-json' }),
  fc.constant<Variant>({ kind: 'wrong-content-type' }),
  fc.constant<Variant>({ kind: 'oversize' }),
);

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

  beforeAll(async () => {
    ({ t, document, a } = await startSweep('fuzz'));
    ajv = addFormats(new Ajv({ strict: false, allErrors: false, validateFormats: true }));
    ajv.addSchema({ $id: 'openapi.json', components: jsonSchema(document.components) });
  });
  afterAll(async () => t?.close());

  function responseValidator(op: WalkedOperation, status: number): ValidateFunction | undefined {
    const key = `${op.method} ${op.path} ${status}`;
    if (validators.has(key)) return validators.get(key);
    const schema = (op.operation.responses?.[String(status)]?.content?.['application/json']?.schema ?? undefined) as object | undefined;
    const validate = schema ? ajv.compile(jsonSchema(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi.json#/components/'))) as object) : undefined;
    if (validate) validators.set(key, validate);
    return validate;
  }

  it('answers no 5xx, only well-formed problems, and only documented success bodies', async () => {
    const stats = { sent: 0, validated: 0, fivexx: [] as string[], badProblems: [] as string[], badBodies: [] as string[] };
    // Destructive operations last, so the fixtures live for everything else.
    const ops = walk(document)
      .filter((op) => !SKIP[`${op.method} ${op.path}`])
      .sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE') || x.path.localeCompare(y.path));
    const idsOf = (name: string) => a.params[name];
    for (const op of ops) {
      const params = (name: string) => a.params[name] ?? (name === 'name' ? 'summarisation' : name === 'filename' ? 'x.csv' : undefined);
      await fc.assert(
        fc.asyncProperty(variant, async (v) => {
          let url = fillParams(op.path, params);
          if ((v.kind === 'bad-id' || v.kind === 'random-id') && op.pathParams.length) {
            const target = op.pathParams[v.param % op.pathParams.length];
            const value = v.kind === 'bad-id' ? v.value : '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c10';
            url = fillParams(op.path, (p) => (p === target ? value : params(p)));
          }
          const query = Object.fromEntries(op.queryParams.filter((q) => q.required || ['workspace_id', 'dataset_id'].includes(q.name)).map((q) => [q.name, idsOf(q.name) ?? sample(document, q.schema, idsOf, q.name)]));
          let body = op.bodySchema ? sample(document, op.bodySchema, idsOf) : undefined;
          const props = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
          if (props.length && (v.kind === 'wrong-type' || v.kind === 'missing' || v.kind === 'huge-string')) {
            const prop = props[v.prop % props.length];
            body = { ...(body as object) };
            if (v.kind === 'missing') delete (body as Record<string, unknown>)[prop];
            else (body as Record<string, unknown>)[prop] = v.kind === 'huge-string' ? 'x'.repeat(100_000) : v.value;
          }
          if (v.kind === 'not-an-object' && op.consumes === 'application/json') body = v.value;
          let req = request(t.http, op, url, undefined, a.owner.auth).query(query);
          if (op.consumes === 'application/json' || (!op.consumes && op.method !== 'GET' && op.method !== 'DELETE')) {
            if (v.kind === 'malformed-json') req = req.set('Content-Type', 'application/json').send('{"unterminated": ');
            else if (v.kind === 'wrong-content-type') req = req.set('Content-Type', 'text/plain').send('plain text');
            else if (v.kind === 'oversize') req = req.set('Content-Type', 'application/json').send(JSON.stringify({ blob: 'x'.repeat(1_100_000) }));
            else req = req.send(body === undefined ? {} : JSON.stringify(body)).set('Content-Type', 'application/json');
          }
          const res = await req;
          stats.sent++;
          const label = `${op.method} ${url.slice(0, 120)} [${v.kind}]`;
          if (res.status >= 500) stats.fivexx.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          const json = /json/.test(res.headers['content-type'] ?? '');
          if (res.status >= 400) {
            const b = res.body ?? {};
            const ok = /^application\/problem\+json/.test(res.headers['content-type'] ?? '') && ['type', 'title', 'detail', 'error_code'].every((m) => typeof b[m] === 'string') && b.status === res.status;
            if (!ok) stats.badProblems.push(`${label}: ${res.status} ${res.headers['content-type']} ${JSON.stringify(b).slice(0, 160)}`);
          } else if (json && res.status !== 204) {
            const validate = responseValidator(op, res.status);
            if (validate) stats.validated++;
            if (validate && !validate(res.body)) stats.badBodies.push(`${label}: ${ajv.errorsText(validate.errors)}`);
          }
          return true;
        }),
        { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
    }
    process.stdout.write(
      `\nsecurity/fuzz: ${stats.sent} requests over ${ops.length} operations (seed ${SEED}); ${stats.validated} success bodies validated against their schema; 5xx: ${stats.fivexx.length}; error bodies not problem+json: ${stats.badProblems.length}; success bodies not matching their schema: ${stats.badBodies.length}\n`,
    );
    expect(stats.fivexx).toEqual([]);
    expect(stats.badProblems).toEqual([]);
    expect(stats.badBodies).toEqual([]);
    expect(stats.sent).toBeGreaterThanOrEqual(500);
    expect(stats.validated).toBeGreaterThanOrEqual(100);
  });
});
