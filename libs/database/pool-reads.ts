import type pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * A pooled connection checked out for one read, seen by a shutdown as it sees TypeORM's query
 * runners (DatabaseShutdown's ConnectedRunner): whether it is back, its connection, and how to
 * give it back, with an error when the pool must drop it.
 */
export class PoolLease {
  isReleased = false;

  constructor(
    readonly databaseConnection: pg.PoolClient,
    private readonly leases: Set<PoolLease>,
  ) {
    leases.add(this);
  }

  /** Gives the connection back (once; later calls do nothing), dropped by the pool when `err` is given. */
  giveBack(err?: Error): void {
    if (this.isReleased) return;
    this.isReleased = true;
    this.leases.delete(this);
    this.databaseConnection.release(err);
  }

  async releasePostgresConnection(err?: Error): Promise<void> {
    this.giveBack(err);
  }

  async release(): Promise<void> {
    this.giveBack();
  }
}

/**
 * Reads straight off the data source's node-postgres pool, without a TypeORM query runner: the
 * named prepared statements every request makes (Db.prepared). A query runner costs a request
 * more than the pool does (its construction, a promise chain, an error listener added and
 * removed, its place in the driver's list); the pool's connection is the same one.
 */
export class PoolReads {
  private readonly leases = new Set<PoolLease>();

  constructor(private readonly dataSource: DataSource) {}

  /** The connections checked out for reads right now (DatabaseShutdown aborts them with the runners'). */
  inUse(): PoolLease[] {
    return [...this.leases];
  }

  /** Runs a named prepared statement on a pooled connection of its own; answers the rows. */
  async prepared<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as unknown as { master: pg.Pool }).master;
    // Every client hears its own errors (data-source.factory.ts's ServiceClient): one lost while
    // held here fails its query, and the pool drops it when it comes back.
    const client = await pool.connect();
    const lease = new PoolLease(client, this.leases);
    try {
      return (await client.query({ name, text, values })).rows as T[];
    } finally {
      lease.giveBack();
    }
  }
}

const byDataSource = new WeakMap<DataSource, PoolReads>();

/** The data source's PoolReads: Db reads through it, DatabaseShutdown sees what it holds. */
export function poolReads(dataSource: DataSource): PoolReads {
  let reads = byDataSource.get(dataSource);
  if (!reads) byDataSource.set(dataSource, (reads = new PoolReads(dataSource)));
  return reads;
}
