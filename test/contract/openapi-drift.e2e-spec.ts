import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { documentedOperations, repoRoot, type OpenApiDocument } from './support/spec-operations.js';

/**
 * docs/openapi.json is the committed interface: a change to the code that changes the
 * document fails here until the document is regenerated (`npm run openapi`), so every
 * interface change shows up in review.
 */
const COMMITTED = join(repoRoot, 'docs', 'openapi.json');
const PUBLIC_RULES = new Set(['public', 'optional-user']);

function serialise(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** A readable list of what differs, path by path and schema by schema. */
function describeDrift(committed: OpenApiDocument, served: OpenApiDocument): string[] {
  const lines: string[] = [];
  const compare = (kind: string, a: Record<string, unknown> = {}, b: Record<string, unknown> = {}) => {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a)) lines.push(`  + ${kind} ${key} (new in the code)`);
      else if (!(key in b)) lines.push(`  - ${kind} ${key} (no longer in the code)`);
      else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) lines.push(`  ~ ${kind} ${key} (changed)`);
    }
  };
  compare('path', committed.paths, served.paths);
  compare('schema', committed.components?.schemas, served.components?.schemas);
  const rest = (d: OpenApiDocument) =>
    JSON.stringify({ ...d, paths: undefined, components: { ...d.components, schemas: undefined } });
  if (rest(committed) !== rest(served)) lines.push('  ~ document header (info, security schemes, tags)');
  if (lines.length === 0) lines.push('  ~ member order');
  return lines;
}

/**
 * Protocol endpoints whose 202 is the protocol's acknowledgement, with no body and no work to
 * follow (not the service's accepted work, which names its Location), and the rule that says so.
 */
const PROTOCOL_ACKNOWLEDGEMENTS = new Map([
  ['POST /mcp', 'MCP Streamable HTTP: a notification or response the client posts is answered 202 with no body'],
]);

describe('OpenAPI document', () => {
  let t: TestApp;
  let served: OpenApiDocument;
  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/openapi.json').expect(200);
    served = res.body as OpenApiDocument;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('matches the committed docs/openapi.json (UPDATE_OPENAPI=1 or `npm run openapi` rewrites it)', () => {
    const current = serialise(served);
    if (process.env.UPDATE_OPENAPI === '1') {
      writeFileSync(COMMITTED, current);
      return;
    }
    if (!existsSync(COMMITTED)) throw new Error('docs/openapi.json is missing: run `npm run openapi` and commit it');
    const committed = readFileSync(COMMITTED, 'utf8');
    if (committed !== current) {
      throw new Error(
        [
          'docs/openapi.json differs from the document the code serves:',
          ...describeDrift(JSON.parse(committed), served),
          'Run `npm run openapi` and commit docs/openapi.json with the change.',
        ].join('\n'),
      );
    }
  });

  it('gives every operation a summary or description', () => {
    const missing = [...documentedOperations(served).values()]
      .filter(({ operation }) => !operation.summary?.trim() && !operation.description?.trim())
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });

  it('gives every success response with a body (not 204 or 304) a schema', () => {
    const missing: string[] = [];
    for (const { method, path, operation } of documentedOperations(served).values()) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!/^2\d\d$/.test(status) || status === '204') continue;
        if (status === '202' && PROTOCOL_ACKNOWLEDGEMENTS.has(`${method} ${path}`)) continue;
        const schemas = Object.values(response.content ?? {}).map((media) => media.schema);
        if (schemas.length === 0 || schemas.some((schema) => !schema)) missing.push(`${method} ${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares a Location header on every 202 (where to follow the work: libs/queue/accepted.decorator.ts)', () => {
    const accepted: string[] = [];
    const missing: string[] = [];
    for (const { method, path, operation } of documentedOperations(served).values()) {
      const response = (operation.responses ?? {})['202'] as { headers?: Record<string, unknown> } | undefined;
      if (!response || PROTOCOL_ACKNOWLEDGEMENTS.has(`${method} ${path}`)) continue;
      accepted.push(`${method} ${path}`);
      if (!response.headers?.Location) missing.push(`${method} ${path}`);
    }
    expect(missing).toEqual([]);
    expect(accepted.length).toBeGreaterThanOrEqual(8);
  });

  it('describes every tag (src/openapi.ts TAG_DESCRIPTIONS)', () => {
    const tags = (served as { tags?: Array<{ name: string; description?: string }> }).tags ?? [];
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.filter((tag) => !tag.description?.trim()).map((tag) => tag.name)).toEqual([]);
  });

  it('states the access rule of every operation (x-access)', () => {
    const missing = [...documentedOperations(served).values()]
      .filter(({ operation }) => !operation['x-access']?.rule)
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });

  it('declares 401 with the ProblemResponse schema on every operation that needs a token', () => {
    const missing: string[] = [];
    for (const { method, path, operation } of documentedOperations(served).values()) {
      if (PUBLIC_RULES.has(operation['x-access']?.rule ?? '')) continue;
      const unauthorized = operation.responses?.['401'];
      const refs = Object.values(unauthorized?.content ?? {}).map(
        (media) => (media.schema as { $ref?: string } | undefined)?.$ref,
      );
      if (!refs.includes('#/components/schemas/ProblemResponse')) missing.push(`${method} ${path}`);
    }
    expect(missing).toEqual([]);
  });
});
