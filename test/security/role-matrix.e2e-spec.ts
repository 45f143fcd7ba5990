import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { ACCESS_RULE, type AccessRule } from '#libs/auth/access.decorators.js';
import { normalisePath, type OpenApiDocument } from '../contract/support/spec-operations.js';
import { mcpClient } from '../utils/mcp.js';
import type { TestApp } from '../utils/test-app.js';
import { startSweep, type Tenant } from './fixtures.js';
import { call, toolArgs } from './mcp-walk.js';
import { fillParams, request, validBody, walk } from './openapi-walk.js';

const MATRIX = join(dirname(fileURLToPath(import.meta.url)), 'role-matrix.json');
const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
/** Routes the router serves that the OpenAPI document leaves out on purpose (none today; say why for each). */
const UNDOCUMENTED_ROUTES = new Map<string, string>([]);

/**
 * The access rule of an operation as the matrix writes it: `public`, `authenticated`,
 * `system-admin(-or-self)` or the least workspace role; `, no API key` when a key is refused.
 */
function ruleOf(access: { rule?: string; role?: string; orSelf?: string; apiKeys?: boolean } | undefined): string {
  if (!access?.rule) return 'none';
  const noKey = access.apiKeys === false ? ', no API key' : '';
  if (access.rule === 'workspace') return `${access.role!}${noKey}`;
  if (access.rule === 'system-admin') return access.orSelf ? 'system-admin-or-self' : 'system-admin';
  return `${access.rule}${noKey}`;
}

/**
 * The access rule of every route the router serves, read from the controllers the way the guard
 * reads it (Reflector.getAllAndOverride over handler and class; no decorator = authenticated),
 * keyed `METHOD /path` in the document's normalised form.
 */
