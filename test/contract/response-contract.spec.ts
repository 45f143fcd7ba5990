import { beforeAll, describe, expect, it } from '@jest/globals';
import { admitNullReferences } from '#libs/common/openapi-nullable.js';
import { ResponseContract } from '../utils/response-contract.js';

/**
 * The check every e2e answer goes through (test/utils/response-contract.ts) reports what the
 * document does not admit: a null the schema refuses, an undeclared status, a media type the
 * response does not list, a CSV file under an object schema, JSON that does not parse.
 */
const THING = {
  type: 'object',
  required: ['id', 'sample'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    sample: { type: 'object', nullable: true, allOf: [{ $ref: '#/components/schemas/Sample' }] },
  },
};

function documentWith(thing: object) {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/things/{thing_id}': {
        get: {
          operationId: 'getThing',
          parameters: [{ name: 'thing_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
            },
            '404': {
              description: 'no',
              content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
            },
          },
        },
      },
      '/things/export': {
        get: {
          operationId: 'exportThings',
          responses: {
            '200': {
              description: 'the file',
              content: {
                'text/csv': { schema: { type: 'object' } },
                'application/json': { schema: { type: 'object' } },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Thing: thing,
        Sample: { type: 'object', required: ['rows'], properties: { rows: { type: 'integer' } } },
        Problem: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      },
    },
  };
}

const ID = '6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c';
const get = (url: string, status: number, contentType: string | undefined, body?: unknown) => ({
  method: 'GET',
  url,
  status,
  contentType,
  body,
});

describe('the response check', () => {
  let written: ResponseContract;
  let rewritten: ResponseContract;
  beforeAll(async () => {
    written = await ResponseContract.fromDocument(documentWith(THING));
    const document = documentWith(structuredClone(THING));
    admitNullReferences(document);
    rewritten = await ResponseContract.fromDocument(document);
  });

  it('refuses a null under `{nullable: true, type: object, allOf: [$ref]}`, naming the operation, status, path and value', () => {
    const [violation] = written.check(get(`/things/${ID}`, 200, 'application/json', { id: ID, sample: null }));
    expect(violation).toContain(`GET /things/{thing_id} (getThing) answered 200 application/json to /things/${ID}`);
    expect(violation).toMatch(/\$\.sample: .*must be object \(found null\)/);
  });

  it('admits that null once the document is rewritten (libs/common/openapi-nullable.ts), and still checks the reference', () => {
    expect(rewritten.check(get(`/things/${ID}`, 200, 'application/json', { id: ID, sample: null }))).toEqual([]);
    expect(rewritten.check(get(`/things/${ID}`, 200, 'application/json', { id: ID, sample: { rows: 3 } }))).toEqual([]);
    const [violation] = rewritten.check(
      get(`/things/${ID}`, 200, 'application/json', { id: ID, sample: { rows: 'three' } }),
    );
    expect(violation).toMatch(/\$\.sample/);
  });

  it('reports a missing member and a wrong type at their JSON paths', () => {
    const [violation] = rewritten.check(get(`/things/${ID}`, 200, 'application/json', { id: 7 }));
    expect(violation).toMatch(/\$\.id: .*must be string \(found 7\)/);
    expect(violation).toMatch(/must have required property 'sample'/);
  });

  it('reports a status the operation does not declare', () => {
    const [violation] = rewritten.check(get(`/things/${ID}`, 403, 'application/problem+json', { title: 'Forbidden' }));
    expect(violation).toContain('answered 403');
    expect(violation).toMatch(/status code/);
  });

  it('checks error bodies against their own schema', () => {
    expect(rewritten.check(get(`/things/${ID}`, 404, 'application/problem+json', { title: 'Not found' }))).toEqual([]);
    const [violation] = rewritten.check(get(`/things/${ID}`, 404, 'application/problem+json', { detail: 'x' }));
    expect(violation).toMatch(/required property 'title'/);
  });

  it('reports a media type the response does not list, and a CSV file under an object schema', () => {
    const [html] = rewritten.check(get(`/things/${ID}`, 200, 'text/html', '<p>hi</p>'));
    expect(html).toMatch(/media type "text\/html" does not match/);
    const [csv] = rewritten.check(get('/things/export', 200, 'text/csv; charset=utf-8', 'id\n1\n'));
    expect(csv).toMatch(/must be object/);
  });

  it('reports JSON that does not parse', () => {
    const [violation] = rewritten.check({ ...get(`/things/${ID}`, 200, 'application/json'), unparsable: '{"id":' });
    expect(violation).toContain('body is not JSON: {"id":');
  });

  it('reports a schema that does not compile instead of admitting anything under it', async () => {
    const broken = await ResponseContract.fromDocument(
      documentWith({ type: 'object', properties: { id: { type: 'string', pattern: '([a-z' } } }),
    );
    const [violation] = broken.check(get(`/things/${ID}`, 200, 'application/json', { id: ID }));
    expect(violation).toMatch(/schema of 200 application\/json does not compile/);
  });

  it('leaves paths the document does not list alone (Swagger UI, a 404 for an unknown path)', () => {
    expect(rewritten.check(get('/docs/', 200, 'text/html', '<html></html>'))).toEqual([]);
    expect(rewritten.check(get('/nowhere', 404, 'application/problem+json', {}))).toEqual([]);
  });
});
