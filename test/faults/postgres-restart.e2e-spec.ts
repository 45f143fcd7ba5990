import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Actor } from '../factories/factory.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { loadUntil, sleep, summarise } from './support/load.js';
import { PrivatePostgres } from './support/private-postgres.js';
import { describeOn } from '../utils/database-mode.js';

/** A real stop and start of the PostgreSQL server under load: 503s, then recovery without a restart. */
describeOn('postgres', 'stops and starts a PostgreSQL server of its own')(
  'faults: PostgreSQL server stopped and started',
  () => {
    let pg: PrivatePostgres;
    let t: TestApp;
    let actor: Actor;
    const REQUEST_BOUND_MS = 10_000;

    beforeAll(async () => {
      pg = PrivatePostgres.create();
      t = await startTestApp(
        {},
        { database: { kind: 'postgres', name: 'ews', url: pg.url, drop: async () => undefined } },
      );
      actor = await t.factory.actor();
      await t.factory.newWorkspace(actor);
    });
    afterAll(async () => {
      await t?.close().catch(() => undefined);
      pg?.destroy();
    });

    it('answers 503 problem+json while the server is down and recovers when it is back', async () => {
      let release!: () => void;
      const stop = new Promise<void>((resolve) => (release = resolve));
      const running = loadUntil(t, actor, stop, REQUEST_BOUND_MS);
      await sleep(300);
      pg.stop();
      await sleep(1000);
      const ready = await t.http.get('/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual(expect.objectContaining({ error_code: 'service_unavailable', status: 503 }));
      pg.start();
      await sleep(1500);
      release();
      const outcomes = await running;

      const { byStatus, violations, slowest } = summarise(outcomes);
      process.stdout.write(
        `faults/postgres-restart: ${outcomes.length} requests, by status ${JSON.stringify(byStatus)}, slowest ${slowest} ms\n`,
      );
      expect(violations).toEqual([]);
      expect(byStatus[503]).toBeGreaterThan(0);
      expect(slowest).toBeLessThan(REQUEST_BOUND_MS);

      await t.http.get('/auth/me').set(actor.auth).expect(200);
      await t.http.get('/ready').expect(200);
    });
  },
);
