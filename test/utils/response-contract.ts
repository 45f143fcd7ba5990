import { expect } from '@jest/globals';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import prismRouter from '@stoplight/prism-http/dist/router/index.js';
import prismValidator from '@stoplight/prism-http/dist/validator/index.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordViolation } from './response-violations.js';

/**
 * Every answer the application gives during an end-to-end test, checked against the OpenAPI
 * document it serves (docs/testing.md, "Every answer is a contract check"). The check is Stoplight
 * Prism's own: its router finds the operation of the request, its output validator checks that the
 * status is declared, that the media type is one the response lists and, for JSON and text, the
 * body against that media type's schema (docs/decisions/0012-responses-checked-against-the-document.md).
 */

/** One operation of the document as Prism reads it (@stoplight/types IHttpOperation, the parts used here). */
interface PrismOperation {
  iid?: string;
  method: string;
  path: string;
  responses: Array<{ code: string; contents?: Array<{ mediaType: string; schema?: object }> }>;
  __bundled__?: unknown;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
/**
 * Prism compiles each schema when it first meets it and lets the answer through when the schema
 * does not compile; the same compiler (ajv with Prism's options) finds such a schema first, so
 * that it is reported instead.
 */
const compiler = addFormats(
  new Ajv({ allErrors: true, allowUnionTypes: true, allowMatchingProperties: true, strict: false, logger: false }),
);

interface Diagnostic {
  path?: Array<string | number>;
  message: string;
}

/** What the server answered to one request. */
export interface Exchange {
  method: string;
  /** The request's path and query, as sent. */
  url: string;
  status: number;
  contentType: string | undefined;
  /**
   * The parsed JSON body, or the text of a text/* answer (a CSV or Markdown file); undefined for
   * event streams and binary files, which are checked by status and media type only.
   */
  body?: unknown;
  /** The JSON text that did not parse, when the media type says JSON. */
  unparsable?: string;
}

const JSON_MEDIA_TYPE = /^application\/(?:json|[\w.-]+\+json)(?:;|$)/i;
/** Text kept whole to check against its schema (a string); an event stream is not. */
const TEXT_MEDIA_TYPE = /^text\/(?!event-stream)/i;
const BUILD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'ews-test-build');
/** The operations of the served document as Prism reads them, kept beside the tests' build (the same code serves the same document). */
const CACHE = join(BUILD_DIR, 'openapi-operations.json');

/** The document's operations, ready to check answers against; its schemas compile on first use. */
export class ResponseContract {
  private readonly withoutSchemas = new WeakMap<PrismOperation, PrismOperation>();
  private readonly uncompilable = new WeakMap<PrismOperation, string[]>();
  /** Why a schema does not compile, or '' when it does: one compilation per distinct schema. */
  private readonly compiled = new WeakMap<object, string>();
  /** The operations by method and number of path segments, the only ones a request can match. */
  private readonly byShape = new Map<string, PrismOperation[]>();

  constructor(operations: PrismOperation[]) {
    for (const operation of operations) {
      const key = shapeOf(operation.method, operation.path);
      this.byShape.set(key, [...(this.byShape.get(key) ?? []), operation]);
    }
  }

  static async fromDocument(document: object): Promise<ResponseContract> {
    return new ResponseContract(await prismOperations(document));
  }

  /** What is wrong with the answer, one line each; empty when the document admits it or does not list the path. */
  check(exchange: Exchange): string[] {
    const [path] = exchange.url.split('?');
    const candidates = this.byShape.get(shapeOf(exchange.method, path));
    if (!candidates) return [];
    const routed = prismRouter.default({
      resources: candidates as never,
      input: { method: exchange.method.toLowerCase(), url: { path } } as never,
    }) as { _tag: 'Left' | 'Right'; right?: PrismOperation };
    // A path or method the document does not list (Swagger UI, /openapi.json, a route of a test module, a 404).
    if (routed._tag !== 'Right' || !routed.right) return [];
    const operation = routed.right;
    const headers = exchange.contentType ? { 'content-type': exchange.contentType } : {};
    const checked = exchange.body === undefined && !exchange.unparsable ? this.schemaless(operation) : operation;
    const result = prismValidator.validateOutput({
      resource: checked as never,
      element: { statusCode: exchange.status, headers, body: exchange.body } as never,
    }) as { _tag: 'Left' | 'Right'; left?: Diagnostic[] };
    const problems = [...this.schemaErrors(operation), ...(result.left ?? []).map((d) => describe(d, exchange.body))];
    if (exchange.unparsable !== undefined)
      problems.push(`the ${exchange.contentType} body is not JSON: ${clip(exchange.unparsable)}`);
    if (!problems.length) return [];
    const label = `${exchange.method} ${operation.path} (${operation.iid ?? 'no operationId'}) answered ${exchange.status} ${exchange.contentType ?? '(no Content-Type)'} to ${exchange.url}`;
    return [`${label}:\n${problems.map((p) => `    ${p}`).join('\n')}`];
  }

