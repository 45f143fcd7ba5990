import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { applicationDataSource } from '#src/database/cli-data-source.js';
import { migrations } from '#src/database/migrations/index.js';
import { databaseUrl, withAdminClient } from '../utils/database.js';
import { describeOn } from '../utils/database-mode.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * ormconfig.ts, the TypeORM CLI's data source (`npm run migration:generate`), on a fresh
 * PostgreSQL database: it runs the service's migrations, then finds nothing to generate (the
 * entities describe the schema the migrations build), and it knows the entities the running
 * application registers.
 */
describeOn('postgres', 'the TypeORM CLI works on PostgreSQL (DATABASE_URL)')(
  'ormconfig.ts: the TypeORM CLI data source',
  () => {
    const name = `ews_orm_${process.pid}_${Date.now().toString(36)}`;
    let cli: DataSource;
    let app: TestApp | undefined;

    beforeAll(async () => {
      // Empty, not cloned from the migrated template: the CLI's own migrations build the schema.
      await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
      cli = applicationDataSource({ DATABASE_URL: databaseUrl(name), DATABASE_POOL_SIZE: '2' });
      await cli.initialize();
    });

    afterAll(async () => {
      await app?.close();
      if (cli?.isInitialized) await cli.destroy();
      await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    });

    it('runs the service migrations into its migrations table (migration:show, migration:run)', async () => {
      expect(await cli.showMigrations()).toBe(true);
      const ran = await cli.runMigrations({ transaction: 'each' });
      expect(ran.map((m) => m.name)).toEqual(migrations.map((m) => m.name));
      expect(await cli.showMigrations()).toBe(false);
      const [{ count }] = (await cli.query('SELECT count(*)::int AS count FROM schema_migrations')) as Array<{
        count: number;
      }>;
      expect(count).toBe(migrations.length);
    });

    it('finds no schema change on the migrated database (what `migration:generate --check` computes)', async () => {
      const { upQueries } = await cli.driver.createSchemaBuilder().log();
      expect(upQueries.map((q) => q.query)).toEqual([]);
    });

    it('knows every entity the running application registers, and no other', async () => {
      app = await startTestApp();
      const tables = (source: DataSource) => source.entityMetadatas.map((m) => m.tablePath).sort();
      expect(tables(cli)).toEqual(tables(app.app.get(DataSource)));
      expect(tables(cli).length).toBeGreaterThan(30);
    });

    it('is what `npm run migration:generate` compiles and hands the CLI', () => {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      const script = pkg.scripts['migration:generate'];
      const compiled = /typeorm migration:generate -d dist\/(\S+)\.js/.exec(script)?.[1];
      expect(compiled).toBe('ormconfig');
      expect(existsSync(join(root, `${compiled}.ts`))).toBe(true);
      const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
      expect(build.include).toContain(`${compiled}.ts`);
      // The build runs first (only when the sources changed), so dist/ormconfig.js is current.
      expect(script.split('&&')[0].trim()).toBe('node scripts/build-if-stale.mjs');
    });
  },
);
