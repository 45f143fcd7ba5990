import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { snapshot, tenant, type Tenant } from './fixtures.js';
import { fillParams, request, sample, walk } from './openapi-walk.js';

const PUBLIC = new Set(['public', 'optional-user']);
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Query parameters that name a tenant's records; filled with workspace A's ids. */
const RECORD_QUERY = ['workspace_id', 'dataset_id', 'version_id'];
/** Path parameters that name no tenant record: global catalogues every user may read. */
const NOT_RECORDS: Record<string, string> = { name: 'built-in project templates (GET /templates/{name})' };

/**
 * Tenant isolation (OWASP API1, API3, API5), walked from the served OpenAPI document: every
 * operation that names a record (in its path, or a workspace or dataset in its query) is
 * called by an admin of workspace B, and each write also by a viewer of B, with workspace A's
 * ids. Every call must be refused with 403 or 404 problem+json, and A's rows must be
 * byte-identical afterwards. A new operation is swept the moment it is served.
 */
describe('security: tenant isolation sweep', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;
  let b: Tenant;
  let bAdmin: { auth: Record<string, string> };

  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/openapi.json').expect(200)).body as OpenApiDocument;
    [a, b] = [await tenant(t, 'a'), await tenant(t, 'b')];
    const admin = await t.factory.actor();
    await t.factory.addMember(b.workspaceId, admin.id, 'admin');
    bAdmin = admin;
  });
  afterAll(async () => t?.close());

  it('refuses every call on workspace A by members of workspace B, and changes no row of A', async () => {
    const before = await snapshot(t, a.workspaceId);
    const ids = (name: string) => a.params[name];
    const failures: string[] = [];
    let calls = 0;
    let swept = 0;
    for (const op of walk(document)) {
      if (PUBLIC.has(op.rule) || op.pathParams.some((p) => p in NOT_RECORDS)) continue;
      const recordQuery = op.queryParams.filter((q) => RECORD_QUERY.includes(q.name));
      if (!op.pathParams.length && !recordQuery.length && !op.consumes) continue;
      const url = fillParams(op.path, ids);
      const query = Object.fromEntries(recordQuery.map((q) => [q.name, a.params[q.name]]));
      const body = op.bodySchema ? sample(document, op.bodySchema, ids) : undefined;
      // A body that names a workspace or dataset (e.g. POST /workspaces/{id}/... with workspace_id) carries A's too.
      if (!op.pathParams.length && !recordQuery.length && !(body && typeof body === 'object' && Object.values(body).some((v) => Object.values(a.params).includes(v as string)))) continue;
      swept++;
      const callers = WRITES.has(op.method) ? [['admin of B', bAdmin.auth], ['viewer of B', b.viewer.auth]] : [['admin of B', bAdmin.auth]];
      for (const [who, auth] of callers as Array<[string, Record<string, string>]>) {
        calls++;
        const res = await request(t.http, op, url, body, auth).query(query);
        const problem = /^application\/problem\+json/.test(res.headers['content-type'] ?? '') && res.body?.status === res.status;
        if (![403, 404].includes(res.status) || !problem) failures.push(`${op.method} ${op.path} as ${who}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    const after = await snapshot(t, a.workspaceId);
    const changed = before === after ? 0 : diffCount(before, after);
    process.stdout.write(`\nsecurity/isolation: ${swept} operations swept, ${calls} calls made, ${calls - failures.length} refused, ${changed} rows of workspace A changed\n`);
    expect(failures).toEqual([]);
    expect(after).toBe(before);
    expect(swept).toBeGreaterThanOrEqual(40);
  });

  it('still serves workspace A to its own members (the fixtures are live, so the refusals above mean something)', async () => {
    const ids = (name: string) => a.params[name];
    for (const path of ['/workspaces/{workspace_id}', '/datasets/{dataset_id}', '/datasets/{dataset_id}/versions/{version_id}/partitions/{partition_id}/available-metrics', '/workspaces/{workspace_id}/secrets/{secret_id}']) {
      await t.http.get(fillParams(path, ids)).set(a.owner.auth).expect(200);
    }
  });
});

/** How many top-level rows differ between two snapshots. */
function diffCount(before: string, after: string): number {
  const x = JSON.parse(before) as Record<string, unknown[]>;
  const y = JSON.parse(after) as Record<string, unknown[]>;
  let n = 0;
  for (const table of new Set([...Object.keys(x), ...Object.keys(y)])) {
    const xs = new Set((x[table] ?? []).map((r) => JSON.stringify(r)));
    const ys = new Set((y[table] ?? []).map((r) => JSON.stringify(r)));
    for (const r of xs) if (!ys.has(r)) n++;
    for (const r of ys) if (!xs.has(r)) n++;
  }
  return n;
}