  /** Why a response schema of the operation does not compile (Prism would admit anything under it). */
  private schemaErrors(operation: PrismOperation): string[] {
    let errors = this.uncompilable.get(operation);
    if (!errors) {
      errors = [];
      for (const response of operation.responses) {
        for (const content of response.contents ?? []) {
          if (!content.schema) continue;
          let error = this.compiled.get(content.schema);
          if (error === undefined) {
            try {
              compiler.compile({ ...content.schema, __bundled__: operation.__bundled__ });
              error = '';
            } catch (err) {
              error = (err as Error).message;
            }
            this.compiled.set(content.schema, error);
          }
          if (error)
            errors.push(`the document's schema of ${response.code} ${content.mediaType} does not compile: ${error}`);
        }
      }
      this.uncompilable.set(operation, errors);
    }
    return errors;
  }

  /** The operation with its response schemas left out: a stream, a file or an empty body is checked by status and media type. */
  private schemaless(operation: PrismOperation): PrismOperation {
    let copy = this.withoutSchemas.get(operation);
    if (!copy) {
      copy = {
        ...operation,
        responses: operation.responses.map((r) => ({
          ...r,
          contents: r.contents?.map(({ schema: _schema, ...content }) => content),
        })),
      };
      this.withoutSchemas.set(operation, copy);
    }
    return copy;
  }
}

