import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUDITED_OPERATIONS, AUDITED_READS, AUDITED_WHEN_CHANGED } from './audited-operations.js';
import { documentedOperations, repoRoot, type OpenApiDocument } from './support/spec-operations.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The dotted string literals (`'member.role_changed'`) of the service's code: where actions are named. */
function dottedLiterals(): Set<string> {
  const found = new Set<string>();
  for (const root of ['src', 'libs'])
    for (const file of readdirSync(join(repoRoot, root), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
      for (const m of readFileSync(join(repoRoot, root, file), 'utf8').matchAll(/'([a-z0-9_]+(?:\.[a-z0-9_]+)+)'/g))
        found.add(m[1]);
    }
  return found;
}

/**
 * What the list says against the document and the code: a write it leaves out, an operation it
 * names that the document does not, an action the code never names, an action docs/audit.md
 * does not list. One line per problem.
 */
function coverageProblems(
  document: OpenApiDocument,
  audited: typeof AUDITED_OPERATIONS,
  reads: typeof AUDITED_READS,
  code: Set<string>,
  docs: string,
): string[] {
  const problems: string[] = [];
  const byId = new Map([...documentedOperations(document).values()].map((op) => [op.operation.operationId, op]));
  for (const [id, op] of byId)
    if (WRITES.has(op.method) && !((id as string) in audited))
      problems.push(
        `${op.method} ${op.path} (${String(id)}) changes something: name its audit actions, or why it has none`,
      );
  for (const [id, entry] of [...Object.entries(audited), ...Object.entries(reads)]) {
    if (!byId.has(id)) problems.push(`${id} is not an operation of the document`);
    if (!Array.isArray(entry)) continue;
    for (const action of entry as string[]) {
      if (!code.has(action)) problems.push(`${id}: no code names the action ${action}`);
      if (!docs.includes(`\`${action}\``)) problems.push(`${id}: docs/audit.md does not list ${action}`);
    }
  }
  return problems;
}

describe('the audit log covers every operation that changes something', () => {
  const committed = JSON.parse(readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8')) as OpenApiDocument;
  const docs = readFileSync(join(repoRoot, 'docs', 'audit.md'), 'utf8');

  it('every write of docs/openapi.json names the actions it records (or why none), each in the code and in docs/audit.md', () => {
    expect(Object.keys(AUDITED_OPERATIONS).length).toBeGreaterThan(150);
    expect(coverageProblems(committed, AUDITED_OPERATIONS, AUDITED_READS, dottedLiterals(), docs)).toEqual([]);
  });

  it('names as "audited when it changes something" only operations that record actions', () => {
    expect(Object.keys(AUDITED_WHEN_CHANGED).filter((id) => !Array.isArray(AUDITED_OPERATIONS[id]))).toEqual([]);
  });

  it('sees a write left out, a stale entry, an action no code names and one the docs miss', () => {
    const document: OpenApiDocument = {
      paths: {
        '/a': { post: { operationId: 'createA', responses: {} }, get: { operationId: 'getA', responses: {} } },
        '/b': { delete: { operationId: 'deleteB', responses: {} } },
      },
    };
    expect(
      coverageProblems(
        document,
        { deleteB: ['b.deleted', 'b.gone'], createGone: { none: 'reads' } },
        { getA: ['a.read'] },
        new Set(['b.deleted', 'a.read']),
        '`b.deleted` `b.gone`',
      ),
    ).toEqual([
      'POST /a (createA) changes something: name its audit actions, or why it has none',
      'deleteB: no code names the action b.gone',
      'createGone is not an operation of the document',
      'getA: docs/audit.md does not list a.read',
    ]);
  });
});
