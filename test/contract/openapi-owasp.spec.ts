import { describe, expect, it } from '@jest/globals';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, type OpenApiDocument } from './support/spec-operations.js';

/**
 * The OWASP API Security ruleset (@stoplight/spectral-owasp-ruleset) over the committed document
 * (openapi-drift keeps it equal to the served one): nothing a request takes (parameters, request
 * bodies and every component schema they reach) may be an error, so a new unbounded string, array
 * or integer fails here (docs/security.md, "OWASP API Security ruleset"). Response-side findings
 * are listed there with why they do not apply.
 */

/** Request-side errors that are the ruleset's misreadings, each pinned to where it fires and why. */
const MISREADINGS: Record<string, { at: RegExp; why: string } | undefined> = {
  'owasp:api2:2023-no-credentials-in-url': {
    at: /^paths\.\/workspaces\/\{workspace_id\}\/secrets\/\{secret_id\}(\/reveal)?\.\w+\.parameters\.1\.name$/,
    why: '`secret_id` is the id of a stored secret (a UUID), not a credential; the value never travels in a URL',
  },
  'owasp:api8:2023-define-cors-origin': {
    at: /\.headers$/,
    why: 'a member named `headers` (the headers a SUT connection sends), not a response headers object',
  },
};

/**
 * Rules that read only responses or only warn (this test asserts errors on requests): left out
 * so the run stays short; docs/security.md counts them over the whole document.
 */
const RESPONSE_ONLY = [
  'owasp:api4:2023-rate-limit',
  'owasp:api4:2023-rate-limit-retry-after',
  'owasp:api4:2023-rate-limit-responses-429',
  'owasp:api8:2023-define-error-validation',
  'owasp:api8:2023-define-error-responses-401',
  'owasp:api8:2023-define-error-responses-500',
  'owasp:api4:2023-string-restricted',
  'owasp:api3:2023-no-additionalProperties',
  'owasp:api3:2023-constrained-additionalProperties',
  'owasp:api2:2023-read-restricted',
];

/** The component schemas a request reaches: from parameters and request bodies, through every $ref. */
function requestSchemas(document: OpenApiDocument): Set<string> {
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (!reached.has(name)) {
        reached.add(name);
        visit(schemas[name]);
      }
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') visit(value);
  };
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item as Record<string, { parameters?: unknown; requestBody?: unknown }>)) {
      visit(operation?.parameters);
      visit(operation?.requestBody);
    }
  return reached;
}

/** The ruleset's errors on what a request takes, as `rule at path`, less the pinned misreadings (and which of those fired). */
async function requestErrors(text: string): Promise<{ errors: string[]; misread: Set<string> }> {
  const { Spectral, Document } = spectralCore;
  const spectral = new Spectral();
  spectral.setRuleset({
    extends: [owasp as unknown as RulesetDefinition],
    rules: Object.fromEntries(RESPONSE_ONLY.map((rule) => [rule, 'off'])),
  } as RulesetDefinition);
  const results = await spectral.run(new Document(text, Parsers.Json, 'docs/openapi.json'));
  const reached = requestSchemas(JSON.parse(text) as OpenApiDocument);
  const onRequest = (path: Array<string | number>) =>
    (path[0] === 'paths' && (path[3] === 'parameters' || path[3] === 'requestBody')) ||
    (path[0] === 'components' && path[1] === 'schemas' && reached.has(String(path[2])));
  const misread = new Set<string>();
  const errors: string[] = [];
  for (const r of results) {
    if (r.severity !== 0 || !onRequest(r.path)) continue;
    if (MISREADINGS[r.code]?.at.test(r.path.join('.'))) misread.add(String(r.code));
    else errors.push(`${r.code} at ${r.path.join('.')}: ${r.message}`);
  }
  return { errors, misread };
}

describe('OpenAPI document under the OWASP API Security ruleset', () => {
  it('has no error on what a request takes: every string, array and integer bounded', async () => {
    const { errors, misread } = await requestErrors(readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8'));
    expect(errors).toEqual([]);
    // Each misreading still fires where it is pinned, so the list cannot go stale.
    expect([...misread].sort()).toEqual(Object.keys(MISREADINGS).sort());
  }, 120_000);

  it('finds an unbounded member of a schema a request reaches, and leaves a response alone', async () => {
    const planted = {
      openapi: '3.0.3',
      info: { title: 'planted', version: '1' },
      paths: {
        '/things': {
          post: {
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Create' } } } },
            responses: {
              '201': {
                description: 'made',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Made' } } },
              },
            },
          },
        },
      },
      components: {
        schemas: {
          Create: { type: 'object', properties: { part: { $ref: '#/components/schemas/Part' } } },
          Part: {
            type: 'object',
            properties: { names: { type: 'array', items: { type: 'string' } }, n: { type: 'integer' } },
          },
          Made: { type: 'object', properties: { name: { type: 'string' } } },
        },
      },
    };
    const { errors } = await requestErrors(JSON.stringify(planted));
    expect([...new Set(errors.map((e) => e.split(':').slice(0, 3).join(':')))].sort()).toEqual(
      [
        'owasp:api4:2023-array-limit at components.schemas.Part.properties.names',
        'owasp:api4:2023-integer-format at components.schemas.Part.properties.n',
        'owasp:api4:2023-integer-limit-legacy at components.schemas.Part.properties.n',
        'owasp:api4:2023-string-limit at components.schemas.Part.properties.names.items',
      ].sort(),
    );
  }, 60_000);
});
