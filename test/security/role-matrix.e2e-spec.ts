import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import { fillParams, request, sample, walk } from './openapi-walk.js';

const MATRIX = join(dirname(fileURLToPath(import.meta.url)), 'role-matrix.json');
const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

/** The access rule of an operation as the matrix writes it: `public`, `authenticated`, `system-admin(-or-self)` or the least workspace role. */
function ruleOf(access: { rule?: string; role?: string; orSelf?: string } | undefined): string {
  if (!access?.rule) return 'none';
  if (access.rule === 'workspace') return access.role!;
  if (access.rule === 'system-admin') return access.orSelf ? 'system-admin-or-self' : 'system-admin';
  return access.rule;
}

/**
 * The reviewed role matrix (role-matrix.json: operation -> who may call it) against the guard
 * metadata the served document carries (`x-access`): an operation missing from the file, a
 * file entry that no longer exists, or a rule that differs fails. `UPDATE_ROLE_MATRIX=1`
 * rewrites the file; review its diff like code. Then every workspace write is called by a
 * member one role below its threshold, which must be refused (403).
 */
describe('security: role matrix', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;

  beforeAll(async () => {
    ({ t, document, a } = await startSweep('matrix'));
  });
  afterAll(async () => t?.close());

  it('matches the guard metadata of every served operation', () => {
    const served = Object.fromEntries(walk(document).map((op) => [`${op.method} ${op.path}`, ruleOf(op.operation['x-access'] as never)]));
    if (process.env.UPDATE_ROLE_MATRIX === '1') writeFileSync(MATRIX, `${JSON.stringify(Object.fromEntries(Object.entries(served).sort(([x], [y]) => x.localeCompare(y))), null, 2)}\n`);
    const reviewed = JSON.parse(readFileSync(MATRIX, 'utf8')) as Record<string, string>;
    const missing = Object.keys(served).filter((k) => !(k in reviewed));
    const stale = Object.keys(reviewed).filter((k) => !(k in served));
    const differ = Object.keys(served).filter((k) => k in reviewed && reviewed[k] !== served[k]).map((k) => `${k}: matrix says ${reviewed[k]}, the guard ${served[k]}`);
    expect({ missing, stale, differ }).toEqual({ missing: [], stale: [], differ: [] });
    expect(Object.values(served).filter((r) => r === 'none')).toEqual([]);
  });

  it('refuses every workspace write to a member one role below its threshold', async () => {
    const below: Record<string, { auth: Record<string, string> } | undefined> = { member: a.viewer, admin: a.member, owner: undefined, viewer: undefined };
    const admin = await t.factory.actor();
    await t.factory.addMember(a.workspaceId, admin.id, 'admin');
    below.owner = admin;
    const ids = (name: string) => a.params[name];
    const failures: string[] = [];
    let calls = 0;
    for (const op of walk(document)) {
      const rule = ruleOf(op.operation['x-access'] as never);
      if (!(ROLES as readonly string[]).includes(rule) || op.method === 'GET') continue;
      const caller = below[rule];
      if (!caller) continue;
      const query = Object.fromEntries(op.queryParams.filter((q) => ['workspace_id', 'dataset_id'].includes(q.name)).map((q) => [q.name, ids(q.name)]));
      const res = await request(t.http, op, fillParams(op.path, ids), op.bodySchema ? sample(document, op.bodySchema, ids) : undefined, caller.auth).query(query);
      calls++;
      if (res.status !== 403) failures.push(`${op.method} ${op.path} (needs ${rule}): ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
    }
    process.stdout.write(`\nsecurity/role-matrix: ${calls} writes called one role below their threshold, ${calls - failures.length} refused\n`);
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThanOrEqual(20);
  });
});
