import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { AccessCache } from '#libs/auth/access-cache.js';
import { movableTables } from '#src/database/migrations/1766300000000-access-changes.js';
import { DatabaseNotifications } from '#libs/database/notifications.js';
import { describeOn } from '../../utils/database-mode.js';
import { expectProblem } from '../../utils/problem.js';
import { within } from '../../utils/within.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The access guard keeps sessions, records' workspaces and memberships in memory
 * (libs/auth/access-cache.ts). Every test warms it first (the same request succeeds), then changes
 * access and expects the very next request to see the change: through the service in this
 * process, and (PostgreSQL) through another process or SQL by hand, heard from the database's
 * trigger.
 */
/** The token's id (its `jti` claim), what the cache keeps its session under. */
const jtiOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { jti: string }).jti;

describe('the access cache: a change to access takes effect on the next request', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A fresh workspace with roles and a dataset in it; the dataset read warms the cache for `who`. */
  const world = async () => {
    const r = await t.factory.workspaceWithRoles();
    const ws = r.workspace.id;
    const upload = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(r.owner.auth)
      .attach('file', Buffer.from('question,answer\nWhat is 2+2?,4\n'), 'cache.csv')
      .expect(201);
    const dataset = (upload.body as { dataset_id?: string; id?: string }).dataset_id ?? upload.body.id;
    const read = (auth: Record<string, string>) => t.http.get(`/datasets/${dataset}`).set(auth);
    return { r, ws, dataset: dataset as string, read };
  };

  it('serves a warm request from memory: the database can no longer answer for the session', async () => {
    const { r, read } = await world();
    await read(r.viewer.auth).expect(200);
    // Revoked behind the cache's back and the cache not told: the proof that it served the next
    // read. Then told, as the trigger or the repository would: the read is refused.
    const claims = { jti: jtiOf(r.viewer.token) };
    await t.dataSource.query('ALTER TABLE auth_tokens DISABLE TRIGGER auth_tokens_access_changed');
    await t.dataSource.query('UPDATE auth_tokens SET revoked_at = now() WHERE id = $1', [claims.jti]);
    await t.dataSource.query('ALTER TABLE auth_tokens ENABLE TRIGGER auth_tokens_access_changed');
    await read(r.viewer.auth).expect(200);
    t.app.get(AccessCache).forget({ token: claims.jti });
    expectProblem(await read(r.viewer.auth), 401);
  });

  it('logout: the token is refused at once', async () => {
    const { r, read } = await world();
    await read(r.member.auth).expect(200);
    await t.http.post('/auth/logout').set(r.member.auth).expect(204);
    expectProblem(await read(r.member.auth), 401);
  });

  it('deactivation: every token of the user is refused at once', async () => {
    const { r, read } = await world();
    const admin = await t.factory.actor({ systemRole: 'admin' });
    await read(r.viewer.auth).expect(200);
    await t.http.post(`/users/${r.viewer.id}/deactivate`).set(admin.auth).expect(200);
    expectProblem(await read(r.viewer.auth), 401);
  });

  it('a role lowered: a write the old role allowed is refused at once; raised: allowed at once', async () => {
    const { r, ws, dataset, read } = await world();
    const rename = (auth: Record<string, string>, name: string) =>
      t.http.patch(`/datasets/${dataset}`).set(auth).send({ name });
    await rename(r.member.auth, 'renamed-by-member').expect(200);
    await t.http
      .patch(`/workspaces/${ws}/members/${r.member.id}`)
      .set(r.owner.auth)
      .send({ role: 'viewer' })
      .expect(200);
    expectProblem(await rename(r.member.auth, 'renamed-again'), 403, 'forbidden');
    await read(r.member.auth).expect(200);
    await t.http
      .patch(`/workspaces/${ws}/members/${r.member.id}`)
      .set(r.owner.auth)
      .send({ role: 'member' })
      .expect(200);
    await rename(r.member.auth, 'renamed-again').expect(200);
  });

  it('a member removed: refused at once; an outsider added: let in at once', async () => {
    const { r, ws, read } = await world();
    await read(r.viewer.auth).expect(200);
    await t.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.owner.auth).expect(204);
    expectProblem(await read(r.viewer.auth), 403, 'forbidden');
    expectProblem(await read(r.outsider.auth), 403, 'forbidden');
    await t.factory.addMember(ws, r.outsider.id, 'viewer');
    await read(r.outsider.auth).expect(200);
  });

  it('API keys: a revoked key is refused at once; its creator demoted, the key is held to the new role at once', async () => {
    const { r, ws, dataset, read } = await world();
    const created = await t.http
      .post(`/workspaces/${ws}/api-keys`)
      .set(r.member.auth)
      .send({ name: 'ci', role: 'member' })
      .expect(201);
    const { id, key } = created.body as { id: string; key: string };
    const keyAuth = { Authorization: `Bearer ${key}` };
    const rename = (name: string) => t.http.patch(`/datasets/${dataset}`).set(keyAuth).send({ name });
    await read(keyAuth).expect(200);
    await rename('renamed-by-key').expect(200);
    await t.http
      .patch(`/workspaces/${ws}/members/${r.member.id}`)
      .set(r.owner.auth)
      .send({ role: 'viewer' })
      .expect(200);
    expectProblem(await rename('renamed-by-key-again'), 403, 'forbidden');
    await read(keyAuth).expect(200);
    await t.http.delete(`/workspaces/${ws}/api-keys/${id}`).set(r.member.auth).expect(204);
    expectProblem(await read(keyAuth), 401);
  });

  it('every table of records in a workspace says when a record moves (a later migration must add the trigger too)', async () => {
    const tables = await movableTables(t.dataSource);
    expect(tables).toEqual(expect.arrayContaining(['datasets', 'projects', 'runs']));
    const triggers: Array<{ tgname: string }> = await t.dataSource.query(
      `SELECT tgname FROM pg_trigger WHERE right(tgname, 13) = '_access_moved' AND NOT tgisinternal`,
    );
    expect(triggers.map((x) => x.tgname).sort()).toEqual(tables.map((table) => `${table}_access_moved`).sort());
  });

  it('a workspace deleted: its records are gone for everyone at once', async () => {
    const { r, ws, read } = await world();
    await read(r.viewer.auth).expect(200);
    await t.http.get(`/workspaces/${ws}`).set(r.viewer.auth).expect(200);
    await t.http.delete(`/workspaces/${ws}`).set(r.owner.auth).query({ confirm: r.workspace.name }).expect(204);
    expectProblem(await t.http.get(`/workspaces/${ws}`).set(r.viewer.auth), 404, 'not_found');
    expectProblem(await read(r.viewer.auth), 404, 'not_found');
  });
});

