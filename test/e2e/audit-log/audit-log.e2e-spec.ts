import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { AuditRetentionService } from '#src/modules/audit-log/audit-retention.service.js';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const SECRET_VALUE = 'sk-audit-canary-5f1c9a0b7e2d';
const DAY_MS = 24 * 3600_000;

interface Event {
  id: string;
  workspace_id: string | null;
  action: string;
  actor_id: string | null;
  actor_email: string | null;
  target_type: string;
  target_id: string | null;
  details: Record<string, unknown>;
  request_id: string | null;
  created_at: string;
}

/**
 * The workspace audit log (docs/audit.md): administrative actions of several families as events
 * with their actor, target and request id; filters and cursor paging; exports in JSON Lines and
 * CSV; admins only, and never another workspace's events; the system's own log for system
 * admins; retention, per workspace over the environment's default, deleting old events only.
 */
describe('the audit log', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let other: { id: string };
  let sysadmin: Actor;
  const ids: Record<string, string> = {};

  const log = (query: Record<string, string | number> = {}, auth = r.admin.auth, workspace = ws) =>
    t.http.get(`/workspaces/${workspace}/audit-events`).set(auth).query(query);
  /** Every event the filters match, page by page (`limit` a page), checking the pages meet without a gap or an overlap. */
  const all = async (query: Record<string, string | number>, limit = 200): Promise<Event[]> => {
    const events: Event[] = [];
    let cursor: string | null = null;
    do {
      const res: Response = await log({ ...query, limit, ...(cursor ? { cursor } : {}) }).expect(200);
      events.push(...res.body.items);
      cursor = res.body.next_cursor;
      if (cursor) expect(res.body.items).toHaveLength(limit);
    } while (cursor);
    return events;
  };
  const as = (actor: Actor, requestId: string) => ({ ...actor.auth, 'X-Request-Id': requestId });

  beforeAll(async () => {
    t = await startTestApp({ AUDIT_RETENTION_DAYS: '365' });
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    other = await t.factory.newWorkspace(r.outsider);
    sysadmin = await t.factory.actor({ systemRole: 'admin' });
    const joiner = await t.factory.newUser();
    ids.joiner = joiner.id;
    // Administrative actions of several families, each with a request id of its own.
    await t.http
      .post(`/workspaces/${ws}/members`)
      .set(as(r.admin, 'audit-member-add'))
      .send({ user_id: joiner.id, role: 'viewer' })
      .expect(201);
    await t.http
      .patch(`/workspaces/${ws}/members/${joiner.id}`)
      .set(as(r.admin, 'audit-member-role'))
      .send({ role: 'member' })
      .expect(200);
    const secret = await t.http
      .post(`/workspaces/${ws}/secrets`)
      .set(as(r.admin, 'audit-secret-create'))
      .send({ name: 'OPENAI_API_KEY', value: SECRET_VALUE })
      .expect(201);
    ids.secret = secret.body.id;
    await t.http
      .post(`/workspaces/${ws}/secrets/${ids.secret}/reveal`)
      .set(as(r.owner, 'audit-secret-reveal'))
      .expect(200);
    const key = await t.http
      .post(`/workspaces/${ws}/api-keys`)
      .set(as(r.admin, 'audit-key-create'))
      .send({ name: 'siem-export', role: 'admin' })
      .expect(201);
    ids.key = key.body.id;
    ids.keyAuth = `Bearer ${key.body.key}`;
    const invitation = await t.http
      .post(`/workspaces/${ws}/invitations`)
      .set(as(r.admin, 'audit-invite'))
      .send({ email: `invitee-${randomUUID().slice(0, 8)}@test.local`, role: 'viewer' })
      .expect(201);
    ids.invitation = invitation.body.id;
    const project = await t.http
      .post('/projects')
      .set(as(r.member, 'audit-project'))
      .send({ workspace_id: ws, name: 'support-bot' })
      .expect(201);
    ids.project = project.body.id;
    const sut = await t.http
      .post('/suts')
      .set(as(r.member, 'audit-sut'))
      .send({ workspace_id: ws, name: 'support-bot-v2' })
      .expect(201);
    ids.sut = sut.body.id;
    await t.http.delete(`/suts/${ids.sut}`).set(as(r.admin, 'audit-sut-delete')).expect(204);
    // The other workspace's own events, which A's log must never show.
    await t.http
      .post(`/workspaces/${other.id}/secrets`)
      .set(r.outsider.auth)
      .send({ name: 'OTHER_KEY', value: 'sk-other-workspace' })
      .expect(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows administrative actions of several families with their actor, target and request id', async () => {
    const events = await all({});
    const one = (action: string) => {
      const found = events.filter((e) => e.action === action);
      expect(found).toHaveLength(1);
      return found[0];
    };
    const admin = { actor_id: r.admin.id, actor_email: r.admin.email, workspace_id: ws };
    expect(one('member.added')).toMatchObject({
      ...admin,
      target_type: 'user',
      target_id: ids.joiner,
      request_id: 'audit-member-add',
    });
    expect(one('member.role_changed')).toMatchObject({
      ...admin,
      target_id: ids.joiner,
      request_id: 'audit-member-role',
      details: expect.objectContaining({ from: 'viewer', to: 'member' }),
    });
    expect(one('secret.created')).toMatchObject({
      ...admin,
      target_type: 'secret',
      target_id: ids.secret,
      request_id: 'audit-secret-create',
    });
    expect(one('secret.revealed')).toMatchObject({
      actor_id: r.owner.id,
      target_id: ids.secret,
      request_id: 'audit-secret-reveal',
    });
    expect(one('api_key.created')).toMatchObject({
      ...admin,
      target_type: 'api_key',
      target_id: ids.key,
      request_id: 'audit-key-create',
    });
    expect(one('invitation.created')).toMatchObject({
      ...admin,
      target_id: ids.invitation,
      request_id: 'audit-invite',
    });
    expect(one('sut.created')).toMatchObject({
      actor_id: r.member.id,
      target_type: 'sut',
      target_id: ids.sut,
      request_id: 'audit-sut',
    });
    expect(one('sut.deleted')).toMatchObject({ ...admin, target_id: ids.sut, request_id: 'audit-sut-delete' });
    expect(one('project.created')).toMatchObject({
      actor_id: r.member.id,
      target_id: ids.project,
      request_id: 'audit-project',
    });
    // Newest first, and nothing of the other workspace, nor a secret's value, nor a key.
    expect(events.map((e) => e.created_at)).toEqual([...events.map((e) => e.created_at)].sort().reverse());
    expect(events.every((e) => e.workspace_id === ws)).toBe(true);
    const text = JSON.stringify(events);
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(ids.keyAuth.slice('Bearer '.length));
  });

  it('filters by action, action prefix, actor, target and time, and pages by cursor without a gap or a repeat', async () => {
    const everything = await all({});
    expect(everything.length).toBe(9);
    // Pages of 2 walk the same events in the same order.
    expect((await all({}, 2)).map((e) => e.id)).toEqual(everything.map((e) => e.id));
    const actions = async (query: Record<string, string>) => (await all(query)).map((e) => e.action).sort();
    expect(await actions({ action_prefix: 'member.' })).toEqual(['member.added', 'member.role_changed']);
    expect(await actions({ action: 'secret.revealed' })).toEqual(['secret.revealed']);
    expect(await actions({ actor_id: r.member.id })).toEqual(['project.created', 'sut.created']);
    expect(await actions({ target_type: 'secret', target_id: ids.secret })).toEqual([
      'secret.created',
      'secret.revealed',
    ]);
    const reveal = everything.find((e) => e.action === 'secret.revealed')!;
    const after = await all({ from: reveal.created_at });
    expect(after.map((e) => e.id)).toContain(reveal.id);
    expect(after.every((e) => e.created_at >= reveal.created_at)).toBe(true);
    const before = await all({ to: reveal.created_at });
    expect(before.map((e) => e.id)).not.toContain(reveal.id);
    expect(before.length + after.length).toBe(everything.length);
    // A prefix's `_` is a character, not LIKE's wildcard.
    expect(await actions({ action_prefix: 'api_key' })).toEqual(['api_key.created']);
    expect(await actions({ action_prefix: 'apixkey' })).toEqual([]);

    expectProblem(await log({ cursor: randomUUID() }), 400, 'audit_cursor_invalid');
    expectProblem(await log({ from: reveal.created_at, to: reveal.created_at }), 400, 'validation_failed');
    expectProblem(await log({ limit: 201 }), 400, 'validation_failed');
    expectProblem(await log({ action: "x' OR 1=1" }), 400, 'validation_failed');
  });

  it('exports the filtered log as JSON Lines and as CSV, and records each export', async () => {
    const listed = await all({ action_prefix: 'secret.' });
    const jsonl = await t.http
      .get(`/workspaces/${ws}/audit-events/export`)
      .set(r.admin.auth)
      .query({ action_prefix: 'secret.' })
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => done(null, text));
      })
      .expect(200);
    expect(jsonl.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(jsonl.headers['content-disposition']).toMatch(/^attachment; filename="audit-.*\.jsonl"$/);
    const lines = (jsonl.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    expect(lines).toEqual(listed);

    const csv = await t.http
      .get(`/workspaces/${ws}/audit-events/export`)
      .set({ ...r.admin.auth, Accept: 'text/csv' })
      .query({ action_prefix: 'secret.' })
      .expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const rows = csv.text.trim().split('\n');
    expect(rows[0]).toBe(
      'created_at,id,workspace_id,action,actor_id,actor_email,target_type,target_id,request_id,details',
    );
    expect(rows.slice(1).map((row) => row.split(',')[1])).toEqual(listed.map((e) => e.id));
    expect(rows[1]).toContain(listed[0].action);

    const exports = await all({ action: 'audit_log.exported' });
    expect(exports.map((e) => e.details.format).sort()).toEqual(['csv', 'jsonl']);
    expect(exports[0]).toMatchObject({ actor_id: r.admin.id, details: { filters: { action_prefix: 'secret.' } } });
  });

  it('answers admins only (and their API keys), never another workspace, and the system log to system admins', async () => {
    for (const who of [r.viewer, r.member]) {
      expectProblem(await log({}, who.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${ws}/audit-events/export`).set(who.auth), 403, 'forbidden');
      expectProblem(await t.http.get(`/workspaces/${ws}/audit-retention`).set(who.auth), 403, 'forbidden');
      expectProblem(
        await t.http.put(`/workspaces/${ws}/audit-retention`).set(who.auth).send({ retention_days: 90 }),
        403,
        'forbidden',
      );
    }
    // The other workspace's admin: refused A's log, and its own shows none of A's events.
    expectProblem(await log({}, r.outsider.auth), 403, 'forbidden');
    const theirs = (await log({}, r.outsider.auth, other.id).expect(200)).body.items as Event[];
    expect(theirs.map((e) => e.action)).toEqual(['secret.created']);
    expect(theirs[0].workspace_id).toBe(other.id);
    // A cursor of A's log is not one of B's.
    const mine = (await log({ limit: 1 }).expect(200)).body.items[0] as Event;
    expectProblem(await log({ cursor: mine.id }, r.outsider.auth, other.id), 400, 'audit_cursor_invalid');
    // An admin's API key reads, and the event of a change made with it names the key.
    await t.http
      .post(`/workspaces/${ws}/secrets`)
      .set({ Authorization: ids.keyAuth })
      .send({ name: 'LANGFUSE_KEY', value: 'sk-by-key' })
      .expect(201);
    const [byKey] = (await log({ action: 'secret.created', limit: 1 }, { Authorization: ids.keyAuth }).expect(200)).body
      .items as Event[];
    expect(byKey).toMatchObject({ actor_id: r.admin.id, details: { name: 'LANGFUSE_KEY', api_key_id: ids.key } });
    // The system's log: logins and users, to system admins only; no workspace's events.
    await t.http
      .post('/users')
      .set(as(sysadmin, 'audit-user-create'))
      .send({ email: `new-${randomUUID().slice(0, 8)}@test.local`, display_name: 'New', password: 'a-long-password-1' })
      .expect(201);
    expectProblem(await t.http.get('/audit-events').set(r.owner.auth), 403, 'forbidden');
    expectProblem(await t.http.get('/audit-events').set({ Authorization: ids.keyAuth }), 403);
    const system = (await t.http.get('/audit-events').set(sysadmin.auth).query({ limit: 200 }).expect(200)).body
      .items as Event[];
    expect(system.every((e) => e.workspace_id === null)).toBe(true);
    expect(system.find((e) => e.action === 'user.created')).toMatchObject({
      actor_id: sysadmin.id,
      request_id: 'audit-user-create',
    });
    expect(system.filter((e) => e.action === 'auth.login').map((e) => e.actor_id)).toEqual(
      expect.arrayContaining([r.admin.id, r.viewer.id, sysadmin.id]),
    );
    const exported = await t.http
      .get('/audit-events/export')
      .set(sysadmin.auth)
      .query({ format: 'csv', action: 'user.created' })
      .expect(200);
    expect(exported.text.trim().split('\n')).toHaveLength(2);
  });

  it('keeps events for the retention that applies, then the sweep deletes those older and only those', async () => {
    expect((await t.http.get(`/workspaces/${ws}/audit-retention`).set(r.admin.auth).expect(200)).body).toMatchObject({
      retention_days: null,
      default_retention_days: 365,
      effective_retention_days: 365,
    });
    expectProblem(
      await t.http.put(`/workspaces/${ws}/audit-retention`).set(r.admin.auth).send({ retention_days: 7 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.put(`/workspaces/${ws}/audit-retention`).set(r.admin.auth).send({ retention_days: 30, extra: 1 }),
      400,
      'validation_failed',
    );
    const set = await t.http
      .put(`/workspaces/${ws}/audit-retention`)
      .set(as(r.admin, 'audit-retention-set'))
      .send({ retention_days: 30 })
      .expect(200);
    expect(set.body).toMatchObject({ retention_days: 30, effective_retention_days: 30, updated_by: r.admin.id });
    const [setting] = await all({ action: 'audit_retention.updated' });
    expect(setting).toMatchObject({ request_id: 'audit-retention-set', details: { from: null, to: 30 } });

    // A sweep as of 30 days after the setting was recorded: A's events up to it go, what came after stays.
    await t.http.post(`/workspaces/${ws}/secrets/${ids.secret}/reveal`).set(r.owner.auth).expect(200);
    const before = await all({});
    const later = before.filter((e) => e.created_at > setting.created_at);
    expect(later.map((e) => e.action)).toEqual(['secret.revealed']);
    const theirs = (await log({ limit: 200 }, r.outsider.auth, other.id).expect(200)).body.items as Event[];
    const sweeps = t.app.get(AuditRetentionService);
    const swept = await sweeps.sweep(new Date(Date.parse(setting.created_at) + 30 * DAY_MS + 1));
    expect(swept.deleted).toEqual({ [ws]: before.length - later.length });
    const after = await all({});
    expect(after.map((e) => e.id)).toEqual([expect.any(String), ...later.map((e) => e.id)]);
    expect(after[0]).toMatchObject({
      action: 'audit_log.swept',
      actor_id: null,
      details: { retention_days: 30, events_deleted: before.length - later.length },
    });
    // B follows the default (365 days): nothing of it went; a sweep past that takes it and the system's too.
    expect((await log({ limit: 200 }, r.outsider.auth, other.id).expect(200)).body.items).toEqual(theirs);
    const far = await sweeps.sweep(new Date(Date.now() + 366 * DAY_MS));
    expect(far.deleted).toEqual(
      expect.objectContaining({ [other.id]: theirs.length, system: expect.any(Number), [ws]: after.length }),
    );
  });
});
