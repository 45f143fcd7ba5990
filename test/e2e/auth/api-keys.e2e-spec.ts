import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { within } from '../../utils/within.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

const KEY = /^ews_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

describe('API keys', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let other: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    // The member also belongs to another workspace: a key of `ws` must never reach it.
    other = (await t.factory.newWorkspace(r.member)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (actor: { auth: Record<string, string> }, body: Record<string, unknown>, workspace = ws) =>
    t.http.post(`/workspaces/${workspace}/api-keys`).set(actor.auth).send(body);
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
  const newKey = async (actor: { auth: Record<string, string> }, role: string, extra: Record<string, unknown> = {}) => {
    const res = await create(actor, { name: `key-${randomUUID().slice(0, 8)}`, role, ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string; prefix: string };
  };
  const upload = (auth: Record<string, string>, workspace = ws) =>
    t.http
      .post('/datasets/upload')
      .query({ workspace_id: workspace })
      .set(auth)
      .attach('file', Buffer.from('question,answer\nWhat is 2+2?,4\n'), `keyed-${randomUUID().slice(0, 6)}.csv`);

  it('creates a key shown once, stored as a hash, listed by prefix with its last use', async () => {
    const res = await create(r.member, {
      name: '  github-actions ',
      role: 'member',
      expires_at: '2099-01-01T00:00:00Z',
    }).expect(201);
    expect(res.body).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        name: 'github-actions',
        role: 'member',
        status: 'active',
        created_by: r.member.id,
        expires_at: '2099-01-01T00:00:00.000Z',
        last_used_at: null,
        revoked_at: null,
        key: expect.stringMatching(KEY),
      }),
    );
    const { id, key, prefix } = res.body as { id: string; key: string; prefix: string };
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    const [stored] = await t.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [id]);
    expect(JSON.stringify(stored)).not.toContain(key.slice(prefix.length + 1));
    expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);

    await t.http.get(`/workspaces/${ws}/members`).set(bearer(key)).expect(200);
    const listed = await t.http.get(`/workspaces/${ws}/api-keys`).set(r.member.auth).expect(200);
    const item = listed.body.items.find((k: { id: string }) => k.id === id);
    expect(item).toEqual(expect.objectContaining({ prefix, status: 'active', last_used_at: expect.any(String) }));
    expect(JSON.stringify(listed.body)).not.toContain(key);
    const one = await t.http.get(`/workspaces/${ws}/api-keys/${id}`).set(r.member.auth).expect(200);
    expect(one.body.key).toBeUndefined();
    const audit = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = 'api_key.created' AND target_id = $1`,
      [id],
    );
    expect(audit).toEqual([
      { actor_id: r.member.id, details: expect.objectContaining({ name: 'github-actions', prefix, role: 'member' }) },
    ]);
    expect(JSON.stringify(audit)).not.toContain(key);
  });

  it('acts for its creator in its workspace: writes at its role, audited with the key named', async () => {
    const { id, key } = await newKey(r.member, 'member');
    const up = await upload(bearer(key)).expect(201);
    const datasetId = up.body.dataset_id ?? up.body.id;
    const [entry] = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE workspace_id = $1 AND details->>'api_key_id' = $2`,
      [ws, id],
    );
    expect(entry).toEqual(expect.objectContaining({ actor_id: r.member.id }));
    await t.http.get(`/datasets/${datasetId}`).set(bearer(key)).expect(200);
    const me = await t.http.get('/auth/me').set(bearer(key)).expect(200);
    expect(me.body).toEqual(
      expect.objectContaining({
        id: r.member.id,
        memberships: [expect.objectContaining({ workspace_id: ws, role: 'member' })],
      }),
    );
  });

  it('a viewer key cannot write; a key never goes above its creator, whose later demotion binds it at once', async () => {
    const viewerKey = await newKey(r.member, 'viewer');
    await t.http.get(`/workspaces/${ws}/members`).set(bearer(viewerKey.key)).expect(200);
    const refused = await upload(bearer(viewerKey.key));
    expectProblem(refused, 403, 'forbidden');
    expect(refused.body.detail).toContain('API key');
    expectProblem(await create(r.member, { name: 'too-high', role: 'admin' }), 403, 'api_key_role_too_high');

    const demoted = await t.factory.actor();
    await t.factory.addMember(ws, demoted.id, 'admin');
    const adminKey = await newKey(demoted, 'admin');
    await t.http.get(`/workspaces/${ws}/invitations`).set(bearer(adminKey.key)).expect(200);
    await t.http
      .patch(`/workspaces/${ws}/members/${demoted.id}`)
      .set(r.owner.auth)
      .send({ role: 'viewer' })
      .expect(200);
    expectProblem(await t.http.get(`/workspaces/${ws}/invitations`).set(bearer(adminKey.key)), 403, 'forbidden');
    const me = await t.http.get('/auth/me').set(bearer(adminKey.key)).expect(200);
    expect(me.body.memberships).toEqual([expect.objectContaining({ workspace_id: ws, role: 'viewer' })]);
  });

  it('is bound to its workspace: other workspaces of its creator are out of reach, and lists show its own only', async () => {
    const { key } = await newKey(r.member, 'member');
    const theirs = await upload(r.member.auth, other).expect(201);
    const theirId = theirs.body.dataset_id ?? theirs.body.id;
    expectProblem(await t.http.get(`/workspaces/${other}`).set(bearer(key)), 403, 'forbidden');
    expectProblem(await t.http.get(`/workspaces/${other}/members`).set(bearer(key)), 403, 'forbidden');
    expectProblem(await t.http.get(`/datasets/${theirId}`).set(bearer(key)), 403, 'forbidden');
    expectProblem(await upload(bearer(key), other), 403, 'forbidden');

    const workspaces = await t.http.get('/workspaces').set(bearer(key)).expect(200);
    expect(workspaces.body.items.map((w: { id: string }) => w.id)).toEqual([ws]);
    const mine = await t.http.get('/workspaces').set(r.member.auth).expect(200);
    expect(mine.body.items.map((w: { id: string }) => w.id).sort()).toEqual([ws, other].sort());
    const datasets = await t.http.get('/datasets').set(bearer(key)).expect(200);
    expect(datasets.body.items.length).toBeGreaterThan(0);
    expect(datasets.body.items.every((d: { workspace_id: string }) => d.workspace_id === ws)).toBe(true);
    const runs = await t.http.get('/runs').set(bearer(key)).expect(200);
    expect(runs.body.items.every((run: { workspace_id: string }) => run.workspace_id === ws)).toBe(true);
  });

  it('cannot do what needs a person: create keys or workspaces, log out, accept invitations, system-admin operations', async () => {
    const { key } = await newKey(r.member, 'member');
    for (const res of [
      await create({ auth: bearer(key) }, { name: 'minted', role: 'viewer' }),
      await t.http.post('/workspaces').set(bearer(key)).send({ name: 'from-a-key' }),
      await t.http.post('/auth/logout').set(bearer(key)),
      await t.http.post('/auth/accept-invitation').set(bearer(key)).send({ token: 'inv_x' }),
    ]) {
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).toContain('API keys cannot call this operation');
    }
    // A system admin's key carries none of the admin's system powers.
    const adminToken = await t.factory.login({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const adminWs = await t.http
      .post('/workspaces')
      .set(bearer(adminToken))
      .send({ name: `admin-${randomUUID().slice(0, 6)}` })
      .expect(201);
    const adminKey = (
      await create({ auth: bearer(adminToken) }, { name: 'admin-key', role: 'owner' }, adminWs.body.id).expect(201)
    ).body.key as string;
    await t.http.get(`/workspaces/${adminWs.body.id}/members`).set(bearer(adminKey)).expect(200);
    expectProblem(await t.http.get('/users').set(bearer(adminKey)), 403, 'forbidden');
    expectProblem(await t.http.get(`/workspaces/${ws}`).set(bearer(adminKey)), 403, 'forbidden');
    // ...and a system admin who is not a member cannot create a key there.
    expectProblem(
      await create({ auth: bearer(adminToken) }, { name: 'not-a-member', role: 'viewer' }),
      403,
      'forbidden',
    );
  });

  it('revocation works at once and is idempotent; the key then answers 401', async () => {
    const { id, key } = await newKey(r.member, 'member');
    await t.http.get(`/workspaces/${ws}/members`).set(bearer(key)).expect(200);
    await t.http.delete(`/workspaces/${ws}/api-keys/${id}`).set(r.member.auth).expect(204);
    const res = await t.http.get(`/workspaces/${ws}/members`).set(bearer(key));
    expectProblem(res, 401, 'unauthenticated');
    expect(res.body.detail).toContain('revoked');
    await t.http.delete(`/workspaces/${ws}/api-keys/${id}`).set(r.member.auth).expect(204);
    const revoked = await t.http
      .get(`/workspaces/${ws}/api-keys`)
      .query({ status: 'revoked' })
      .set(r.member.auth)
      .expect(200);
    expect(revoked.body.items.map((k: { id: string }) => k.id)).toContain(id);
    const active = await t.http.get(`/workspaces/${ws}/api-keys`).set(r.member.auth).expect(200);
    expect(active.body.items.map((k: { id: string }) => k.id)).not.toContain(id);
    const audit = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = 'api_key.revoked' AND target_id = $1`,
      [id],
    );
    expect(audit).toEqual([{ actor_id: r.member.id, details: expect.objectContaining({ reason: 'revoked' }) }]);
    // A key may revoke itself (a CI job cleaning up).
    const self = await newKey(r.member, 'viewer');
    await t.http.delete(`/workspaces/${ws}/api-keys/${self.id}`).set(bearer(self.key)).expect(204);
    expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(bearer(self.key)), 401, 'unauthenticated');
  });

  it('admins see and revoke every key; other members see only their own (404 for the rest)', async () => {
    const adminsKey = await newKey(r.admin, 'admin');
    const membersKey = await newKey(r.member, 'viewer');
    expectProblem(await t.http.get(`/workspaces/${ws}/api-keys/${adminsKey.id}`).set(r.member.auth), 404, 'not_found');
    expectProblem(
      await t.http.delete(`/workspaces/${ws}/api-keys/${adminsKey.id}`).set(r.member.auth),
      404,
      'not_found',
    );
    const memberList = await t.http
      .get(`/workspaces/${ws}/api-keys`)
      .query({ status: 'all' })
      .set(r.member.auth)
      .expect(200);
    expect(memberList.body.items.every((k: { created_by: string }) => k.created_by === r.member.id)).toBe(true);
    const adminList = await t.http
      .get(`/workspaces/${ws}/api-keys`)
      .query({ page_size: 200 })
      .set(r.admin.auth)
      .expect(200);
    expect(adminList.body.items.map((k: { id: string }) => k.id)).toEqual(
      expect.arrayContaining([adminsKey.id, membersKey.id]),
    );
    await t.http.delete(`/workspaces/${ws}/api-keys/${membersKey.id}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/workspaces/${ws}/api-keys`).set(r.outsider.auth), 403, 'forbidden');
    expectProblem(await t.http.get(`/workspaces/${randomUUID()}/api-keys`).set(r.admin.auth), 404, 'not_found');
  });

  it('expires: a past expiry is refused (400); a key past its expiry answers 401 and lists as expired', async () => {
    expectProblem(
      await create(r.member, { name: 'late', role: 'viewer', expires_at: '2020-01-01T00:00:00Z' }),
      400,
      'validation_failed',
    );
    const { id, key } = await newKey(r.member, 'viewer', {
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const read = () => t.http.get(`/workspaces/${ws}/members`).set(bearer(key));
    await read().expect(200);
    // Set by hand: the change reaches the key kept in memory by its notification, a moment after
    // the commit on PostgreSQL (a key that expires with time is checked against the clock).
    await t.dataSource.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    let res = await read();
    await within(2_000, async () => {
      if (res.status === 200) res = await read();
      return res.status !== 200;
    });
    expectProblem(res, 401, 'unauthenticated');
    expect(res.body.detail).toContain('expired');
    const expired = await t.http
      .get(`/workspaces/${ws}/api-keys`)
      .query({ status: 'expired' })
      .set(r.member.auth)
      .expect(200);
    expect(expired.body.items.map((k: { id: string; status: string }) => [k.id, k.status])).toContainEqual([
      id,
      'expired',
    ]);
  });

  it("dies with its creator's membership or account, and stays dead when they come back", async () => {
    const leaver = await t.factory.actor();
    await t.factory.addMember(ws, leaver.id, 'member');
    const leaving = await newKey(leaver, 'member');
    await t.http.delete(`/workspaces/${ws}/members/${leaver.id}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(bearer(leaving.key)), 401, 'unauthenticated');
    await t.factory.addMember(ws, leaver.id, 'member');
    expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(bearer(leaving.key)), 401, 'unauthenticated');
    const [removed] = await t.dataSource.query('SELECT revoked_reason, revoked_by FROM api_keys WHERE id = $1', [
      leaving.id,
    ]);
    expect(removed).toEqual({ revoked_reason: 'member_removed', revoked_by: r.admin.id });

    const deactivated = await newKey(leaver, 'member');
    const adminToken = await t.factory.login({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await t.http.post(`/users/${leaver.id}/deactivate`).set(bearer(adminToken)).expect(200);
    await t.http.post(`/users/${leaver.id}/reactivate`).set(bearer(adminToken)).expect(200);
    expectProblem(await t.http.get(`/workspaces/${ws}/members`).set(bearer(deactivated.key)), 401, 'unauthenticated');
    const [row] = await t.dataSource.query('SELECT revoked_reason, revoked_by FROM api_keys WHERE id = $1', [
      deactivated.id,
    ]);
    const [admin] = await t.dataSource.query('SELECT id FROM users WHERE email = $1', [ADMIN_EMAIL]);
    expect(row).toEqual({ revoked_reason: 'user_deactivated', revoked_by: admin.id });
  });

  it('answers 401 for malformed, unknown or altered keys, and 400 for bad input', async () => {
    const { key } = await newKey(r.viewer, 'viewer');
    const altered = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const [bad, detail] of [
      ['ews_nope', 'malformed'],
      [`ews_${'0'.repeat(12)}_${'A'.repeat(43)}`, 'invalid'],
      [altered, 'invalid'],
    ]) {
      const res = await t.http.get(`/workspaces/${ws}/members`).set(bearer(bad));
      expectProblem(res, 401, 'unauthenticated');
      expect(res.body.detail).toContain(detail);
    }
    const missingRole = await create(r.member, { name: 'no-role' });
    expectProblem(missingRole, 400, 'validation_failed');
    expect(JSON.stringify(missingRole.body.errors)).toContain('role is required');
    expectProblem(await create(r.member, { name: '   ', role: 'viewer' }), 400, 'validation_failed');
    expectProblem(await create(r.member, { name: 'x', role: 'emperor' }), 400, 'validation_failed');
    expectProblem(
      await create(r.member, { name: 'x', role: 'viewer', expires_at: 'tomorrow' }),
      400,
      'validation_failed',
    );
    expectProblem(await create(r.member, { name: 'x', role: 'viewer', expires_at: null }), 400, 'validation_failed');
    expectProblem(await t.http.get(`/workspaces/${ws}/api-keys/not-a-uuid`).set(r.member.auth), 400);
  });

  it('holds the per-user limit under parallel creation (409 beyond it)', async () => {
    const busy = await t.factory.actor();
    await t.factory.addMember(ws, busy.id, 'member');
    for (let i = 0; i < 47; i++) await newKey(busy, 'viewer');
    const parallel = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create(busy, { name: `burst-${i}`, role: 'viewer' })),
    );
    expect(parallel.filter((res) => res.status === 201)).toHaveLength(3);
    for (const res of parallel.filter((x) => x.status !== 201)) {
      expectProblem(res, 409, 'api_key_limit_reached');
      expect(res.body.limit).toBe(50);
    }
    const [{ n }] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL`,
      [busy.id],
    );
    expect(n).toBe(50);
  });
});
