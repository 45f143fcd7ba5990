import { describe, expect, it } from '@jest/globals';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '#libs/common/domain-error.js';
import { admitsNull } from '#libs/common/openapi-nullable.js';
import { createValidationPipe } from '#libs/common/validation.js';
import { HTTP_METHODS, repoRoot } from './support/spec-operations.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Node = Record<string, unknown>;
type Media = { schema?: Node; example?: unknown; examples?: Record<string, { value?: unknown; $ref?: string }> };
type Operation = {
  requestBody?: { content?: Record<string, Media> };
  parameters?: Array<{ name: string; in: string; schema?: Node; example?: unknown }>;
};
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Node>; examples?: Record<string, { value?: unknown }> };
}

const JSON_MEDIA_TYPE = /^application\/(json|[\w.-]+\+json)$/;
const SCHEMA_REF = '#/components/schemas/';
/** The id under which the document's schemas are known to ajv, so that a member's schema can refer to them. */
const DOCUMENT_ID = 'openapi.json';

/**
 * An OpenAPI 3.0 schema as JSON Schema for ajv: `nullable` admits null (beside `$ref` or `allOf`,
 * the idiom for a nullable reference, as the whole schema's alternative), references point into
 * the document registered under DOCUMENT_ID, examples are no keyword, and an object that lists
 * its properties admits no others (the validation pipe refuses unknown members; a response
 * example with a member the schema lacks documents something that is not there).
 */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, example: _example, ...rest } = node as Node;
  const out: Node = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [
      key,
      key === 'properties' ? mapValues(value as Node, jsonSchema) : jsonSchema(value),
    ]),
  );
  if (typeof out.$ref === 'string' && out.$ref.startsWith(SCHEMA_REF)) out.$ref = `${DOCUMENT_ID}${out.$ref}`;
  if (out.properties && out.additionalProperties === undefined && (out.type === 'object' || out.type === undefined))
    out.additionalProperties = false;
  if (nullable !== true) return out;
  if (typeof out.type === 'string' && !out.allOf && !out.oneOf && !out.$ref)
    return {
      ...out,
      type: [out.type, 'null'],
      ...(Array.isArray(out.enum) && !out.enum.includes(null) ? { enum: [...out.enum, null] } : {}),
    };
  return { anyOf: [out, { type: 'null' }] };
}

const mapValues = (object: Node, map: (value: unknown) => unknown): Node =>
  Object.fromEntries(Object.entries(object).map(([key, value]) => [key, map(value)]));

/** Every schema object under `node` (members, items, alternatives, additional properties), with its place. */
function* schemaNodes(node: unknown, place: string): Generator<[Node, string]> {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
  const schema = node as Node;
  yield [schema, place];
  for (const [name, member] of Object.entries((schema.properties as Node | undefined) ?? {}))
    yield* schemaNodes(member, `${place}.${name}`);
  if (schema.items) yield* schemaNodes(schema.items, `${place}[]`);
  if (typeof schema.additionalProperties === 'object') yield* schemaNodes(schema.additionalProperties, `${place}{}`);
  for (const keyword of ['allOf', 'oneOf', 'anyOf'] as const) {
    for (const [i, part] of ((schema[keyword] as unknown[] | undefined) ?? []).entries())
      yield* schemaNodes(part, `${place}.${keyword}[${i}]`);
  }
}

/** A member's schema is complete when it has an example or is one (or a list, or a nullable reference) of the document's schemas, whose members are checked themselves. */
function hasExample(member: Node): boolean {
  if (member.example !== undefined || typeof member.$ref === 'string' || member.format === 'binary') return true;
  if (member.items) return hasExample(member.items as Node);
  // A nullable reference is `anyOf: [{$ref}, null]` (libs/common/openapi-nullable.ts).
  const parts = (member.allOf ?? member.oneOf ?? member.anyOf) as Node[] | undefined;
  return !!parts?.length && parts.every((part) => typeof part.$ref === 'string' || admitsNull(part));
}

