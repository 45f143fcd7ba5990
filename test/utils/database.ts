import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate, openDatabase } from '../../libs/database/data-source.factory.js';
import { migrations } from '../../src/database/migrations/index.js';

/**
 * Each test file runs on its own PostgreSQL database, cloned from a template that holds the
 * migrated schema. The template's name carries a hash of the migrations, so changing one
 * builds a fresh template on the next run.
 */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function templateName(): string {
  const dir = join(root, 'src', 'database', 'migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  return `ews_tpl_${hash.digest('hex').slice(0, 16)}`;
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

let templateReady: Promise<string> | undefined;

/**
 * Builds the migrated template once (the first test file to get here does, under an advisory
 * lock; the others wait and reuse it). Templates of older migrations are dropped.
 */
export function ensureTemplate(): Promise<string> {
  return (templateReady ??= withAdminClient(async (client) => {
    const template = templateName();
    await client.query('SELECT pg_advisory_lock(7310402316)');
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rowCount) return template;
      const building = `${template}_building`;
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${building}`);
      const db = await openDatabase({ url: databaseUrl(building), dataDir: '/nonexistent', poolSize: 1, entities: [], migrations });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
      const stale = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE 'ews_tpl_%' AND datname NOT LIKE '%_building' AND datname <> $1`, [template]);
      for (const row of stale.rows) await client.query(`DROP DATABASE IF EXISTS ${row.datname}`).catch(() => undefined);
      return template;
    } finally {
      await client.query('SELECT pg_advisory_unlock(7310402316)');
    }
  }));
}

/** A fresh database for one test file, cloned from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const name = `ews_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(async (client) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (err) {
        // Another session briefly holding the template (a concurrent clone) is retried.
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  return {
    name,
    url: databaseUrl(name),
    drop: () => withAdminClient(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }),
  };
}