describeOn('postgres', 'other processes hear changes through LISTEN/NOTIFY; the embedded database serves one process')(
  'the access cache across processes (PostgreSQL)',
  () => {
    let a: TestApp;
    let b: TestApp;

    beforeAll(async () => {
      a = await startTestApp();
      b = await startTestApp(
        { JWT_SECRET: a.config.keys.jwtSecret, ENCRYPTION_KEY: a.config.keys.encryptionKey.toString('base64') },
        { database: a.db },
      );
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const world = async () => {
      const r = await a.factory.workspaceWithRoles();
      const ws = r.workspace.id;
      const readOnB = (auth: Record<string, string>) => b.http.get(`/workspaces/${ws}`).set(auth);
      // Until B answers the viewer and the member from memory (it starts listening at its first
      // request and keeps nothing before it hears): what follows must then reach it.
      const cache = b.app.get(AccessCache);
      await within(15_000, async () => {
        for (const who of [r.viewer, r.member]) await readOnB(who.auth).expect(200);
        return [r.viewer, r.member].every((who) => cache.session(jtiOf(who.token)) !== undefined);
      });
      return { r, ws, readOnB };
    };

    it('a logout through one process is refused by the other', async () => {
      const { r, readOnB } = await world();
      await a.http.post('/auth/logout').set(r.viewer.auth).expect(204);
      const took = await within(2_000, async () => (await readOnB(r.viewer.auth)).status === 401);
      expect(took).toBeLessThan(2_000);
    });

    it('an API key revoked through one process is refused by the other', async () => {
      const { r, ws, readOnB } = await world();
      const created = await a.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'ci', role: 'viewer' })
        .expect(201);
      const { id, key } = created.body as { id: string; key: string };
      const keyAuth = { Authorization: `Bearer ${key}` };
      await readOnB(keyAuth).expect(200);
      await readOnB(keyAuth).expect(200);
      await a.http.delete(`/workspaces/${ws}/api-keys/${id}`).set(r.member.auth).expect(204);
      await within(2_000, async () => (await readOnB(keyAuth)).status === 401);
    });

    it('a member removed through one process is refused by the other', async () => {
      const { r, ws, readOnB } = await world();
      await a.http.delete(`/workspaces/${ws}/members/${r.viewer.id}`).set(r.owner.auth).expect(204);
      await within(2_000, async () => (await readOnB(r.viewer.auth)).status === 403);
    });

    it('a project moved through one process: the other answers for its new workspace', async () => {
      const { r, ws, readOnB } = await world();
      const target = await a.factory.newWorkspace(r.admin);
      const project = (
        await a.http.post('/projects').set(r.member.auth).send({ workspace_id: ws, name: 'moving' }).expect(201)
      ).body as { id: string };
      await b.http.get(`/projects/${project.id}`).set(r.viewer.auth).expect(200);
      await a.http.post(`/projects/${project.id}/move`).set(r.admin.auth).send({ workspace_id: target.id }).expect(200);
      await within(2_000, async () => (await b.http.get(`/projects/${project.id}`).set(r.viewer.auth)).status === 403);
      expect((await readOnB(r.viewer.auth)).status).toBe(200);
    });

    it("SQL by hand (an operator deactivating a user) reaches every process's cache", async () => {
      const { r, readOnB } = await world();
      const client = new pg.Client({ connectionString: a.db.kind === 'postgres' ? a.db.url : '' });
      await client.connect();
      try {
        await client.query(`UPDATE users SET status = 'deactivated' WHERE id = $1`, [r.viewer.id]);
      } finally {
        await client.end();
      }
      await within(2_000, async () => (await readOnB(r.viewer.auth)).status === 401);
    });

    it('while the listening connection is down nothing is served from memory; once back, changes are heard again', async () => {
      const { r, readOnB } = await world();
      const notifications = b.app.get(DatabaseNotifications);
      // Every process's LISTEN connection dies: a change made before it is back is heard by nobody.
      await a.dataSource.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`,
      );
      await within(5_000, async () => !notifications.live);
      await a.dataSource.query('DELETE FROM workspace_members WHERE user_id = $1', [r.viewer.id]);
      expectProblem(await readOnB(r.viewer.auth), 403, 'forbidden');
      await within(15_000, async () => notifications.live);
      await readOnB(r.member.auth).expect(200);
      await a.dataSource.query(`UPDATE users SET status = 'deactivated' WHERE id = $1`, [r.member.id]);
      await within(2_000, async () => (await readOnB(r.member.auth)).status === 401);
    });
  },
);
