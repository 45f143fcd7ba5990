import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import { fillParams, request, resolve, sample, validBody, walk } from './openapi-walk.js';

/** Sweeps grow with every operation: far above jest's default, so a loaded machine does not fail them. */
const SWEEP_TIMEOUT_MS = 180_000;

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

/** Tables a refused request may still write to: the audit trail, queued jobs, tokens and the login throttle. */
const LOG_TABLES = new Set(['audit_events', 'jobs', 'auth_tokens', 'login_throttle']);

/**
 * Mass assignment (OWASP API3): every JSON body of every served operation is sent valid plus
 * one server-owned field it does not document, by a caller the access rule lets through (so the
 * body is what is judged). Each must be 400 problem+json whose `detail` or `errors` name the
 * field, and no row may be written anywhere (row counts of every table, before and after each
 * request).
 */
describe('security: mass assignment', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;
  let countAll: string;

  beforeAll(async () => {
    ({ t, document, a } = await startSweep('mass'));
    const tables: Array<{ table_name: string }> = await t.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    // One round trip per snapshot: a row of counts, one column per table.
    countAll = `SELECT ${tables
      .filter((x) => !LOG_TABLES.has(x.table_name))
      .map((x) => `(SELECT count(*)::int FROM "${x.table_name}") AS "${x.table_name}"`)
      .join(', ')}`;
  }, SWEEP_TIMEOUT_MS);
  afterAll(async () => t?.close());

  async function rowCounts(): Promise<Record<string, number>> {
    return (await t.dataSource.query(countAll))[0];
  }

  /** Whether the problem names the field in its detail or in one of its errors (as a whole word). */
  function names(
    body: { detail?: unknown; errors?: Array<{ field?: unknown; message?: unknown }> } | undefined,
    field: string,
  ): boolean {
    const word = new RegExp(`(^|[^A-Za-z0-9_])${field}($|[^A-Za-z0-9_])`);
    return (
      (typeof body?.detail === 'string' && word.test(body.detail)) ||
      (body?.errors ?? []).some((e) => e.field === field || (typeof e.message === 'string' && word.test(e.message)))
    );
  }

  it(
    'refuses every undocumented server-owned field with 400 naming it, and persists nothing',
    async () => {
      const ids = (name: string) => a.params[name];
      const sysadmin = await t.factory.actor({ systemRole: 'admin' });
      const failures: string[] = [];
      const persisted: string[] = [];
      let sent = 0;
      let refused = 0;
      let rows = 0;
      let operations = 0;
      for (const op of walk(document)) {
        if (op.consumes !== 'application/json' || !op.bodySchema) continue;
        const schema = resolve(document, op.bodySchema);
        if (schema.type !== 'object' && !schema.properties) continue;
        operations++;
        const documented = new Set(Object.keys(schema.properties ?? {}));
        const base = validBody(document, op, ids) as Record<string, unknown>;
        const query = Object.fromEntries(
          op.queryParams
            .filter((q) => q.required || q.name in a.params)
            .map((q) => [q.name, ids(q.name) ?? sample(document, q.schema, ids, q.name)]),
        );
        const url = fillParams(op.path, (p) => a.params[p]);
        // System-admin operations by a system admin, the rest by the workspace's owner: access passes.
        const caller = op.rule === 'system-admin' ? sysadmin : a.owner;
        for (const [field, value] of Object.entries(SERVER_OWNED)) {
          if (documented.has(field)) continue;
          const before = await rowCounts();
          const res = await request(
            t.http,
            op,
            url,
            { ...base, [field]: value },
            caller.auth,
            a.params.workspace_id,
          ).query(query);
          const after = await rowCounts();
          sent++;
          const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
          rows += changed.reduce((n, k) => n + Math.abs(after[k] - before[k]), 0);
          if (changed.length)
            persisted.push(
              `${op.method} ${op.path} + ${field}: ${changed.map((k) => `${k} ${before[k]} -> ${after[k]}`).join(', ')}`,
            );
          const problem =
            /^application\/problem\+json/.test(res.headers['content-type'] ?? '') && res.body?.status === 400;
          if (res.status === 400 && problem && names(res.body, field)) refused++;
          else
            failures.push(
              `${op.method} ${op.path} + ${field}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
            );
        }
      }
      console.log(
        `security/mass-assignment: ${operations} operations with a JSON body, ${sent} requests sent with one undocumented server-owned field, ${refused} refused with 400 naming the field, ${rows} rows persisted`,
      );
      expect(failures).toEqual([]);
      expect(persisted).toEqual([]);
      expect(sent).toBeGreaterThanOrEqual(100);
    },
    SWEEP_TIMEOUT_MS,
  );
});
