import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Actor } from '../factories/factory.js';
import { requirePostgres, withAdminClient } from '../utils/database.js';
import { loadUntil, summarise } from './support/load.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { describeOn } from '../utils/database-mode.js';

/**
 * The database vanishes under load: every connection of the app is terminated
 * (pg_terminate_backend), then new connections are refused for a while. The process stays up,
 * requests fail fast with 503 problem+json (never 500, never a hang), /ready says not ready,
 * and everything answers again once the database is back, without a restart.
 */
describeOn(
  'postgres',
  'terminates the PostgreSQL connections of the app and refuses new ones; the embedded database has no server to lose',
)('faults: PostgreSQL lost under load', () => {
  let t: TestApp;
  let actor: Actor;
  const REQUEST_BOUND_MS = 10_000;
  const database = () => requirePostgres(t.db).name;

  beforeAll(async () => {
    t = await startTestApp();
    actor = await t.factory.actor();
    await t.factory.newWorkspace(actor);
  });
  afterAll(async () => {
    await withAdminClient((c) => c.query(`ALTER DATABASE ${database()} ALLOW_CONNECTIONS true`)).catch(() => undefined);
    await t?.close();
  });

  const terminateAll = () =>
    withAdminClient((c) =>
      c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        database(),
      ]),
    );

  it('answers 503 problem+json while the database is gone and recovers by itself', async () => {
    let release!: () => void;
    const stop = new Promise<void>((resolve) => (release = resolve));
    const running = loadUntil(t, actor, stop, REQUEST_BOUND_MS);

    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 3; i++) {
      await terminateAll();
      await new Promise((r) => setTimeout(r, 150));
    }
    // The server refuses this database (as if stopped) for a second.
    await withAdminClient(async (c) => {
      await c.query(`ALTER DATABASE ${database()} ALLOW_CONNECTIONS false`);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database()]);
    });
    const ready = await t.http.get('/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error_code).toBe('service_unavailable');
    await new Promise((r) => setTimeout(r, 1000));
    await withAdminClient((c) => c.query(`ALTER DATABASE ${database()} ALLOW_CONNECTIONS true`));
    await new Promise((r) => setTimeout(r, 500));
    release();
    const outcomes = await running;

    const { byStatus, violations, slowest } = summarise(outcomes);
    process.stdout.write(
      `faults/database: ${outcomes.length} requests, by status ${JSON.stringify(byStatus)}, slowest ${slowest} ms\n`,
    );
    expect(violations).toEqual([]);
    expect(byStatus[503]).toBeGreaterThan(0);
    expect(slowest).toBeLessThan(REQUEST_BOUND_MS);

    // Recovered without a restart.
    await t.http.get('/auth/me').set(actor.auth).expect(200);
    await t.http.get('/workspaces').set(actor.auth).expect(200);
    await t.http.get('/ready').expect(200);
  });
});
