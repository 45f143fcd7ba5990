import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { shutdownBounds } from '#src/shutdown.js';
import { createPostgresDatabase, type PostgresTestDatabase } from '../utils/database.js';
import { describeOn } from '../utils/database-mode.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, testEnvironment } from '../utils/test-app.js';
import {
  killIfRunning,
  type RunningService,
  spawnService,
  type ServiceProcess,
  untilReady,
} from './support/service-process.js';

/**
 * The real service in child processes (`src/main.ts`, as `npm start` runs it), killed and
 * stopped for real: a restart right after SIGKILL, SIGTERM with work stuck upstream (and, on
 * PostgreSQL, a request stuck on a row lock),
 * and two processes on one DATA_DIR. Bounds are generous: two shared cores boot a child slowly.
 */
jest.setTimeout(600_000);

/** A child boots from the TypeScript sources (and migrates a fresh database): slow on a loaded machine. */
const BOOT_MS = 240_000;

async function call(
  service: RunningService,
  method: string,
  path: string,
  auth?: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...(auth ?? {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function login(service: RunningService, email: string, password: string): Promise<Record<string, string>> {
  const res = await call(service, 'POST', '/auth/token', undefined, { email, password });
  expect(res.status).toBe(200);
  return { authorization: `Bearer ${res.body.access_token}` };
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends SIGTERM and waits for the exit; `seconds` is measured from the signal. */
async function terminate(
  service: ServiceProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; seconds: number }> {
  const sentAt = service.signal('SIGTERM');
  const exit = await service.exited;
  return { code: exit.code, signal: exit.signal, seconds: (exit.at - sentAt) / 1000 };
}

/** An upstream that never answers: trace landings and SUT calls wait on it. */
async function hangingSource(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  const held: ServerResponse[] = [];
  const server: Server = createServer((_req, res) => void held.push(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => held.length,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describeOn('embedded', 'spawns the service on a DATA_DIR of its own')(
  'lifecycle: embedded database (one DATA_DIR, one process)',
  () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-lifecycle-'));
    // Requests' grace ends first, so the request waiting on its upstream is still waiting then.
    const grace = { SHUTDOWN_GRACE_SECONDS: 1, QUEUE_SHUTDOWN_GRACE_SECONDS: 3 };
    const env = {
      DATA_DIR: dataDir,
      ADMIN_EMAIL: 'lifecycle@example.com',
      ADMIN_PASSWORD: 'lifecycle-password-1',
      SHUTDOWN_GRACE_SECONDS: String(grace.SHUTDOWN_GRACE_SECONDS),
      QUEUE_SHUTDOWN_GRACE_SECONDS: String(grace.QUEUE_SHUTDOWN_GRACE_SECONDS),
    };
    const children: ServiceProcess[] = [];
    const start = (extra: Record<string, string> = {}) => {
      const child = spawnService({ ...env, ...extra });
      children.push(child);
      return child;
    };
    let source: Awaited<ReturnType<typeof hangingSource>> | undefined;

    afterAll(async () => {
      for (const child of children) killIfRunning(child);
      await source?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    let first: RunningService;
    let auth: Record<string, string>;
    const committed: string[] = [];

    it('a second process on the same DATA_DIR refuses to start, naming DATA_DIR and the owner', async () => {
      first = await untilReady(start(), BOOT_MS);
      auth = await login(first, env.ADMIN_EMAIL, env.ADMIN_PASSWORD);

      const second = start();
      const exit = await second.exited;
      expect(exit).toMatchObject({ code: 1, signal: null });
      expect(second.output()).toContain(
        `DATA_DIR: ${dataDir} is in use by another process of this service (pid ${first.child.pid} on `,
      );
      expect((await call(first, 'GET', '/ready')).status).toBe(200);
    });

    it('restarts at once on the same DATA_DIR after SIGKILL mid-write: the stale lock is taken over, every committed write is there', async () => {
      // Writes in flight when the process dies; each one answered 201 before the kill must survive it.
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const res = await call(first, 'POST', '/workspaces', auth, { name: `before-kill-${i}` }).catch(() => null);
          if (res?.status === 201 && writing) committed.push(res.body.id);
        }
      })();
      await waitFor('a few committed writes', async () => committed.length >= 5);
      writing = false;
      first.signal('SIGKILL');
      expect(await first.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
      await writer;
      expect(JSON.parse(readFileSync(join(dataDir, '.lock'), 'utf8'))).toEqual(
        expect.objectContaining({ pid: first.child.pid }),
      );

      const spawnedAt = Date.now();
      const restarted = await untilReady(start(), BOOT_MS);
      process.stdout.write(
        `lifecycle: restarted after SIGKILL, ready in ${(Date.now() - spawnedAt) / 1000} s (${committed.length} committed writes checked)\n`,
      );
      expect(restarted.logs()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            msg: `DATA_DIR: removed a stale lock (its owner (pid ${first.child.pid}) is not running)`,
          }),
        ]),
      );
      // Not the 20 s staleness window: the lock was judged by its owner's pid at once.
      expect(restarted.logs().some((l) => l.msg.includes('waiting up to'))).toBe(false);

      const again = await login(restarted, env.ADMIN_EMAIL, env.ADMIN_PASSWORD);
      for (const id of committed) expect((await call(restarted, 'GET', `/workspaces/${id}`, again)).status).toBe(200);
      first = restarted;
      auth = again;
    });

    it('SIGTERM with a job stuck on its source and a request stuck on an upstream: the single connection stays free, exit 0 within the bound, DATA_DIR unlocked', async () => {
      source = await hangingSource();
      const workspace = (await call(first, 'POST', '/workspaces', auth, { name: 'traces' })).body;
      const connection = await call(first, 'POST', '/traces/connections', auth, {
        workspace_id: workspace.id,
        name: 'stalled',
        kind: 'phoenix',
        url: source.url,
      });
      expect(connection.status).toBe(201);
      expect(
        (await call(first, 'POST', `/traces/connections/${connection.body.id}/land`, auth, { dataset_name: 'stalled' }))
          .status,
      ).toBe(202);
      await waitFor('the landing job to call its source', async () => source!.requests() >= 1);

      // The landing waits on its source outside any transaction: the one embedded connection is free.
      const started = Date.now();
      expect((await call(first, 'GET', `/workspaces/${workspace.id}`, auth)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);

      // A connection test calls the same silent upstream: a request still running at SIGTERM.
      const sut = (await call(first, 'POST', '/suts', auth, { workspace_id: workspace.id, name: 'silent' })).body;
      const sutConnection = await call(first, 'POST', `/suts/${sut.id}/connections`, auth, {
        name: 'silent',
        kind: 'http',
        http: { url: `${source.url}/answer` },
        timeout_ms: 120_000,
        retry: { max_attempts: 1 },
      });
      expect(sutConnection.status).toBe(201);
      const calls = source.requests();
      const stuckPath = `/suts/${sut.id}/connections/${sutConnection.body.id}/test`;
      const stuck = call(first, 'POST', stuckPath, auth, {}).catch(() => undefined);
      await waitFor('the connection test to call its upstream', async () => source!.requests() > calls);

      const exit = await terminate(first);
      const bound = shutdownBounds(grace, true).deadlineMs / 1000;
      process.stdout.write(
        `lifecycle: embedded, a job and a request stuck upstream: exit ${exit.code} after ${exit.seconds} s (deadline ${bound} s)\n`,
      );
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.seconds).toBeLessThan(bound);
      await stuck;
      const logs = first.logs();
      expect(logs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }),
          expect.objectContaining({
            msg: expect.stringContaining('request(s) still running after SHUTDOWN_GRACE_SECONDS'),
            requests: [expect.objectContaining({ method: 'POST', path: stuckPath })],
          }),
          expect.objectContaining({ msg: expect.stringContaining('handed 1 unfinished job(s) back to the queue') }),
          expect.objectContaining({ msg: 'stopped' }),
        ]),
      );
      expect(existsSync(join(dataDir, '.lock'))).toBe(false);
    });

    it('starts again on the DATA_DIR it closed, with everything committed before', async () => {
      await source?.close();
      source = undefined;
      const restarted = await untilReady(start(), BOOT_MS);
      expect(restarted.logs().some((l) => l.msg.startsWith('DATA_DIR: removed a stale lock'))).toBe(false);
      const again = await login(restarted, env.ADMIN_EMAIL, env.ADMIN_PASSWORD);
      for (const id of committed) expect((await call(restarted, 'GET', `/workspaces/${id}`, again)).status).toBe(200);
      const exit = await terminate(restarted);
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(restarted.logs()).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'stopped' })]));
    });
  },
);

