import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import { fillParams, request, resolve, sample, walk } from './openapi-walk.js';

/** Fields the service owns: never accepted from a client unless an operation documents one as input. */
const SERVER_OWNED: Record<string, unknown> = {
  id: '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c10',
  workspace_id: '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c11',
  role: 'owner',
  system_role: 'admin',
  status: 'active',
  state: 'current',
  version: 99,
  created_at: '2020-01-01T00:00:00Z',
  updated_at: '2020-01-01T00:00:00Z',
  created_by: '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c12',
  ciphertext: 'AAAA',
  key_id: 'k_0000000000000000',
  password_hash: '$argon2id$v=19$m=65536,t=3,p=4$AAAA$AAAA',
};

/** Tables whose rows a refused request may still add (the trail of the refusal itself, sessions, jobs). */
const LOG_TABLES = new Set(['audit_events', 'sessions', 'jobs', 'job_events', 'schema_migrations', 'login_attempts']);

/**
 * Mass assignment (OWASP API3): every JSON body of every served operation is sent valid plus
 * one server-owned field it does not document; each must be 400 problem+json naming the
 * field, and no row may be written anywhere.
 */
describe('security: mass assignment', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;

  beforeAll(async () => {
    ({ t, document, a } = await startSweep('mass'));
  });
  afterAll(async () => t?.close());

  async function rowCounts(): Promise<Record<string, number>> {
    const tables: Array<{ table_name: string }> = await t.dataSource.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`);
    const counts: Record<string, number> = {};
    for (const { table_name } of tables.filter((x) => !LOG_TABLES.has(x.table_name))) {
      counts[table_name] = (await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table_name}`))[0].n;
    }
    return counts;
  }

  it('refuses every undocumented server-owned field with 400 naming it, and persists nothing', async () => {
    const ids = (name: string) => a.params[name];
    // System-admin operations are called by a system admin, the rest by the workspace's owner: access passes, so the body is what is judged.
    const sysadmin = await t.factory.actor({ systemRole: 'admin' });
    const before = await rowCounts();
    const failures: string[] = [];
    let sent = 0;
    for (const op of walk(document)) {
      if (op.consumes !== 'application/json' || !op.bodySchema) continue;
      const schema = resolve(document, op.bodySchema);
      if (schema.type !== 'object' && !schema.properties) continue;
      const documented = new Set(Object.keys(schema.properties ?? {}));
      const base = sample(document, op.bodySchema, ids) as Record<string, unknown>;
      const query = Object.fromEntries(op.queryParams.filter((q) => ['workspace_id', 'dataset_id'].includes(q.name)).map((q) => [q.name, ids(q.name)]));
      for (const [field, value] of Object.entries(SERVER_OWNED)) {
        if (documented.has(field)) continue;
        const url = fillParams(op.path, (p) => a.params[p] ?? (p === 'name' ? 'summarisation' : undefined));
        const caller = String(op.operation['x-access']?.rule) === 'system-admin' ? sysadmin : a.owner;
        const res = await request(t.http, op, url, { ...base, [field]: value }, caller.auth).query(query);
        sent++;
        const named = JSON.stringify(res.body ?? {}).includes(field);
        if (res.status !== 400 || !named) failures.push(`${op.method} ${op.path} + ${field}: ${res.status} ${JSON.stringify(res.body).slice(0, 140)}`);
      }
    }
    const after = await rowCounts();
    const persisted = Object.keys(after).filter((k) => after[k] !== before[k]).map((k) => `${k}: ${before[k]} -> ${after[k]}`);
    process.stdout.write(`\nsecurity/mass-assignment: ${sent} requests, ${sent - failures.length} refused naming the field, ${persisted.length} tables changed\n`);
    expect(failures).toEqual([]);
    expect(persisted).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(100);
  });
});
