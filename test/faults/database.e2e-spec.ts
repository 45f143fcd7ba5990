import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Actor } from '../factories/factory.js';
import { withAdminClient } from '../utils/database.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/**
 * The database vanishes under load: every connection of the app is terminated
 * (pg_terminate_backend), then new connections are refused for a while. The process stays up,
 * requests fail fast with 503 problem+json (never 500, never a hang), /ready says not ready,
 * and everything answers again once the database is back, without a restart.
 */
describe('faults: PostgreSQL lost under load', () => {
  let t: TestApp;
  let actor: Actor;
  const REQUEST_BOUND_MS = 10_000;

  beforeAll(async () => {
    t = await startTestApp();
    actor = await t.factory.actor();
    await t.factory.newWorkspace(actor);
  });
  afterAll(async () => {
    await withAdminClient((c) => c.query(`ALTER DATABASE ${t.db.name} ALLOW_CONNECTIONS true`)).catch(() => undefined);
    await t?.close();
  });

  const terminateAll = () =>
    withAdminClient((c) => c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [t.db.name]));

  interface Outcome {
    status: number;
    ms: number;
    problem: boolean;
    code?: string;
  }

  /** Concurrent clients hitting database-backed routes until `stop` resolves. */
  async function load(stop: Promise<void>): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    let done = false;
    void stop.then(() => (done = true));
    const client = async () => {
      for (let i = 0; !done; i++) {
        const started = Date.now();
        const res = await t.http.get(i % 2 ? '/auth/me' : '/workspaces').set(actor.auth).timeout(REQUEST_BOUND_MS);
        outcomes.push({
          status: res.status,
          ms: Date.now() - started,
          problem: /^application\/problem\+json/.test(res.headers['content-type'] ?? '') && res.body.status === res.status,
          code: res.body?.error_code,
        });
      }
    };
    await Promise.all(Array.from({ length: 6 }, client));
    return outcomes;
  }

  it('answers 503 problem+json while the database is gone and recovers by itself', async () => {
    let release!: () => void;
    const stop = new Promise<void>((resolve) => (release = resolve));
    const running = load(stop);

    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 3; i++) {
      await terminateAll();
      await new Promise((r) => setTimeout(r, 150));
    }
    // The server refuses this database (as if stopped) for a second.
    await withAdminClient(async (c) => {
      await c.query(`ALTER DATABASE ${t.db.name} ALLOW_CONNECTIONS false`);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [t.db.name]);
    });
    const ready = await t.http.get('/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error_code).toBe('service_unavailable');
    await new Promise((r) => setTimeout(r, 1000));
    await withAdminClient((c) => c.query(`ALTER DATABASE ${t.db.name} ALLOW_CONNECTIONS true`));
    await new Promise((r) => setTimeout(r, 500));
    release();
    const outcomes = await running;

    const byStatus = outcomes.reduce<Record<number, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {});
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    process.stdout.write(`faults/database: ${outcomes.length} requests, by status ${JSON.stringify(byStatus)}, slowest ${slowest} ms\n`);

    expect(outcomes.filter((o) => o.status >= 500 && o.status !== 503)).toEqual([]);
    expect(outcomes.filter((o) => o.status === 503 && (!o.problem || o.code !== 'service_unavailable'))).toEqual([]);
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 503)).toEqual([]);
    expect(byStatus[503]).toBeGreaterThan(0);
    expect(slowest).toBeLessThan(REQUEST_BOUND_MS);

    // Recovered without a restart.
    await t.http.get('/auth/me').set(actor.auth).expect(200);
    await t.http.get('/workspaces').set(actor.auth).expect(200);
    await t.http.get('/ready').expect(200);
  });
});