function routerRules(t: TestApp): Map<string, string> {
  const reflector = new Reflector();
  const rules = new Map<string, string>();
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const cls = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (!cls?.prototype) continue;
      const base = [Reflect.getMetadata(PATH_METADATA, cls) ?? ''].flat()[0] as string;
      for (const key of Object.getOwnPropertyNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[key];
        if (typeof handler !== 'function' || key === 'constructor') continue;
        const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (verb === undefined || paths === undefined) continue;
        const rule = reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [handler as () => void, cls]) ?? {
          kind: 'authenticated' as const,
        };
        for (const sub of [paths].flat()) {
          const path = `/${[base, sub].filter((x) => x && x !== '/').join('/')}`
            .replace(/\/+/g, '/')
            .replace(/:(\w+)/g, (m, name: string, offset: number, all: string) =>
              all[offset - 1] === '\\' ? m : `{${name}}`,
            );
          rules.set(`${RequestMethod[verb]} ${normalisePath(path)}`, ruleOf({ rule: rule.kind, ...rule } as never));
        }
      }
    }
  }
  return rules;
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
  const figures = { served: 0, matrix: 0, mismatches: 0, routes: 0, docDiffers: 0, below: 0, belowRefused: 0 };
  afterAll(async () => {
    console.log(
      `security/role-matrix: ${figures.served} served operations, ${figures.matrix} in role-matrix.json, ${figures.mismatches} mismatches; ${figures.routes} routes read from the controllers, ${figures.docDiffers} whose x-access differs from the guard; ` +
        `${figures.below} workspace writes called one role below their threshold (members and API keys), ${figures.belowRefused} refused with 403 problem+json`,
    );
    await t?.close();
  });

  it('matches the guard metadata of every served operation', () => {
    const served = Object.fromEntries(
      walk(document).map((op) => [`${op.method} ${op.path}`, ruleOf(op.operation['x-access'] as never)]),
    );
    if (process.env.UPDATE_ROLE_MATRIX === '1')
      writeFileSync(
        MATRIX,
        `${JSON.stringify(Object.fromEntries(Object.entries(served).sort(([x], [y]) => x.localeCompare(y))), null, 2)}\n`,
      );
    const reviewed = JSON.parse(readFileSync(MATRIX, 'utf8')) as Record<string, string>;
    const missing = Object.keys(served).filter((k) => !(k in reviewed));
    const stale = Object.keys(reviewed).filter((k) => !(k in served));
    const differ = Object.keys(served)
      .filter((k) => k in reviewed && reviewed[k] !== served[k])
      .map((k) => `${k}: matrix says ${reviewed[k]}, the guard ${served[k]}`);
    Object.assign(figures, {
      served: Object.keys(served).length,
      matrix: Object.keys(reviewed).length,
      mismatches: missing.length + stale.length + differ.length,
    });
    expect({ missing, stale, differ }).toEqual({ missing: [], stale: [], differ: [] });
    expect(Object.values(served).filter((r) => r === 'none')).toEqual([]);
  });

  it('documents in x-access exactly the rule the guard enforces, for every route the router serves', () => {
    const documented = new Map(
      walk(document).map((op) => [`${op.method} ${normalisePath(op.path)}`, ruleOf(op.operation['x-access'] as never)]),
    );
    const enforced = routerRules(t);
    const differ = [...enforced]
      .filter(([k, rule]) => documented.has(k) && documented.get(k) !== rule)
      .map(([k, rule]) => `${k}: guard ${rule}, x-access ${documented.get(k)}`);
    const undocumented = [...enforced.keys()].filter((k) => !documented.has(k) && !UNDOCUMENTED_ROUTES.has(k));
    const unrouted = [...documented.keys()].filter((k) => !enforced.has(k));
    Object.assign(figures, {
      routes: enforced.size,
      docDiffers: differ.length + undocumented.length + unrouted.length,
    });
    expect({ differ, undocumented, unrouted }).toEqual({ differ: [], undocumented: [], unrouted: [] });
    expect(enforced.size).toBeGreaterThanOrEqual(documented.size);
  });

  /**
   * Every workspace write, called by a member one role below its threshold, and by an API key
   * of the workspace's owner whose own role is one below: a key's role caps its creator's.
   */
  it("refuses every workspace write to a member, or an owner's API key, one role below its threshold", async () => {
    const below: Record<string, { auth: Record<string, string> } | undefined> = {
      member: a.viewer,
      admin: a.member,
      owner: undefined,
      viewer: undefined,
    };
    const admin = await t.factory.actor();
    await t.factory.addMember(a.workspaceId, admin.id, 'admin');
    below.owner = admin;
    const keyBelow: Record<string, Record<string, string>> = {};
    for (const [rule, role] of [
      ['member', 'viewer'],
      ['admin', 'member'],
      ['owner', 'admin'],
    ]) {
      const key = await t.http
        .post(`/workspaces/${a.workspaceId}/api-keys`)
        .set(a.owner.auth)
        .send({ name: `below-${rule}`, role })
        .expect(201);
      keyBelow[rule] = { Authorization: `Bearer ${key.body.key}` };
    }
    const ids = (name: string) => a.params[name];
    const failures: string[] = [];
    let calls = 0;
    for (const op of walk(document)) {
      const rule = ruleOf(op.operation['x-access'] as never);
      if (!(ROLES as readonly string[]).includes(rule) || op.method === 'GET') continue;
      const callers = [below[rule]?.auth, keyBelow[rule]].filter((c): c is Record<string, string> => c !== undefined);
      const query = Object.fromEntries(
        op.queryParams.filter((q) => ['workspace_id', 'dataset_id'].includes(q.name)).map((q) => [q.name, ids(q.name)]),
      );
      for (const auth of callers) {
        const res = await request(
          t.http,
          op,
          fillParams(op.path, ids),
          validBody(document, op, ids),
          auth,
          ids('workspace_id'),
        ).query(query);
        calls++;
        const who = auth === keyBelow[rule] ? 'API key' : 'member';
        if (
          res.status !== 403 ||
          !/^application\/problem\+json/.test(res.headers['content-type'] ?? '') ||
          res.body?.status !== 403
        )
          failures.push(
            `${op.method} ${op.path} (needs ${rule}) as ${who}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`,
          );
      }
    }
    Object.assign(figures, { below: calls, belowRefused: calls - failures.length });
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThanOrEqual(40);
  });

  it("MCP tools: a viewer's API key reads with every read-only tool and is refused every other with 403; a member's passes", async () => {
    await t.app.listen(0, '127.0.0.1');
    const url = await t.app.getUrl();
    const key = async (role: string) =>
      (
        await t.http
          .post(`/workspaces/${a.workspaceId}/api-keys`)
          .set(a.owner.auth)
          .send({ name: `mcp-${role}`, role })
          .expect(201)
      ).body.key as string;
    const failures: string[] = [];
    let [reads, served, writes] = [0, 0, 0];
    for (const role of ['viewer', 'member'] as const) {
      const client = await mcpClient(url, await key(role));
      try {
        for (const tool of (await client.listTools()).tools) {
          const answer = await call(client, tool.name, toolArgs(tool, a.params));
          const refusedByRole = /HTTP 40[13]/.test(answer.text);
          if (tool.annotations?.readOnlyHint) {
            if (role === 'viewer') reads++;
            if (refusedByRole) failures.push(`${role} ${tool.name} (reads): ${answer.text.slice(0, 160)}`);
            else if (!answer.isError && role === 'viewer') served++;
          } else if (role === 'viewer') {
            writes++;
            if (!/HTTP 403/.test(answer.text))
              failures.push(`viewer ${tool.name} (writes): ${answer.text.slice(0, 160)}`);
          } else if (refusedByRole) failures.push(`member ${tool.name} (writes): ${answer.text.slice(0, 160)}`);
        }
      } finally {
        await client.close();
      }
    }
    console.log(
      `security/role-matrix: MCP ${reads} read-only tools (${served} answered with the fixtures), ${writes} others refused to a viewer's key`,
    );
    expect(failures).toEqual([]);
    expect(writes).toBeGreaterThanOrEqual(3);
    expect(served).toBe(reads);
  });
});
