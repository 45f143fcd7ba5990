import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedOperations, repoRoot, type OpenApiDocument } from './support/spec-operations.js';

/**
 * Client generators (swagger-typescript-api for sdk/, openapi-ts, orval) name their methods after
 * the operationIds, so each one reads as a method name: camelCase, a verb from this list first,
 * unique in the document. Each handler states its own with @ApiOperation({ operationId }); one
 * left out gets Nest's `SomethingController_method`, which fails here. docs/api-conventions.md,
 * "Operation ids", records the rule.
 */
const OPERATION_VERBS = [
  // Records: GET one / GET a list, POST a new one, PATCH (or a PUT that changes only what it is
  // sent), PUT a whole one, DELETE.
  'get',
  'list',
  'create',
  'update',
  'replace',
  'delete',
  // Members of a collection that are not records of their own (members, tags).
  'add',
  'remove',
  'tag',
  'untag',
  // Domain verbs.
  'accept',
  'adjudicate',
  'assign',
  'attach',
  'cancel',
  'claim',
  'commit',
  'deactivate',
  'demote',
  'detach',
  'detect',
  'discard',
  'download',
  'edit',
  'export',
  'insert',
  'issue',
  'land',
  'logout',
  'map',
  'move',
  'promote',
  'publish',
  'query',
  'reactivate',
  'recompute',
  'redeploy',
  'regenerate',
  'register',
  'release',
  'rerun',
  'resend',
  'reset',
  'resolve',
  'reveal',
  'revoke',
  'run',
  'seal',
  'send',
  'set',
  'skip',
  'start',
  'stop',
  'stream',
  'submit',
  'sweep',
  'test',
  'upload',
  'validate',
  'verify',
] as const;

const SHAPE = /^[a-z][a-zA-Z0-9]*$/;
const VERB = new RegExp(`^(?:${OPERATION_VERBS.join('|')})(?:[A-Z0-9]|$)`);

/** What is wrong with the document's operationIds, one line per problem (empty when none). */
function operationIdProblems(document: OpenApiDocument): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const { method, path, operation } of documentedOperations(document).values()) {
    const where = `${method} ${path}`;
    const id = operation.operationId;
    if (typeof id !== 'string' || id === '') {
      problems.push(`${where}: no operationId`);
      continue;
    }
    if (!SHAPE.test(id)) problems.push(`${where}: ${id} is not camelCase (${SHAPE})`);
    else if (!VERB.test(id)) problems.push(`${where}: ${id} does not start with a verb of OPERATION_VERBS`);
    const other = seen.get(id);
    if (other) problems.push(`${where}: ${id} is also the operationId of ${other}`);
    else seen.set(id, where);
  }
  return problems;
}

describe('operationIds', () => {
  const committed = JSON.parse(readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8')) as OpenApiDocument;

  it('name every operation of docs/openapi.json as a method: camelCase, verb first, unique', () => {
    expect(documentedOperations(committed).size).toBeGreaterThan(200);
    expect(operationIdProblems(committed)).toEqual([]);
  });

  it('refuse a missing, a Nest-default, a verbless and a repeated id', () => {
    const operation = (operationId?: string) => ({
      ...(operationId === undefined ? {} : { operationId }),
      responses: {},
    });
    const bad: OpenApiDocument = {
      paths: {
        '/a': { get: operation(), post: operation('SecretsController_list') },
        '/b': { get: operation('secretList'), post: operation('listSecrets') },
        '/c': { get: operation('listSecrets'), delete: operation('listing') },
      },
    };
    expect(operationIdProblems(bad)).toEqual([
      'GET /a: no operationId',
      'POST /a: SecretsController_list is not camelCase (/^[a-z][a-zA-Z0-9]*$/)',
      'GET /b: secretList does not start with a verb of OPERATION_VERBS',
      'GET /c: listSecrets is also the operationId of POST /b',
      'DELETE /c: listing does not start with a verb of OPERATION_VERBS',
    ]);
  });
});
