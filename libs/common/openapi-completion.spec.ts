import { describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import { completeOpenApiDocument, composeExample, exampleProblem } from './openapi-completion.js';
import { UuidParam } from './uuid-param.js';
import '#libs/auth/password-hasher.js'; // registers auth_busy

UuidParam('thing_id');

function documentOf(paths: Record<string, unknown>): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths, components: {} } as OpenAPIObject;
}

const workspaceWrite = { rule: 'workspace', role: 'member', from: { param: 'workspace_id' } };

describe('completeOpenApiDocument', () => {
  it('declares every path parameter, typed as a UUID where the route validates one', () => {
    const doc = completeOpenApiDocument(
      documentOf({
        '/workspaces/{workspace_id}/things/{thing_id}/{name}': {
          get: {
            tags: ['things'],
            summary: 'Reads a thing',
            parameters: [{ name: 'thing_id', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { 200: { description: 'ok' } },
            'x-access': workspaceWrite,
          },
        },
      }),
      { tags: { things: 'Things.' }, servers: [{ url: '/' }] },
    );
    const parameters = doc.paths['/workspaces/{workspace_id}/things/{thing_id}/{name}'].get!.parameters as Array<{
      name: string;
      in: string;
      required: boolean;
      schema: unknown;
    }>;
    expect(parameters.map((p) => [p.name, p.in, p.required, p.schema])).toEqual([
      ['workspace_id', 'path', true, { type: 'string', format: 'uuid' }],
      ['thing_id', 'path', true, { type: 'string', format: 'uuid' }],
      ['name', 'path', true, { type: 'string' }],
    ]);
  });

  it('lets a protected operation take the token from either scheme, and leaves public ones alone', () => {
    const doc = completeOpenApiDocument(
      documentOf({
        '/things': {
          get: {
            tags: ['things'],
            summary: 's',
            security: [{ bearer: [] }],
            responses: { 200: { description: 'ok' } },
            'x-access': { rule: 'authenticated' },
          },
          post: {
            tags: ['things'],
            summary: 's',
            responses: { 200: { description: 'ok' } },
            'x-access': { rule: 'public' },
          },
        },
      }),
      { tags: { things: 'Things.' }, servers: [{ url: '/' }] },
    );
    expect(doc.paths['/things'].get!.security).toEqual([{ bearer: [] }, { oauth2: [] }]);
    expect(doc.paths['/things'].post!.security).toBeUndefined();
    expect(Object.keys(doc.paths['/things'].post!.responses)).not.toContain('401');
  });

  it('documents the error statuses an operation can answer as problem+json with an example per code', () => {
    const doc = completeOpenApiDocument(
      documentOf({
        '/workspaces/{workspace_id}/things': {
          post: {
            tags: ['things'],
            summary: 'Creates a thing. Names are unique in the workspace.',
            requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
            responses: {
              201: { description: 'created' },
              429: {
                description: 'auth_busy: too many passwords being checked at once',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/ProblemResponse' } } },
              },
            },
            'x-access': workspaceWrite,
          },
        },
        '/live': {
          get: {
            tags: ['things'],
            summary: 'Alive',
            responses: { 200: { description: 'ok' } },
            'x-access': { rule: 'public' },
          },
        },
      }),
      { tags: { things: 'Things.' }, servers: [{ url: '/' }] },
    );
    const operation = doc.paths['/workspaces/{workspace_id}/things'].post!;
    const responses = operation.responses as Record<
      string,
      { content: Record<string, { schema: unknown; examples: Record<string, { $ref: string }> }>; headers?: object }
    >;
    expect(Object.keys(responses).sort()).toEqual(['201', '400', '401', '404', '409', '413', '415', '429', '503']);
    for (const status of ['400', '401', '404', '409', '413', '415', '429', '503']) {
      expect(Object.keys(responses[status].content)).toEqual(['application/problem+json']);
      expect(responses[status].content['application/problem+json'].schema).toEqual({
        $ref: '#/components/schemas/ProblemResponse',
      });
    }
    const refs = (status: string) =>
      Object.values(responses[status].content['application/problem+json'].examples).map((e) => e.$ref);
    expect(refs('400')).toEqual([
      '#/components/examples/problem_validation_failed',
      '#/components/examples/problem_invalid_identifier',
      '#/components/examples/problem_malformed_json',
      '#/components/examples/problem_json_too_deep',
    ]);
    // The operation's own 429 and the rate limiter's, which every operation can answer.
    expect(refs('429')).toEqual([
      '#/components/examples/problem_auth_busy',
      '#/components/examples/problem_rate_limit_exceeded',
    ]);
    expect(refs('409')).toEqual([
      '#/components/examples/problem_conflict',
      '#/components/examples/problem_unique_violation',
    ]);
    expect(responses['503'].headers).toHaveProperty('Retry-After');
    const examples = doc.components!.examples as Record<string, { value: Record<string, unknown> }>;
    for (const [name, example] of Object.entries(examples)) {
      expect(example.value).toEqual(
        expect.objectContaining({
          error_code: name.replace(/^problem_/, ''),
          type: `/problems/${name.replace(/^problem_/, '').replace(/_/g, '-')}`,
        }),
      );
    }
    expect(examples.problem_not_found.value.status).toBe(404);
    expect(examples.problem_auth_busy.value.status).toBe(429);
    // Liveness needs nothing that can be down; it is counted as a read like any other.
    expect(Object.keys(doc.paths['/live'].get!.responses)).toEqual(['200', '429']);
    // The doc comment is split into a one-line summary and the description.
    expect(operation.summary).toBe('Creates a thing');
    expect(operation.description).toBe('Creates a thing. Names are unique in the workspace.');
  });

  it("documents every operation's rate-limit class, its 429 with Retry-After, and the RateLimit fields on each 2xx and 4xx", () => {
    const doc = completeOpenApiDocument(
      documentOf({
        '/things': {
          get: {
            tags: ['things'],
            summary: 's',
            responses: { 200: { description: 'ok' } },
            'x-access': workspaceWrite,
          },
          post: {
            tags: ['things'],
            summary: 's',
            responses: { 202: { description: 'accepted' } },
            'x-access': workspaceWrite,
            'x-rate-limit': 'ingestion',
          },
        },
      }),
      { tags: {}, servers: [] },
    );
    const get = doc.paths['/things'].get as unknown as Record<string, unknown> & {
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    const post = doc.paths['/things'].post as unknown as Record<string, unknown>;
    expect([get['x-rate-limit'], post['x-rate-limit']]).toEqual(['read', 'ingestion']);
    const fields = {
      'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
      RateLimit: { $ref: '#/components/headers/RateLimit' },
    };
    for (const [status, response] of Object.entries(get.responses)) {
      if (/^[24]/.test(status)) expect(response.headers).toEqual(expect.objectContaining(fields));
      else expect(response.headers ?? {}).not.toHaveProperty('RateLimit');
    }
    expect(Object.keys(get.responses['429'].headers!).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    const headers = doc.components!.headers as Record<string, { schema: { example: string } }>;
    expect(headers['RateLimit-Policy'].schema.example).toBe('"write";q=300;w=60');
    expect(headers.RateLimit.schema.example).toBe('"write";r=287;t=42');
  });

  it('describes every tag it knows and names the server', () => {
    const paths = {
      '/things': {
        get: {
          tags: ['things'],
          summary: 's',
          responses: { 200: { description: 'ok' } },
          'x-access': { rule: 'public' },
        },
      },
    };
    const doc = completeOpenApiDocument(documentOf(paths), { tags: { things: 'Things.' }, servers: [{ url: '/' }] });
    expect(doc.tags).toEqual([{ name: 'things', description: 'Things.' }]);
    expect(doc.servers).toEqual([{ url: '/' }]);
    expect(completeOpenApiDocument(documentOf(paths), { tags: {}, servers: [] }).tags).toEqual([{ name: 'things' }]);
  });

  it('builds example problems from the error-code registry', () => {
    expect(exampleProblem('unauthenticated')).toEqual(
      expect.objectContaining({ status: 401, title: 'Authentication required', error_code: 'unauthenticated' }),
    );
    expect(() => exampleProblem('no_such_code')).toThrow(/no_such_code/);
  });
});

describe('request body examples', () => {
  const schemas = {
    Thing: {
      type: 'object',
      properties: {
        name: { type: 'string', example: 'faq-golden-set' },
        kind: { type: 'string', enum: ['rows', 'traces'] },
        limit: { type: 'integer', default: 50 },
        note: { type: 'string' },
        owner: { nullable: true, type: 'object', allOf: [{ $ref: '#/components/schemas/Owner' }] },
        tags: { type: 'array', items: { type: 'string', example: 'golden' } },
        parts: { type: 'array', items: { $ref: '#/components/schemas/Part' } },
      },
      required: ['name', 'kind'],
    },
    Owner: {
      type: 'object',
      properties: { id: { type: 'string', format: 'uuid', example: '2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a' } },
    },
    Part: {
      type: 'object',
      properties: { label: { type: 'string', example: 'billing' }, child: { $ref: '#/components/schemas/Part' } },
    },
    Whole: {
      type: 'object',
      properties: { a: { type: 'string', example: 'x' }, b: { type: 'string', example: 'y' } },
      example: { a: 'chosen' },
    },
    Mixed: { allOf: [{ $ref: '#/components/schemas/Owner' }, { $ref: '#/components/schemas/Whole' }] },
    Nothing: { type: 'object', properties: { free: { type: 'string' } } },
  };
  const documentWithBody = (content: Record<string, unknown>) =>
    ({
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      components: { schemas },
      paths: {
        '/things': {
          post: {
            tags: ['things'],
            summary: 's',
            requestBody: { required: true, content },
            responses: { 201: { description: 'created' } },
            'x-access': { rule: 'public' },
          },
        },
      },
    }) as unknown as OpenAPIObject;
  const media = (doc: OpenAPIObject, type: string) =>
    (doc.paths['/things'].post!.requestBody as { content: Record<string, { example?: unknown; examples?: unknown }> })
      .content[type];

  it("composes an object from its properties' examples, through $ref, nullable allOf and arrays, with enum and default values", () => {
    expect(composeExample({ $ref: '#/components/schemas/Thing' }, schemas)).toEqual({
      name: 'faq-golden-set',
      kind: 'rows',
      limit: 50,
      owner: { id: '2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a' },
      tags: ['golden'],
      // A schema that contains itself stops at the second visit.
      parts: [{ label: 'billing' }],
    });
  });

  it('prefers an example set on the schema itself, and merges the parts of an allOf', () => {
    expect(composeExample({ $ref: '#/components/schemas/Whole' }, schemas)).toEqual({ a: 'chosen' });
    expect(composeExample({ $ref: '#/components/schemas/Mixed' }, schemas)).toEqual({
      id: '2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a',
      a: 'chosen',
    });
    expect(composeExample({ oneOf: [{ type: 'string' }, { type: 'number', example: 3 }] }, schemas)).toBe(3);
  });

  it('gives nothing where no part of the schema has an example', () => {
    expect(composeExample({ $ref: '#/components/schemas/Nothing' }, schemas)).toBeUndefined();
    expect(composeExample({ $ref: '#/components/schemas/Missing' }, schemas)).toBeUndefined();
    expect(composeExample({ type: 'array', items: { type: 'string' } }, schemas)).toBeUndefined();
  });

  it('sets the example of JSON and form request bodies that have none, and leaves the others', () => {
    const doc = completeOpenApiDocument(
      documentWithBody({
        'application/json': { schema: { $ref: '#/components/schemas/Part' } },
        'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/Part' } },
        'application/merge-patch+json': {
          schema: { $ref: '#/components/schemas/Part' },
          examples: { one: { value: { label: 'kept' } } },
        },
        'multipart/form-data': { schema: { $ref: '#/components/schemas/Part' } },
        'application/x-ndjson': { schema: { $ref: '#/components/schemas/Part' } },
      }),
      { tags: {}, servers: [] },
    );
    expect(media(doc, 'application/json').example).toEqual({ label: 'billing' });
    expect(media(doc, 'application/x-www-form-urlencoded').example).toEqual({ label: 'billing' });
    expect(media(doc, 'application/merge-patch+json').example).toBeUndefined();
    expect(media(doc, 'multipart/form-data').example).toBeUndefined();
    expect(media(doc, 'application/x-ndjson').example).toBeUndefined();
    // A copy: changing the body's example leaves the schema's examples alone.
    (media(doc, 'application/json').example as { label: string }).label = 'changed';
    expect(schemas.Part.properties.label.example).toBe('billing');
  });

  it('keeps an example the operation already gives, and sets none it cannot compose', () => {
    const doc = completeOpenApiDocument(
      documentWithBody({
        'application/json': { schema: { $ref: '#/components/schemas/Part' }, example: { label: 'given' } },
        'application/problem+json': { schema: { $ref: '#/components/schemas/Nothing' } },
      }),
      { tags: {}, servers: [] },
    );
    expect(media(doc, 'application/json').example).toEqual({ label: 'given' });
    expect(media(doc, 'application/problem+json')).not.toHaveProperty('example');
  });
});