describeOn('postgres', 'spawns the service on a PostgreSQL database of its own')('lifecycle: PostgreSQL', () => {
  let db: PostgresTestDatabase;
  let service: ServiceProcess | undefined;
  let holder: pg.Client | undefined;
  let observer: pg.Client | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-lifecycle-pg-'));

  beforeAll(async () => {
    db = await createPostgresDatabase();
  });
  afterAll(async () => {
    killIfRunning(service);
    await holder?.end().catch(() => undefined);
    await observer?.end().catch(() => undefined);
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM with a request waiting on a row lock: the statement is cancelled and the process exits 0 within the bound', async () => {
    const grace = { SHUTDOWN_GRACE_SECONDS: 2, QUEUE_SHUTDOWN_GRACE_SECONDS: 1 };
    service = spawnService({
      ...testEnvironment(db),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_SECONDS: String(grace.SHUTDOWN_GRACE_SECONDS),
      QUEUE_SHUTDOWN_GRACE_SECONDS: String(grace.QUEUE_SHUTDOWN_GRACE_SECONDS),
    });
    const api = await untilReady(service, BOOT_MS);
    const auth = await login(api, ADMIN_EMAIL, ADMIN_PASSWORD);
    const workspace = (
      await call(api, 'POST', '/workspaces', auth, { name: `locked-${randomBytes(3).toString('hex')}` })
    ).body;

    holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM workspaces WHERE id = $1 FOR UPDATE', [workspace.id]);
    observer = new pg.Client({ connectionString: db.url });
    await observer.connect();
    const lockWaiters = async () =>
      (
        await observer!.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND pid <> $1`,
          [(holder as unknown as { processID: number }).processID],
        )
      ).rows.map((r) => r.pid as number);

    const patch = call(api, 'PATCH', `/workspaces/${workspace.id}`, auth, { name: 'renamed during shutdown' }).then(
      (res) => res.status,
      () => 'connection closed',
    );
    await waitFor('the PATCH to wait on the row lock', async () => (await lockWaiters()).length === 1);

    const exit = await terminate(service);
    const bound = shutdownBounds(grace, true).deadlineMs / 1000;
    process.stdout.write(
      `lifecycle: PostgreSQL, request waiting on a row lock: exit ${exit.code} after ${exit.seconds} s (deadline ${bound} s)\n`,
    );
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.seconds).toBeLessThan(bound);
    expect(service.logs()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          msg: expect.stringContaining('request(s) still running after SHUTDOWN_GRACE_SECONDS'),
          requests: [expect.objectContaining({ method: 'PATCH' })],
        }),
        expect.objectContaining({ msg: expect.stringContaining('cancelling their statements') }),
        expect.objectContaining({ msg: 'stopped' }),
      ]),
    );
    expect(await patch).not.toBe(200);
    // Nothing of the stopped process is left waiting on the server, and the write did not happen.
    expect(await lockWaiters()).toEqual([]);
    await holder.query('ROLLBACK');
    expect((await observer.query('SELECT name FROM workspaces WHERE id = $1', [workspace.id])).rows[0].name).toBe(
      workspace.name,
    );
  });
});
