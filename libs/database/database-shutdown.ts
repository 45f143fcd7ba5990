import { Injectable, Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '#libs/config/app-config.js';
import { withTimeout } from '#libs/common/timeout.js';
import { poolReads } from './pool-reads.js';

/** After their statements were cancelled, how long connections get to come back before they are closed. */
const CANCEL_SETTLE_MS = 2_000;
/** Bound of each step that talks to the server while aborting (connect, cancel, terminate, rollback): one round stays under 10 s. */
const STEP_TIMEOUT_MS = 2_000;

/** A TypeORM query runner holding a pooled connection, or a PoolLease (the parts used here). */
interface ConnectedRunner {
  isReleased: boolean;
  databaseConnection?: { processID?: number | null; query(sql: string): Promise<unknown> };
  releasePostgresConnection?(err?: Error): Promise<void>;
  release(): Promise<void>;
}

interface PostgresDriverView {
  connectedQueryRunners: ConnectedRunner[];
  master?: { options?: pg.ClientConfig };
}

export interface BusyConnection {
  /** The server process of the connection (PostgreSQL), for pg_stat_activity. */
  pid: number | null;
}

/**
 * The database side of a bounded shutdown. Once requests and jobs had their grace, a connection
 * still checked out belongs to work that would hold the shutdown forever (a statement waiting on
 * a row lock, a long query, a transaction whose owner waits on something else). This aborts it:
 * on PostgreSQL the statements are cancelled (pg_cancel_backend), and what has not come back
 * within 2 s is terminated (pg_terminate_backend) and dropped from the pool; on the embedded
 * database the open transaction is rolled back and the connection dropped, so the pool can end
 * and PGlite close cleanly.
 */
@Injectable()
export class DatabaseShutdown {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  private get driver(): PostgresDriverView {
    return this.dataSource.driver as unknown as PostgresDriverView;
  }

  /** TypeORM's query runners holding a connection, and the connections checked out for reads (pool-reads.ts). */
  private runners(): ConnectedRunner[] {
    if (!this.dataSource.isInitialized) return [];
    const held: ConnectedRunner[] = [
      ...(this.driver.connectedQueryRunners ?? []),
      ...poolReads(this.dataSource).inUse(),
    ];
    return held.filter((r) => !r.isReleased);
  }

  /** Connections checked out right now. */
  busy(): BusyConnection[] {
    return this.runners().map((r) => ({
      pid: this.config.embedded ? null : (r.databaseConnection?.processID ?? null),
    }));
  }

  /** Aborts the work of every checked-out connection (see the class). Returns how many there were. */
  async abortBusy(): Promise<number> {
    const runners = this.runners();
    if (!runners.length) return 0;
    const pids = (list: ConnectedRunner[]) =>
      list.map((r) => r.databaseConnection?.processID).filter((pid): pid is number => Number.isInteger(pid));
    // One connection of its own for cancelling and terminating: the pool's may all be taken.
    const admin = this.config.embedded ? null : await this.adminConnection();
    try {
      if (this.config.embedded) {
        this.logger.warn(
          `shutdown: ${runners.length} database connection(s) still in use; waiting up to ${CANCEL_SETTLE_MS / 1000} s before rolling back`,
        );
      } else {
        this.logger.warn(
          `shutdown: ${runners.length} database connection(s) still in use; cancelling their statements (server pids ${pids(runners).join(', ')})`,
        );
        await this.signalBackends(admin, 'pg_cancel_backend', pids(runners));
      }
      await waitFor(() => runners.every((r) => r.isReleased), CANCEL_SETTLE_MS);
      const stuck = runners.filter((r) => !r.isReleased);
      if (!stuck.length) return runners.length;
      if (this.config.embedded) {
        // Dropped without a rollback, the transaction would stay open for whoever gets the connection next.
        for (const runner of stuck)
          await withTimeout(runner.databaseConnection!.query('ROLLBACK'), STEP_TIMEOUT_MS, 'rollback timed out').catch(
            () => undefined,
          );
      } else {
        await this.signalBackends(admin, 'pg_terminate_backend', pids(stuck));
      }
      const reason = new Error('the connection was closed at shutdown');
      for (const runner of stuck) {
        // With an error, the pool discards the connection instead of lending it to the next caller.
        await (runner.releasePostgresConnection ? runner.releasePostgresConnection(reason) : runner.release()).catch(
          () => undefined,
        );
      }
      this.logger.warn(`shutdown: closed ${stuck.length} database connection(s) that did not come back`);
      return runners.length;
    } finally {
      if (admin) await withTimeout(admin.end(), 1_000, 'end timed out').catch(() => undefined);
    }
  }

  /** A connection outside the pool, or null (logged) when the server does not take one in time. */
  private async adminConnection(): Promise<pg.Client | null> {
    const options = this.driver.master?.options ?? {};
    const client = new pg.Client({
      ...options,
      application_name: 'ews-shutdown',
      connectionTimeoutMillis: STEP_TIMEOUT_MS,
      query_timeout: STEP_TIMEOUT_MS,
    });
    client.on('error', () => undefined);
    try {
      await withTimeout(client.connect(), STEP_TIMEOUT_MS + 500, 'connect timed out');
      return client;
    } catch (err) {
      this.logger.warn(
        `shutdown: no connection to cancel statements with (${(err as Error).message}); the connections are closed from this side`,
      );
      void client.end().catch(() => undefined);
      return null;
    }
  }

  /** Sends `fn(pid)` (cancel or terminate) for these server processes. */
  private async signalBackends(
    admin: pg.Client | null,
    fn: 'pg_cancel_backend' | 'pg_terminate_backend',
    pids: number[],
  ): Promise<void> {
    if (!admin || !pids.length) return;
    try {
      await withTimeout(
        admin.query(`SELECT ${fn}(pid) FROM unnest($1::int[]) AS pid`, [pids]),
        STEP_TIMEOUT_MS + 500,
        `${fn} timed out`,
      );
    } catch (err) {
      this.logger.warn(`shutdown: ${fn} failed (${(err as Error).message}); the connections are closed from this side`);
    }
  }
}

async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
}
