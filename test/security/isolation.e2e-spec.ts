import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { Actor } from '../factories/factory.js';
import { mcpClient } from '../utils/mcp.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { FIXTURES, NAMED_BY_TEXT, snapshot, tenant, type Tenant } from './fixtures.js';
import { call, recordArgs, toolArgs } from './mcp-walk.js';
import {
  fillParams,
  fixtureFor,
  isFixedParam,
  request,
  resolve,
  sample,
  validBody,
  walk,
  type WalkedOperation,
} from './openapi-walk.js';

/** Sweeps grow with every operation: far above jest's default, so a loaded machine does not fail them. */
const SWEEP_TIMEOUT_MS = 180_000;

/** Access rules under which no record is protected (by the access rules): the sweep leaves these operations alone. */
const PUBLIC = new Set(['public', 'optional-user']);
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Path parameters that name no tenant record, with the value to send and why. Keep this small:
 * a parameter that names a record needs a fixture in fixtures.ts instead.
 */
const NOT_RECORDS: Record<string, { value: string; reason: string }> = {
  parent_id: { value: 'c1', reason: 'a session id inside the run {run_id} names' },
  config_version: {
    value: '1',
    reason: 'a version number inside the metric config {config_name} names; every config has a version 1',
  },
  key: { value: 'summary', reason: 'a built-in report section key, the same in every workspace' },
  section_key: { value: 'metrics_overview', reason: 'a built-in report section key, the same in every workspace' },
  version: {
    value: 'latest',
    reason: 'a version label inside the test plan {ref} names, or an SDK or examples release',
  },
};
/**
 * Body members that name a global record rather than a tenant's: users exist outside any
 * workspace, and an admin of B may add any user to B (POST /workspaces/{id}/members). They are
 * filled with A's member but never count as one of A's records in a mixed call.
 */
const GLOBAL_BODY_REFS = new Set(['user_id']);

/** Where a request names a record: a path parameter, a query parameter or a top-level body member. */
interface Slot {
  in: 'path' | 'query' | 'body';
  name: string;
}

function refused(res: { status: number; headers: Record<string, string>; body: { status?: number } }): boolean {
  return (
    [403, 404].includes(res.status) &&
    /^application\/problem\+json/.test(res.headers['content-type'] ?? '') &&
    res.body?.status === res.status
  );
}

/**
 * Tenant isolation (OWASP API1, API3, API5), walked from the served OpenAPI document.
 *
 * 1. Every operation that names a record (in its path, or a workspace or record in its query or
 *    body) is called by an admin of workspace B, by an API key of B whose creator administers A
 *    too, and each write also by a viewer of B, with workspace A's ids: refused with 403 or 404
 *    problem+json.
 * 2. Mixed ownership (the BOLA a guard alone does not catch): every assignment of A's and B's
 *    ids to the record slots of an operation, with at least one of each, called by the admin of
 *    B — B's workspace with A's secret, B's dataset with A's version, B's workspace in the body
 *    with A's secret… The guard passes on B; the service must still refuse A's record.
 *
 * A's rows (and B's, for the mixed calls) must be byte-identical afterwards. A new operation is
 * swept the moment it is served; one with a path parameter without a fixture fails the test.
 */