/** The classes controllers take as `@Body()`, by name (the name of their schema in the document). */
async function bodyClasses(dir = join(repoRoot, 'src')): Promise<Map<string, new () => object>> {
  const classes = new Map<string, new () => object>();
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      for (const [key, cls] of await bodyClasses(path)) classes.set(key, cls);
      continue;
    }
    if (!path.endsWith('.controller.ts')) continue;
    for (const controller of Object.values((await import(path)) as Record<string, unknown>)) {
      if (typeof controller !== 'function') continue;
      for (const method of Object.getOwnPropertyNames(controller.prototype)) {
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
          string,
          { index: number }
        >;
        const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ?? []) as Array<
          new () => object
        >;
        for (const [key, arg] of Object.entries(args)) {
          const type = types[arg.index];
          if (Number(key.split(':')[0]) === RouteParamtypes.BODY && type?.name) classes.set(type.name, type);
        }
      }
    }
  }
  return classes;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (e) =>
        `${e.instancePath || '(root)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
    )
    .join('; ');
}

/**
 * The examples of the committed document (docs/openapi.json, which openapi-drift.e2e-spec.ts
 * keeps equal to the served one): every JSON request body has one, every member of a request
 * body's schemas has one, and every example, of a request body, a parameter, a schema or any
 * schema member, is a value of its own schema. An example that does not validate is a bug in the
 * DTO that carries it (or in openapi-completion, which composes request bodies' examples).
 */
describe('OpenAPI examples', () => {
  const document = JSON.parse(readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8')) as Document;
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((method) => item[method]).map((method) => ({
      place: `${method.toUpperCase()} ${path}`,
      operation: item[method],
    })),
  );
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  for (const format of ['binary', 'byte', 'int32', 'int64', 'float', 'double']) ajv.addFormat(format, true);
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: mapValues(document.components.schemas, jsonSchema) } });

  const invalid = (schema: unknown, example: unknown, place: string): string[] => {
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(jsonSchema(schema) as object);
    } catch (error) {
      return [`${place}: the schema does not compile (${(error as Error).message})`];
    }
    return validate(example) ? [] : [`${place}: ${describeErrors(validate.errors)}`];
  };

  it('gives every JSON request body an example', () => {
    const bodies = operations.flatMap(({ place, operation }) =>
      Object.entries(operation.requestBody?.content ?? {})
        .filter(([type]) => JSON_MEDIA_TYPE.test(type))
        .map(([type, media]) => ({ place: `${place} ${type}`, media })),
    );
    expect(bodies.length).toBeGreaterThan(80);
    expect(
      bodies.filter(({ media }) => media.example === undefined && !media.examples).map(({ place }) => place),
    ).toEqual([]);
  });

  it("gives every member of a request body's schemas an example", () => {
    const reached = new Set<string>();
    const visit = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(visit);
      const ref = (node as Node).$ref;
      if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF) && !reached.has(ref.slice(SCHEMA_REF.length))) {
        reached.add(ref.slice(SCHEMA_REF.length));
        visit(document.components.schemas[ref.slice(SCHEMA_REF.length)]);
      }
      Object.values(node).forEach(visit);
    };
    for (const { operation } of operations) visit(operation.requestBody);
    expect(reached.size).toBeGreaterThan(100);
    const missing = [...reached].flatMap((name) =>
      Object.entries((document.components.schemas[name].properties as Record<string, Node> | undefined) ?? {})
        .filter(([, member]) => !hasExample(member))
        .map(([member]) => `${name}.${member}`),
    );
    expect(missing).toEqual([]);
  });

  it('validates every request body and parameter example against its schema', () => {
    const failures: string[] = [];
    for (const { place, operation } of operations) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (!media.schema || !JSON_MEDIA_TYPE.test(type)) continue;
        if (media.example !== undefined)
          failures.push(...invalid(media.schema, media.example, `${place} ${type} example`));
        for (const [name, example] of Object.entries(media.examples ?? {})) {
          const value = example.$ref
            ? document.components.examples?.[example.$ref.split('/').pop()!]?.value
            : example.value;
          failures.push(...invalid(media.schema, value, `${place} ${type} examples.${name}`));
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.example !== undefined && parameter.schema)
          failures.push(
            ...invalid(parameter.schema, parameter.example, `${place} ${parameter.in} parameter ${parameter.name}`),
          );
      }
    }
    expect(failures).toEqual([]);
  });

  it('passes every JSON request body example through the validation the route applies to its body', async () => {
    const classes = await bodyClasses();
    const pipe = createValidationPipe();
    const failures: string[] = [];
    let checked = 0;
    for (const { place, operation } of operations) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        const ref = media.schema?.$ref;
        if (!JSON_MEDIA_TYPE.test(type) || media.example === undefined || typeof ref !== 'string') continue;
        const metatype = classes.get(ref.slice(SCHEMA_REF.length));
        if (!metatype) {
          failures.push(`${place}: no controller takes ${ref} as its body`);
          continue;
        }
        checked++;
        try {
          await pipe.transform(structuredClone(media.example), { type: 'body', metatype });
        } catch (error) {
          const errors =
            error instanceof DomainError ? JSON.stringify(error.extensions.errors ?? error.detail) : String(error);
          failures.push(`${place} ${type}: ${errors}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(80);
    expect(failures).toEqual([]);
  });

  it("validates every schema's and schema member's example against its own schema", () => {
    const failures: string[] = [];
    let examples = 0;
    const check = (root: unknown, place: string) => {
      for (const [node, at] of schemaNodes(root, place)) {
        if (node.example === undefined) continue;
        examples++;
        failures.push(...invalid(node, node.example, at));
      }
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) check(schema, name);
    for (const { place, operation } of operations)
      for (const parameter of operation.parameters ?? [])
        check(parameter.schema, `${place} ${parameter.in} parameter ${parameter.name}`);
    expect(examples).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  });
});
