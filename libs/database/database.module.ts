import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type MixedList } from 'typeorm';
import { AppConfig } from '#libs/config/app-config.js';
import type { Logger } from 'pino';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { withTimeout } from '#libs/common/timeout.js';
import { migrate, OPENED_DATABASE, openDatabase, type OpenedDatabase } from './data-source.factory.js';
import { DatabaseShutdown } from './database-shutdown.js';
import { DatabaseNotifications } from './notifications.js';
import { Db, refuseQueriesOutsideTransaction, TransactionRunner } from './unit-of-work.js';

export { OPENED_DATABASE };

/** What the application hands the database module: its configuration, logger and migrations (libs never import src). */
export interface DatabaseModuleOptions {
  config: AppConfig;
  logger: Logger;
  /** Every migration, in order (the application's src/database/migrations). */
  migrations: MixedList<Function | string>;
}

class DatabaseHandle {
  db?: OpenedDatabase;
}

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown, OnModuleInit {
  constructor(
    @Inject(OPENED_DATABASE) private readonly handle: DatabaseHandle,
    private readonly readiness: ReadinessRegistry,
    private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    refuseQueriesOutsideTransaction(this.dataSource);
    this.readiness.register('database', async () => {
      const db = this.handle.db;
      if (!db) throw new Error('the database is closed');
      await withTimeout(db.dataSource.query('SELECT 1'), 2_000, 'the database did not answer within 2 s');
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.handle.db?.close();
    this.handle.db = undefined;
  }
}

/**
 * One data source for the process: PostgreSQL when DATABASE_URL is set, else the embedded
 * PGlite database under DATA_DIR. Pending migrations (handed over by the application) run before the first request. The open
 * transaction travels in the async context: repositories reach it through `Db`,
 * units of work open it through `TransactionRunner`, and a query outside it is refused.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot({ config, logger, migrations }: DatabaseModuleOptions): DynamicModule {
    const handle = new DatabaseHandle();
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            type: 'postgres',
            autoLoadEntities: true,
            synchronize: false,
            retryAttempts: config.embedded ? 0 : 5,
            retryDelay: 2000,
          }),
          dataSourceFactory: async (options?: DataSourceOptions) => {
            const db = await openDatabase({
              url: config.env.DATABASE_URL,
              dataDir: config.dataDir,
              poolSize: config.env.DATABASE_POOL_SIZE,
              sharedBuffers: config.env.EMBEDDED_SHARED_BUFFERS,
              entities: (options?.entities ?? []) as Function[],
              migrations,
              logger,
            });
            handle.db = db;
            await migrate(db);
            return db.dataSource;
          },
        }),
      ],
      providers: [
        { provide: OPENED_DATABASE, useValue: handle },
        DatabaseLifecycle,
        TransactionRunner,
        Db,
        DatabaseShutdown,
        DatabaseNotifications,
      ],
      exports: [OPENED_DATABASE, TransactionRunner, Db, DatabaseShutdown, DatabaseNotifications],
    };
  }
}
