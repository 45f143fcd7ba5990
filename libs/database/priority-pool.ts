import pg from 'pg';
import { requestContext } from '#libs/common/request-context.js';

/**
 * How long a waiting background acquisition (a job's, outside any request) may be passed by
 * requests: after this it keeps its place, so a steady stream of requests slows a run down but
 * never stops it.
 */
export const BACKGROUND_YIELD_MS = 25;

/** pg-pool's waiter: what its `_pendingQueue` holds. */
type PendingItem = object;
type ConnectCallback = Parameters<pg.Pool['connect']> extends [infer C] ? C : never;
interface PoolInternals {
  _pendingQueue?: PendingItem[];
}

/**
 * The service's node-postgres pool: a connection that frees up goes to a request before a job.
 *
 * pg-pool hands freed connections to its waiters first come, first served. With the in-process
 * workers a run's answers (one write each, thousands a minute) queue for the same connections as
 * the requests being served: on the embedded database there is one, on PostgreSQL DATABASE_POOL_SIZE.
 * A GET then waits behind every answer queued before it, and its latency follows the run's pace.
 * Here a waiter from a request (a request context that is not a job's) goes ahead of the jobs'
 * waiters (and those of other work outside any request) that have waited less than
 * BACKGROUND_YIELD_MS, behind the other requests' waiters.
 *
 * It reorders pg-pool's own queue (`_pendingQueue`, an array since pg-pool 2); should a release
 * change that, `prioritised` reports false and the pool stays first come, first served
 * (test/e2e/database/priority-pool checks it on both databases).
 */
export class PriorityPool extends pg.Pool {
  private readonly foreground = new WeakSet<PendingItem>();
  private readonly queuedAt = new WeakMap<PendingItem, number>();

  /** Whether this pg-pool's queue can be reordered (see the class comment). */
  get prioritised(): boolean {
    return Array.isArray((this as unknown as PoolInternals)._pendingQueue);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const queue = (this as unknown as PoolInternals)._pendingQueue;
    const before = queue?.length ?? 0;
    const result = super.connect(callback as never) as Promise<pg.PoolClient> | void;
    // Queued: no idle connection and no room for a new one.
    if (Array.isArray(queue) && queue.length === before + 1) {
      const context = requestContext.getStore();
      this.place(queue, context !== undefined && !context.background);
    }
    return result;
  }

  /** Moves the waiter just queued (the last) to its place: a request's ahead of the jobs' recent ones. */
  private place(queue: PendingItem[], isRequest: boolean): void {
    const item = queue[queue.length - 1];
    if (!isRequest) {
      this.queuedAt.set(item, performance.now());
      return;
    }
    this.foreground.add(item);
    const passBefore = performance.now() - BACKGROUND_YIELD_MS;
    let at = queue.length - 1;
    // Back past the jobs' waiters queued recently; stop behind a request's or an old job's.
    while (at > 0) {
      const ahead = queue[at - 1];
      if (this.foreground.has(ahead) || (this.queuedAt.get(ahead) ?? -Infinity) < passBefore) break;
      at--;
    }
    if (at === queue.length - 1) return;
    queue.pop();
    queue.splice(at, 0, item);
  }
}

/** The pg module TypeORM loads, with the pool above (DataSourceOptions.driver). */
export const pgWithPriorityPool = Object.create(pg, { Pool: { value: PriorityPool } }) as typeof pg;