describe('security: tenant isolation sweep', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let a: Tenant;
  let b: Tenant;
  let bAdmin: Actor;
  let bKey: Actor;
  const figures = {
    operations: 0,
    calls: 0,
    refused: 0,
    mixedOperations: 0,
    mixedCalls: 0,
    mixedRefused: 0,
    rowsChanged: 0,
  };

  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/openapi.json').expect(200)).body as OpenApiDocument;
    [a, b] = [await tenant(t, 'a'), await tenant(t, 'b')];
    bAdmin = await t.factory.actor();
    await t.factory.addMember(b.workspaceId, bAdmin.id, 'admin');
    // An admin of both workspaces whose API key belongs to B: the key must not reach A, though its creator can.
    const both = await t.factory.actor();
    await t.factory.addMember(a.workspaceId, both.id, 'admin');
    await t.factory.addMember(b.workspaceId, both.id, 'admin');
    const key = await t.http
      .post(`/workspaces/${b.workspaceId}/api-keys`)
      .set(both.auth)
      .send({ name: 'b-only', role: 'admin' })
      .expect(201);
    bKey = { ...both, auth: { Authorization: `Bearer ${key.body.key}` } };
  }, SWEEP_TIMEOUT_MS);
  afterAll(async () => {
    console.log(
      `security/isolation: ${figures.operations} operations naming a record, ${figures.calls} calls with workspace A's ids, ${figures.refused} refused; ` +
        `${figures.mixedOperations} operations with mixed A/B ids, ${figures.mixedCalls} calls, ${figures.mixedRefused} refused; ${figures.rowsChanged} rows changed`,
    );
    await t?.close();
  });

  /** Operations that protect a record, destructive ones last so a wrongly accepted delete cannot hide other findings. */
  function protectedOperations(): WalkedOperation[] {
    return (
      walk(document)
        .filter((op) => !PUBLIC.has(op.rule))
        // Paths whose parameters all name built-in entries still protect the workspace they name in the query or body.
        .filter(
          (op) =>
            !(op.pathParams.length && op.pathParams.every((p) => p in NOT_RECORDS || isFixedParam(op.path, p))) ||
            slotsOf(op).length > 0,
        )
        .sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'))
    );
  }

  /** The record slots of an operation: path parameters, and query parameters and top-level string body members named like a fixture. */
  function slotsOf(op: WalkedOperation): Slot[] {
    const slots: Slot[] = op.pathParams
      .filter((p) => !(p in NOT_RECORDS) && !isFixedParam(op.path, p))
      .map((p) => ({ in: 'path' as const, name: fixtureFor(op.path, p) }));
    for (const q of op.queryParams)
      if (q.name in FIXTURES && !NAMED_BY_TEXT.has(q.name)) slots.push({ in: 'query', name: q.name });
    if (op.consumes === 'application/json' && op.bodySchema) {
      for (const [name, prop] of Object.entries(resolve(document, op.bodySchema).properties ?? {})) {
        if (
          name in FIXTURES &&
          !NAMED_BY_TEXT.has(name) &&
          !GLOBAL_BODY_REFS.has(name) &&
          resolve(document, prop).type === 'string'
        )
          slots.push({ in: 'body', name });
      }
    }
    return slots;
  }

  /** One request, each slot filled with the id of the tenant `owner(slot)` names. */
  function send(op: WalkedOperation, slots: Slot[], owner: (slot: Slot) => Tenant, auth: Record<string, string>) {
    const value = (where: Slot['in'], name: string) => {
      const slot = slots.find((s) => s.in === where && s.name === name);
      return slot ? owner(slot).params[name] : name in NOT_RECORDS ? NOT_RECORDS[name].value : a.params[name];
    };
    const url = fillParams(op.path, (p) => value('path', p));
    const query: Record<string, unknown> = Object.fromEntries(
      op.queryParams
        .filter((q) => q.required)
        // A required parameter a fixture names by text (a trace id) reads workspace A's; others are sampled.
        .map((q) => [q.name, a.params[q.name] ?? sample(document, q.schema, () => undefined, q.name)]),
    );
    for (const s of slots.filter((x) => x.in === 'query')) query[s.name] = value('query', s.name);
    let body = validBody(document, op, (n) => value('body', n));
    if (body && typeof body === 'object' && !Array.isArray(body))
      body = {
        ...body,
        ...Object.fromEntries(slots.filter((s) => s.in === 'body').map((s) => [s.name, value('body', s.name)])),
      };
    return request(t.http, op, url, body, auth, a.params.workspace_id).query(query);
  }

  it('has a fixture for every path parameter of every operation that names a record', () => {
    const missing = new Set<string>();
    for (const op of protectedOperations())
      for (const p of op.pathParams)
        if (!(p in FIXTURES) && !(p in NOT_RECORDS)) missing.add(`{${p}} (${op.method} ${op.path})`);
    if (missing.size)
      throw new Error(
        `no fixture for path parameter(s) ${[...missing].join('; ')}: add one entry per parameter name to FIXTURES in test/security/fixtures.ts`,
      );
  });

  it(
    'refuses every call on workspace A by members of workspace B, and changes no row of A',
    async () => {
      const before = await snapshot(t, a.workspaceId);
      const failures: string[] = [];
      for (const op of protectedOperations()) {
        const slots = slotsOf(op);
        if (!slots.length) continue;
        figures.operations++;
        const callers: Array<[string, Actor]> = [
          ['admin of B', bAdmin],
          ['API key of B made by an admin of A and B', bKey],
          ...(WRITES.has(op.method) ? [['viewer of B', b.viewer] as [string, Actor]] : []),
        ];
        for (const [who, caller] of callers) {
          figures.calls++;
          const res = await send(op, slots, () => a, caller.auth);
          if (refused(res)) figures.refused++;
          else
            failures.push(
              `${op.method} ${op.path} as ${who}: ${res.status} ${res.headers['content-type']} ${JSON.stringify(res.body).slice(0, 160)}`,
            );
        }
      }
      const after = await snapshot(t, a.workspaceId);
      figures.rowsChanged += diffCount(before, after);
      expect(failures).toEqual([]);
      expect(after).toBe(before);
      // Workspaces, members, secrets, invitations, datasets, versions, partitions, runs, embedding configs, webhooks.
      expect(figures.operations).toBeGreaterThanOrEqual(60);
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    'refuses A’s records named beside B’s own (mixed ids) to the admin of B, and changes no row of A or B',
    async () => {
      const [beforeA, beforeB] = [await snapshot(t, a.workspaceId), await snapshot(t, b.workspaceId)];
      const failures: string[] = [];
      for (const op of protectedOperations()) {
        const slots = slotsOf(op);
        if (slots.length < 2) continue;
        figures.mixedOperations++;
        // 403/404; or, when only body members name A's records, the 400 an id that exists nowhere gets (see sameAsUnknown).
        // Each bit says the slot takes A's id: every assignment except all-A (the sweep above) and all-B (B's own records).
        for (let mask = 1; mask < (1 << slots.length) - 1; mask++) {
          const fromA = (s: Slot) => ((mask >> slots.indexOf(s)) & 1) === 1;
          figures.mixedCalls++;
          const res = await send(op, slots, (s) => (fromA(s) ? a : b), bAdmin.auth);
          const aInBodyOnly = slots.filter(fromA).every((s) => s.in === 'body');
          if (refused(res)) figures.mixedRefused++;
          else if (aInBodyOnly && res.status === 400 && (await sameAsUnknown(op, slots, fromA, res)))
            figures.mixedRefused++;
          else
            failures.push(
              `${op.method} ${op.path} with A's ${slots
                .filter(fromA)
                .map((s) => `${s.in} ${s.name}`)
                .join(', ')}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
            );
        }
      }
      const [afterA, afterB] = [await snapshot(t, a.workspaceId), await snapshot(t, b.workspaceId)];
      figures.rowsChanged += diffCount(beforeA, afterA) + diffCount(beforeB, afterB);
      expect(failures).toEqual([]);
      expect(afterA).toBe(beforeA);
      expect(afterB).toBe(beforeB);
      expect(figures.mixedOperations).toBeGreaterThanOrEqual(20);
    },
    SWEEP_TIMEOUT_MS,
  );

  /**
   * A body member naming another workspace's record (B's workspace in the body, A's secret
   * beside it) may be refused as invalid input (400) rather than 403/404, provided the answer is
   * exactly the one for an id that exists nowhere: no oracle for the existence of A's records.
   */
  async function sameAsUnknown(
    op: WalkedOperation,
    slots: Slot[],
    fromA: (s: Slot) => boolean,
    res: { status: number; headers: Record<string, string>; body: Record<string, unknown> },
  ): Promise<boolean> {
    if (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '') || res.body?.status !== 400)
      return false;
    const nowhere = tenantOfUnknownIds();
    const other = await send(op, slots, (s) => (fromA(s) ? nowhere : b), bAdmin.auth);
    const scrub = (x: unknown) =>
      JSON.stringify(x)
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        .replace(/"request_id":"[^"]*"/, '');
    return other.status === res.status && scrub(other.body) === scrub(res.body);
  }

  function tenantOfUnknownIds(): Tenant {
    return { ...a, params: Object.fromEntries(Object.keys(a.params).map((k) => [k, randomUUID()])) };
  }

  it(
    'serves the same reads to workspace A’s own owner (the fixtures are live, so the refusals above mean something)',
    async () => {
      const sysadmin = await t.factory.actor({ systemRole: 'admin' });
      const failures: string[] = [];
      let served = 0;
      for (const op of protectedOperations().filter((o) => o.method === 'GET')) {
        const slots = slotsOf(op);
        if (!slots.length) continue;
        const res = await send(op, slots, () => a, (op.rule === 'system-admin' ? sysadmin : a.owner).auth);
        if (res.status === 200) served++;
        else failures.push(`${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
      expect(failures).toEqual([]);
      expect(served).toBeGreaterThanOrEqual(25);
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    "every MCP tool, with A's ids (all, or one beside B's own), called by B's API key and B's admin: refused, nothing of A's shown, A unchanged",
    async () => {
      await t.app.listen(0, '127.0.0.1');
      const url = await t.app.getUrl();
      const before = await snapshot(t, a.workspaceId);
      const aIds = Object.values(a.params).filter((v) => /^[0-9a-f-]{36}$/.test(v));
      const failures: string[] = [];
      let calls = 0;
      for (const [who, bearer] of [
        ['B key', bKey.auth.Authorization.replace(/^Bearer /, '')],
        ['B admin', bAdmin.token],
      ] as const) {
        const client = await mcpClient(url, bearer);
        try {
          for (const tool of (await client.listTools()).tools) {
            const slots = recordArgs(tool);
            const attempts: Array<Record<string, unknown>> = [toolArgs(tool, a.params)];
            // Mixed: one record argument A's, the others B's (B's own records with one of A's beside them).
            // A text named within a record (a trace id in a dataset) is no record of A's on its own.
            if (slots.length > 1)
              for (const { arg: theirs } of slots.filter((slot) => !NAMED_BY_TEXT.has(slot.fixture)))
                attempts.push(toolArgs(tool, a.params, (arg) => (arg === theirs ? a.params : b.params)));
            for (const args of slots.length ? attempts : []) {
              calls++;
              const answer = await call(client, tool.name, args);
              // A refusal may name A's workspace, as the operation's own 403 does; no other id of A's may show.
              const leaked = aIds.filter(
                (id) => answer.text.includes(id) && !Object.values(args).includes(id) && id !== a.workspaceId,
              );
              if (!answer.isError || leaked.length)
                failures.push(`${who} ${tool.name}(${JSON.stringify(args)}): ${answer.text.slice(0, 200)}`);
            }
            // Nothing named: the caller's own workspace, where nothing of A's may show.
            if (!(tool.inputSchema.required ?? []).length) {
              calls++;
              const answer = await call(client, tool.name, {});
              const leaked = aIds.filter((id) => answer.text.includes(id));
              if (leaked.length) failures.push(`${who} ${tool.name}({}) shows A's ${leaked.join(', ')}`);
            }
          }
        } finally {
          await client.close();
        }
      }
      console.log(`security/isolation: ${calls} MCP tool calls with A's ids or none, ${failures.length} not refused`);
      expect(failures).toEqual([]);
      expect(await snapshot(t, a.workspaceId)).toBe(before);
    },
    SWEEP_TIMEOUT_MS,
  );
});

/** How many rows differ between two snapshots. */
function diffCount(before: string, after: string): number {
  if (before === after) return 0;
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
