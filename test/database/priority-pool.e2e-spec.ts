import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { requestContext } from '#libs/common/request-context.js';
import type { OpenedDatabase } from '#libs/database/data-source.factory.js';
import { BACKGROUND_YIELD_MS, PriorityPool } from '#libs/database/priority-pool.js';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../utils/database.js';
import { TEST_DATABASE } from '../utils/database-mode.js';

/**
 * The service's pool on both databases: a connection that frees up goes to a request's waiter
 * before the jobs' (a run's answers), except a job's that has waited BACKGROUND_YIELD_MS, so a
 * steady stream of requests never stops a run.
 */
describe(`the connection pool on ${TEST_DATABASE}: requests before jobs`, () => {
  let db: OpenedDatabase;
  let testDb: TestDatabase;
  let pool: PriorityPool;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    // Two connections on PostgreSQL (the smallest pool it opens); one on the embedded database.
    db = await openTestDatabase(testDb, 2);
    pool = (db.dataSource.driver as unknown as { master: PriorityPool }).master;
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  /** Takes every connection of the pool, and answers them to give back one by one. */
  async function holdAll(): Promise<pg.PoolClient[]> {
    const held: pg.PoolClient[] = [];
    const size = pool.options.max ?? 10;
    for (let i = 0; i < size; i++) held.push(await pool.connect());
    return held;
  }

  /**
   * A waiter for a connection: from a request, from a job (in the context a worker gives it,
   * libs/queue/job-executor.ts) or from work outside either; records when it got one.
   */
  function wait(name: string, from: 'request' | 'job' | 'outside', order: string[]): Promise<pg.PoolClient> {
    const take = () =>
      pool.connect().then((client) => {
        order.push(name);
        return client;
      });
    if (from === 'request') return requestContext.run({ requestId: name }, take);
    if (from === 'job') return requestContext.run({ requestId: `job:${name}`, background: true }, take);
    return take();
  }

  /**
   * Gives the held connections back one at a time, each time waiting for the waiter that got it
   * (the first in the pool's queue) and holding that one's connection in turn. Answers what is held at the end.
   */
  async function freeOneByOne(
    held: pg.PoolClient[],
    waiters: Record<string, Promise<pg.PoolClient>>,
    order: string[],
  ): Promise<pg.PoolClient[]> {
    const clients = [...held];
    for (let served = 1; served <= Object.keys(waiters).length; served++) {
      (clients.shift() as pg.PoolClient).release();
      while (order.length < served) await new Promise((resolve) => setImmediate(resolve));
      clients.push(await waiters[order[served - 1]]);
    }
    return clients;
  }

  it('is the pool the data source opened, and its queue can be reordered', () => {
    expect(pool).toBeInstanceOf(PriorityPool);
    expect(pool.prioritised).toBe(true);
  });

  it("hands a freed connection to a request's waiter before the jobs' that queued just before it, requests in their order", async () => {
    const held = await holdAll();
    const order: string[] = [];
    const waiters = {
      'job-1': wait('job-1', 'job', order),
      'job-2': wait('job-2', 'job', order),
      'request-1': wait('request-1', 'request', order),
      'outside-1': wait('outside-1', 'outside', order),
      'request-2': wait('request-2', 'request', order),
    };
    expect(pool.waitingCount).toBe(5);
    const all = await freeOneByOne(held, waiters, order);
    expect(order).toEqual(['request-1', 'request-2', 'job-1', 'job-2', 'outside-1']);
    for (const client of all) client.release();
    // Every connection came back: a query still runs.
    expect((await db.dataSource.query('SELECT 1 AS one'))[0].one).toBe(1);
  });

  it(`does not pass a job's waiter that has waited ${BACKGROUND_YIELD_MS} ms: a run slows under requests, never stops`, async () => {
    const held = await holdAll();
    const order: string[] = [];
    const old = wait('old-job', 'job', order);
    await new Promise((resolve) => setTimeout(resolve, BACKGROUND_YIELD_MS + 20));
    const recent = wait('recent-job', 'job', order);
    const request = wait('request', 'request', order);
    const clients = await freeOneByOne(held, { 'old-job': old, 'recent-job': recent, request }, order);
    expect(order).toEqual(['old-job', 'request', 'recent-job']);
    for (const client of clients) client.release();
  });

  it('runs queries of requests and jobs side by side with none lost', async () => {
    const runOne = (i: number) => db.dataSource.query('SELECT $1::int AS n', [i]) as Promise<Array<{ n: number }>>;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? requestContext.run({ requestId: `r${i}` }, () => runOne(i)) : runOne(i),
      ),
    );
    expect(answers.map((rows) => rows[0].n)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(pool.waitingCount).toBe(0);
  });
});
