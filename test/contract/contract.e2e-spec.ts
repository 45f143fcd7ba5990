import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { PENDING_OPERATIONS } from './pending-operations.js';
import {
  contractDir,
  documentedOperations,
  loadSpecOperations,
  operationKey,
  type OpenApiDocument,
  type SpecOperation,
} from './support/spec-operations.js';

/**
 * The contract: each of the 245 operations of the specification is in the served OpenAPI
 * document with its declared success status, or is listed in pending-operations.ts. The
 * pending list may only shrink: an implemented operation still listed there fails too.
 */
describe('contract: the specification against /openapi.json', () => {
  const spec = loadSpecOperations();
  let t: TestApp;
  let documented: ReturnType<typeof documentedOperations>;
  const pendingKeys = new Set(PENDING_OPERATIONS.map(([method, path]) => operationKey(method, path)));
  const isImplemented = (op: SpecOperation) => documented.has(operationKey(op.method, op.path));

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/openapi.json').expect(200);
    documented = documentedOperations(res.body as OpenApiDocument);
  });
  afterAll(async () => {
    if (documented) {
      const implemented = spec.filter(isImplemented).length;
      const pending = spec.filter(
        (op) => !isImplemented(op) && pendingKeys.has(operationKey(op.method, op.path)),
      ).length;
      const extra = [...documented.keys()].filter(
        (key) => !spec.some((op) => operationKey(op.method, op.path) === key),
      );
      process.stdout.write(
        `\ncontract: ${implemented} implemented, ${pending} pending, ${spec.length - implemented - pending} missing of ${spec.length} operations` +
          (extra.length ? `; ${extra.length} beyond the specification: ${extra.join(', ')}` : '') +
          '\n',
      );
    }
    await t?.close();
  });

  it('holds the 245 operations of the specification, each once', () => {
    expect(spec).toHaveLength(245);
    const keys = spec.map((op) => operationKey(op.method, op.path));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('documents every operation, or lists it in pending-operations.ts', () => {
    const missing = spec
      .filter((op) => !isImplemented(op) && !pendingKeys.has(operationKey(op.method, op.path)))
      .map((op) => `${op.method} ${op.path} (section ${op.section})`);
    expect(missing).toEqual([]);
  });

  it('lists no implemented operation as pending (remove it from pending-operations.ts)', () => {
    const stale = spec
      .filter((op) => isImplemented(op) && pendingKeys.has(operationKey(op.method, op.path)))
      .map((op) => `${op.method} ${op.path}`);
    expect(stale).toEqual([]);
  });

  it('lists only operations of the specification as pending, each once', () => {
    const specKeys = new Set(spec.map((op) => operationKey(op.method, op.path)));
    const unknown = PENDING_OPERATIONS.filter(([method, path]) => !specKeys.has(operationKey(method, path))).map(
      ([method, path]) => `${method} ${path}`,
    );
    expect(unknown).toEqual([]);
    expect(pendingKeys.size).toBe(PENDING_OPERATIONS.length);
  });

  it('declares the specified success statuses of every implemented operation', () => {
    const wrong: string[] = [];
    for (const op of spec.filter(isImplemented)) {
      const { operation } = documented.get(operationKey(op.method, op.path))!;
      const declared = Object.keys(operation.responses ?? {});
      const absent = op.success.filter((status) => !declared.includes(String(status)));
      if (absent.length)
        wrong.push(
          `${op.method} ${op.path}: declares ${declared.join(', ') || 'nothing'}, the specification says ${op.success.join(' or ')}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  // Rewrites pending-operations.ts to exactly the operations not yet implemented (review the diff).
  if (process.env.UPDATE_PENDING === '1') {
    it('rewrites pending-operations.ts', () => {
      const bySection = new Map<string, SpecOperation[]>();
      for (const op of spec.filter((o) => !isImplemented(o)))
        bySection.set(op.section, [...(bySection.get(op.section) ?? []), op]);
      const lines = [...bySection.entries()].flatMap(([section, ops]) => [
        `  // ${section}`,
        ...ops.map((op) => `  ['${op.method}', '${op.path}'],`),
      ]);
      const header = [
        '/**',
        ' * Operations of the specification that later issues implement. contract.e2e-spec.ts fails for',
        ' * an operation that is neither implemented nor listed here, and for one listed here that is',
        ' * implemented: delete its line when the family lands. `UPDATE_PENDING=1 npm test --',
        ' * test/contract/contract` rewrites this file from what the served document lacks.',
        ' */',
        "export const PENDING_OPERATIONS: ReadonlyArray<readonly [method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string]> = [",
      ];
      writeFileSync(join(contractDir, 'pending-operations.ts'), `${[...header, ...lines, '];'].join('\n')}\n`);
    });
  }
});
