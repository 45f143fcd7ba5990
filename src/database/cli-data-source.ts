import type { DataSource } from 'typeorm';
import { loadEnvironment } from '#libs/config/environment.js';
import { cliDataSource, loadedEntities } from '#libs/database/cli-data-source.js';
// Loads every family module (FAMILY_MODULES), hence every entity the application registers.
import '../app.module.js';
import { migrations } from './migrations/index.js';

/**
 * The data source the TypeORM CLI works on (ormconfig.ts): the service's PostgreSQL options from
 * the same validated environment (DATABASE_URL, DATABASE_POOL_SIZE), every entity the application
 * loads (what its data source registers with `autoLoadEntities`: test/database/ormconfig checks
 * the two agree) and its migrations, in their table `schema_migrations`.
 */
export function applicationDataSource(source: NodeJS.ProcessEnv = process.env): DataSource {
  const env = loadEnvironment(source);
  if (!env.DATABASE_URL) {
    throw new Error(
      'The TypeORM CLI works on PostgreSQL: set DATABASE_URL (a scratch database is enough; see docs/operations.md#schema-changes)',
    );
  }
  return cliDataSource({
    url: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    poolSize: env.DATABASE_POOL_SIZE,
    entities: loadedEntities(),
    migrations,
  });
}
