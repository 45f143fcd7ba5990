import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { requirePostgres, withAdminClient } from '../../utils/database.js';
import { itOn } from '../../utils/database-mode.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('status: GET /live and GET /ready', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET /live answers without a token and without touching the database', async () => {
    const res = await t.http.get('/live').expect(200);
    expect(res.body).toEqual({ status: 'ok', uptime_seconds: expect.any(Number), version: expect.any(String) });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('GET /ready is 200 with a check for the database and the queue', async () => {
    const res = await t.http.get('/ready').expect(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: {
        database: { status: 'up', latency_ms: expect.any(Number) },
        queue: { status: 'up', latency_ms: expect.any(Number) },
      },
    });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('is 503 problem+json naming a failing probe, with the checks object, and 200 again once it answers', async () => {
    const registry = t.app.get(ReadinessRegistry);
    registry.register('search_index', async () => {
      throw new Error('connection refused by search-index at postgres://user:secret@10.0.0.7:9200/x');
    });
    const res = await t.http.get('/ready');
    expectProblem(res, 503, 'service_unavailable');
    expect(res.body.detail).toContain('search_index');
    expect(res.body.detail).not.toContain('database');
    expect(res.body.checks).toEqual({
      database: { status: 'up', latency_ms: expect.any(Number) },
      queue: { status: 'up', latency_ms: expect.any(Number) },
      search_index: {
        status: 'down',
        latency_ms: expect.any(Number),
        error: expect.stringContaining('connection refused'),
      },
    });
    // A probe's message reaches anonymous callers: connection strings are masked.
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(res.headers['retry-after']).toBe('5');

    registry.register('search_index', async () => undefined);
    const again = await t.http.get('/ready').expect(200);
    expect(again.body.checks.search_index).toEqual({ status: 'up', latency_ms: expect.any(Number) });
  });

  it('counts a probe that does not answer within the bound as down', async () => {
    const registry = t.app.get(ReadinessRegistry);
    registry.register('slow_dependency', () => new Promise<void>(() => undefined));
    const started = Date.now();
    const res = await t.http.get('/ready');
    expectProblem(res, 503, 'service_unavailable');
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(res.body.checks.slow_dependency).toEqual({
      status: 'down',
      latency_ms: expect.any(Number),
      error: 'slow_dependency did not answer within 3000 ms',
    });
    expect(res.body.checks.slow_dependency.latency_ms).toBeGreaterThanOrEqual(2_900);
    registry.register('slow_dependency', async () => undefined);
    await t.http.get('/ready').expect(200);
  });

  itOn('postgres', 'refuses and terminates the PostgreSQL connections of the app')(
    'is 503 while PostgreSQL refuses the service its connections, and recovers when it accepts them again',
    async () => {
      const { name } = requirePostgres(t.db);
      await withAdminClient(async (admin) => {
        try {
          await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
          await admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [name],
          );
          let res = await t.http.get('/ready');
          // The pool may still hand out a connection that has not noticed the termination yet.
          for (let i = 0; i < 5 && res.status === 200; i++) res = await t.http.get('/ready');
          expectProblem(res, 503, 'service_unavailable');
          expect(res.body.detail).toContain('database is down');
          expect(res.body.checks.database).toEqual({
            status: 'down',
            latency_ms: expect.any(Number),
            error: expect.any(String),
          });
          // /live does not depend on the database.
          await t.http.get('/live').expect(200);
        } finally {
          await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        }
      });
      let recovered = await t.http.get('/ready');
      for (let i = 0; i < 20 && recovered.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 250));
        recovered = await t.http.get('/ready');
      }
      expect(recovered.status).toBe(200);
      expect(recovered.body.checks.database.status).toBe('up');
    },
  );

  // Last: the app does not come back from it.
  it('is 503 from the shutdown signal on, naming it, while /live still answers', async () => {
    t.app.get(ReadinessRegistry).beginShutdown();
    const res = await t.http.get('/ready');
    expectProblem(res, 503, 'service_unavailable');
    expect(res.body.detail).toBe('Not ready: the service is shutting down');
    expect(res.body.checks).toEqual({
      shutdown: { status: 'down', latency_ms: 0, error: 'the service is shutting down' },
    });
    expect(res.headers['retry-after']).toBe('5');
    await t.http.get('/live').expect(200);
  });
});