/** `GET 3`: the method and number of segments of a path (a template's `{name}` is one segment). */
function shapeOf(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\/+$/, '').split('/').length}`;
}

/**
 * Makes equal response schemas one object. Prism compiles a schema once per object, and the
 * document's operations repeat the same ones (every error answer's problem schema): compiled
 * once, not once per operation and status. (Prism tags each copy with an id of its own,
 * `x-stoplight`, which says nothing about the values.)
 */
function shareEqualSchemas(operations: PrismOperation[]): void {
  const seen = new Map<string, object>();
  for (const operation of operations) {
    // Schemas refer into their operation's bundle when there is one: only bundle-free ones are shared.
    if (operation.__bundled__ !== undefined) continue;
    for (const response of operation.responses) {
      for (const content of response.contents ?? []) {
        if (!content.schema) continue;
        const key = JSON.stringify(content.schema, (name, value: unknown) =>
          name === 'x-stoplight' ? undefined : value,
        );
        const shared = seen.get(key);
        if (shared) content.schema = shared;
        else seen.set(key, content.schema);
      }
    }
  }
}

/** One diagnostic with its JSON path and, where it points into the body, the value found there. */
function describe(diagnostic: Diagnostic, body: unknown): string {
  const [root, ...rest] = diagnostic.path ?? [];
  if (root !== 'body') return diagnostic.message;
  const pointer = `$${rest.map((key) => (typeof key === 'number' || /^\d+$/.test(key) ? `[${key}]` : `.${key}`)).join('')}`;
  let value = body;
  for (const key of rest)
    value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return `${pointer}: ${diagnostic.message} (found ${clip(JSON.stringify(value) ?? 'nothing')})`;
}

const clip = (text: string) => (text.length > 160 ? `${text.slice(0, 157)}...` : text);

/** The document's operations as Prism reads them. */
async function prismOperations(document: object): Promise<PrismOperation[]> {
  const operations = (await getHttpOperationsFromSpec(structuredClone(document))) as PrismOperation[];
  dedupeEnums(operations);
  shareEqualSchemas(operations);
  return operations;
}

/**
 * Prism's reading of OpenAPI 3.0 adds null to the `enum` of a nullable schema even when it is
 * listed already, and the null alternative of a nullable reference (`{type: object, nullable:
 * true, enum: [null]}`, libs/common/openapi-nullable.ts) becomes `enum: [null, null]`, which no
 * JSON Schema compiler takes. Each enum keeps its values once.
 */
function dedupeEnums(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) dedupeEnums(item);
    return;
  }
  const schema = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'enum' && Array.isArray(value)) {
      const seen = new Set<string>();
      schema.enum = value.filter((v) => !seen.has(JSON.stringify(v)) && !!seen.add(JSON.stringify(v)));
    } else if (key !== 'examples' && key !== 'example') dedupeEnums(value);
  }
}

/** The cache's form: each shared response schema written once, and referred to by its index. */
interface CachedOperations {
  stamp: string;
  schemas: object[];
  operations: PrismOperation[];
}

function pack(stamp: string, operations: PrismOperation[]): string {
  const index = new Map<object, number>();
  for (const operation of operations)
    for (const response of operation.responses)
      for (const { schema } of response.contents ?? []) if (schema && !index.has(schema)) index.set(schema, index.size);
  const text = JSON.stringify(operations, (key, value: unknown) =>
    key === 'schema' && index.has(value as object) ? { $shared: index.get(value as object) } : value,
  );
  return `{"stamp":${JSON.stringify(stamp)},"schemas":${JSON.stringify([...index.keys()])},"operations":${text}}`;
}

function unpack(cached: CachedOperations): PrismOperation[] {
  for (const operation of cached.operations)
    for (const response of operation.responses)
      for (const content of response.contents ?? []) {
        const shared = (content.schema as { $shared?: number } | undefined)?.$shared;
        if (shared !== undefined) content.schema = cached.schemas[shared];
      }
  return cached.operations;
}

/** The build's inputs stamp (test/utils/jest/test-build.mjs): the code, hence the served document, it stands for. */
function buildStamp(): string | undefined {
  try {
    return readFileSync(join(BUILD_DIR, '.inputs'), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The contract of the code under test: read from the cache the first app of a build wrote, or
 * built from the document `served()` fetches (GET /openapi.json) and cached for the next files.
 */
export async function loadResponseContract(served: () => Promise<object>): Promise<ResponseContract> {
  const stamp = buildStamp();
  try {
    const cached = JSON.parse(readFileSync(CACHE, 'utf8')) as CachedOperations;
    if (stamp && cached.stamp === stamp) return new ResponseContract(unpack(cached));
  } catch {
    // No cache yet, or one being replaced: build it.
  }
  const operations = await prismOperations(await served());
  if (stamp) {
    mkdirSync(BUILD_DIR, { recursive: true });
    const partial = `${CACHE}.${process.pid}`;
    writeFileSync(partial, pack(stamp, operations));
    renameSync(partial, CACHE);
  }
  return new ResponseContract(operations);
}

function mediaKind(contentType: unknown): 'json' | 'text' | 'other' {
  const type = String(contentType ?? '');
  return JSON_MEDIA_TYPE.test(type) ? 'json' : TEXT_MEDIA_TYPE.test(type) ? 'text' : 'other';
}

/**
 * Records every answer `server` gives (whichever client asked: supertest, the SDK, the CLI or
 * fetch over a socket) and checks it against `contract` once the answer is complete. A violation
 * is kept, with the test that was running (test/utils/response-violations.ts).
 */
export function checkResponses(server: Server, contract: ResponseContract): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const test = expect.getState().currentTestName;
    const chunks: Buffer[] = [];
    let kind: 'json' | 'text' | 'other' | undefined;
    const keep = (chunk: unknown, encoding: unknown) => {
      kind ??= mediaKind(res.getHeader('content-type'));
      if (kind === 'other' || chunk == null || typeof chunk === 'function') return;
      if (typeof chunk === 'string')
        chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
    res.once('finish', () => {
      const contentType = res.getHeader('content-type') as string | undefined;
      const exchange: Exchange = { method, url, status: res.statusCode, contentType };
      const text = Buffer.concat(chunks).toString('utf8');
      if (kind === 'text' && method !== 'HEAD') exchange.body = text;
      if (kind === 'json' && method !== 'HEAD' && text) {
        try {
          exchange.body = JSON.parse(text);
        } catch {
          exchange.unparsable = text;
        }
      }
      for (const violation of contract.check(exchange))
        recordViolation(test ? `${violation}\n    (during "${test}")` : violation);
    });
  });
}
