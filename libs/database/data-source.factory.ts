import { PGlite } from '@electric-sql/pglite';
import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions, type MixedList } from 'typeorm';
import { lockDataDirectory } from './embedded-lock.js';
import { embeddedPgConfig } from './pglite-connection.js';
import { pgWithPriorityPool } from './priority-pool.js';
import { TypeOrmJsonLogger } from './typeorm-logger.js';
import type { Logger as PinoLogger } from 'pino';

/** How long a request waits for a free connection of the PostgreSQL pool before it answers 503. */
export const POOL_WAIT_MS = 30_000;
/** How long opening one connection to PostgreSQL may take (an unreachable server answers 503 after it). */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The service's node-postgres client, on either database: it always hears its own 'error' event.
 * pg-pool listens only while a client is idle and a TypeORM query runner only while it holds one;
 * a connection lost at another moment (a second 'error' after the runner let go, or while a read
 * of Db.prepared holds it without a runner) would otherwise crash the process. The query that was
 * running fails, and the pool discards the broken client when it comes back.
 */
class ServiceClient extends pg.Client {
  constructor(config: pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/** A PostgreSQL client that gives up connecting after CONNECT_TIMEOUT_MS, whatever the pool waits. */
class ConnectWithin extends ServiceClient {
  constructor(config: pg.ClientConfig) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

/**
 * The embedded database's buffer cache. PGlite's own default, 128MB, is resident from the moment
 * it opens (it touches all of it); at 32MB a freshly opened database holds much less, and a
 * 100,000-row insert took as long (docs/configuration.md, EMBEDDED_SHARED_BUFFERS;
 * docs/performance.md#dataset-uploads). The data
 * files stay in the operating system's page cache besides.
 */
export const EMBEDDED_SHARED_BUFFERS_DEFAULT = '32MB';

export interface DatabaseTarget {
  /** PostgreSQL URL; when absent the embedded database under `dataDir` is used. */
  url?: string;
  dataDir: string;
  poolSize: number;
  entities: MixedList<Function | string>;
  migrations: MixedList<Function | string>;
  /** Where TypeORM's messages go (JSON lines); silent when absent. */
  logger?: PinoLogger;
  /** The embedded database's `shared_buffers` (EMBEDDED_SHARED_BUFFERS); EMBEDDED_SHARED_BUFFERS_DEFAULT when absent. */
  sharedBuffers?: string;
}

/** The provider of `{ db?: OpenedDatabase }`, the database once it is open (DatabaseModule). */
export const OPENED_DATABASE = Symbol('OPENED_DATABASE');

export interface OpenedDatabase {
  dataSource: DataSource;
  kind: 'postgres' | 'embedded';
  /** The embedded engine itself, for what its node-postgres adapter cannot carry (COPY: libs/database/bulk-writer.ts). */
  pglite?: PGlite;
  close(): Promise<void>;
}

function baseOptions(target: DatabaseTarget) {
  return {
    type: 'postgres' as const,
    // Requests before jobs for a connection that frees up (libs/database/priority-pool.ts).
    driver: pgWithPriorityPool,
    uuidExtension: 'pgcrypto' as const,
    entities: target.entities,
    migrations: target.migrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    logging: (target.logger ? ['error', 'warn', 'migration'] : false) as Array<'error' | 'warn' | 'migration'> | false,
    ...(target.logger ? { logger: new TypeOrmJsonLogger(target.logger) } : {}),
    maxQueryExecutionTime: 2_000,
  };
}

/**
 * The options of a PostgreSQL data source: what the service opens, and what ormconfig.ts hands
 * the TypeORM CLI (same migrations table, extension and entities), not yet initialised.
 */
export function postgresOptions(target: DatabaseTarget & { url: string }): DataSourceOptions {
  return {
    ...baseOptions(target),
    url: target.url,
    // migrate() holds an advisory lock on one connection while migrating on another.
    poolSize: Math.max(2, target.poolSize),
    // node-postgres uses one timeout for two waits: for a free connection of the pool, and for a
    // new connection to the server. A burst of requests queues for the pool (up to
    // POOL_WAIT_MS, then 503) while an unreachable server still fails within CONNECT_TIMEOUT_MS.
    connectTimeoutMS: POOL_WAIT_MS,
    extra: { idleTimeoutMillis: 30_000, query_timeout: 60_000, Client: ConnectWithin },
    poolErrorHandler: () => undefined,
  } as DataSourceOptions;
}

/**
 * Opens PostgreSQL (DATABASE_URL) or the embedded PGlite database under DATA_DIR. PGlite is
 * reached through its own node-postgres adapter with a pool of one connection, the only
 * arrangement that keeps transactions apart; the data directory is locked first.
 */
export async function openDatabase(target: DatabaseTarget): Promise<OpenedDatabase> {
  if (target.url) {
    const dataSource = await new DataSource(postgresOptions({ ...target, url: target.url })).initialize();
    return {
      dataSource,
      kind: 'postgres',
      // TypeORM's module may have destroyed it already during shutdown.
      close: async () => {
        if (dataSource.isInitialized) await dataSource.destroy();
      },
    };
  }

  const pgDir = join(target.dataDir, 'pgdata');
  const release = await lockDataDirectory(target.dataDir, { logger: target.logger });
  let pglite: PGlite | undefined;
  try {
    // Settings go on PGlite's command line: its `postgresqlconf` option would replace the data
    // directory's postgresql.conf as a whole.
    const sharedBuffers = target.sharedBuffers ?? EMBEDDED_SHARED_BUFFERS_DEFAULT;
    pglite = await PGlite.create(pgDir, {
      extensions: { pgcrypto },
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`],
    });
    const dataSource = await new DataSource({
      ...baseOptions(target),
      poolSize: 1,
      extra: { ...embeddedPgConfig(pglite), Client: ServiceClient },
    } as DataSourceOptions).initialize();
    const db = pglite;
    return {
      dataSource,
      kind: 'embedded',
      pglite: db,
      close: async () => {
        if (dataSource.isInitialized) await dataSource.destroy();
        await db.close().catch(() => undefined);
        await release();
      },
    };
  } catch (err) {
    await pglite?.close().catch(() => undefined);
    await release();
    throw err;
  }
}

/**
 * Runs pending migrations. On PostgreSQL an advisory lock keeps two processes starting at
 * once (API and workers) from migrating concurrently.
 */
export async function migrate(db: OpenedDatabase): Promise<string[]> {
  const lockKey = 7_310_402_315;
  if (db.kind === 'postgres') {
    const runner = db.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [lockKey]);
      const ran = await db.dataSource.runMigrations({ transaction: 'each' });
      return ran.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [lockKey]).catch(() => undefined);
      await runner.release();
    }
  }
  const ran = await db.dataSource.runMigrations({ transaction: 'each' });
  return ran.map((m) => m.name);
}
