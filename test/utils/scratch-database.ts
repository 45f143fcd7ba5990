import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource, MigrationInterface } from 'typeorm';
import { openDatabase, type OpenedDatabase } from '#libs/database/data-source.factory.js';
import { migrations as all } from '#src/database/migrations/index.js';
import { databaseUrl, withAdminClient } from './database.js';
import { onPostgres } from './database-mode.js';

type MigrationClass = new () => MigrationInterface;

/** The migrations up to `last`: the later ones stay out, so `undoLastMigration` undoes `last`. */
export function migrationsUpTo(last: MigrationClass): MigrationClass[] {
  return all.slice(0, all.indexOf(last as (typeof all)[number]) + 1);
}

/** An empty database of its own, closed and removed by `close`. */
export interface ScratchDatabase {
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * An empty database for tests of migrations and of SQL below the application: a scratch
 * PostgreSQL database on the server, or an embedded one in a scratch directory, by this run's
 * mode, with `migrations` registered (not run).
 */
export async function openScratchDatabase(label: string, migrations: MigrationClass[] = all): Promise<ScratchDatabase> {
  const name = `ews_${label}_${process.pid}_${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(join(tmpdir(), `ews-${label}-`));
  if (onPostgres) await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
  const opened: OpenedDatabase = await openDatabase({
    url: onPostgres ? databaseUrl(name) : undefined,
    dataDir,
    poolSize: 2,
    entities: [],
    migrations,
  });
  return {
    dataSource: opened.dataSource,
    close: async () => {
      await opened.close();
      if (onPostgres) await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
