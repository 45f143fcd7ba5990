import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import { migrate, openDatabase, type OpenedDatabase } from '#libs/database/data-source.factory.js';
import { migrations } from '#src/database/migrations/index.js';
import { TEST_DATABASE } from './database-mode.js';

/**
 * Each test file runs on its own database: on PostgreSQL a database cloned from a template that
 * holds the migrated schema; on the embedded mode a DATA_DIR copied from a migrated template
 * data directory. Both templates are named by a hash of the migrations, so changing one builds
 * a fresh template on the next run.
 */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function migrationsHash(): string {
  const dir = join(root, 'src', 'database', 'migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  return hash.digest('hex').slice(0, 16);
}

export function templateName(): string {
  return `ews_tpl_${migrationsHash()}`;
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

export interface PostgresTestDatabase {
  kind: 'postgres';
  name: string;
  url: string;
  drop(): Promise<void>;
}

export interface EmbeddedTestDatabase {
  kind: 'embedded';
  /** The DATA_DIR holding the database (`pgdata/`); the app's uploads and keys go there too. */
  dataDir: string;
  drop(): Promise<void>;
}

export type TestDatabase = PostgresTestDatabase | EmbeddedTestDatabase;

/** For tests that reach PostgreSQL from outside the app (admin queries, pg_dump, other processes). */
export function requirePostgres(db: TestDatabase): PostgresTestDatabase {
  if (db.kind !== 'postgres')
    throw new Error("this test needs PostgreSQL (mark it with describeOn/itOn('postgres', reason))");
  return db;
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
      const db = await openDatabase({
        url: databaseUrl(building),
        dataDir: '/nonexistent',
        poolSize: 1,
        entities: [],
        migrations,
      });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
      const stale = await client.query(
        `SELECT datname FROM pg_database WHERE datname LIKE 'ews_tpl_%' AND datname NOT LIKE '%_building' AND datname <> $1`,
        [template],
      );
      for (const row of stale.rows) await client.query(`DROP DATABASE IF EXISTS ${row.datname}`).catch(() => undefined);
      return template;
    } finally {
      await client.query('SELECT pg_advisory_unlock(7310402316)');
    }
  }));
}

/** A fresh database for one test file, of the kind this run is on (TEST_DATABASE). */
export function createTestDatabase(): Promise<TestDatabase> {
  return TEST_DATABASE === 'embedded' ? createEmbeddedDatabase() : createPostgresDatabase();
}

/**
 * The test database opened below the application (no entities; the migrations already ran): for
 * tests of libs/database itself. The embedded one has its single connection whatever `poolSize`.
 */
export function openTestDatabase(
  testDb: TestDatabase,
  poolSize: number,
  entities: Array<new () => object> = [],
): Promise<OpenedDatabase> {
  return testDb.kind === 'postgres'
    ? openDatabase({ url: testDb.url, dataDir: '/nonexistent', poolSize, entities, migrations })
    : openDatabase({ dataDir: testDb.dataDir, poolSize: 1, entities, migrations });
}

/** A fresh PostgreSQL database, cloned from the migrated template. */
export async function createPostgresDatabase(): Promise<PostgresTestDatabase> {
  let template = await ensureTemplate();
  const name = `ews_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(async (client) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= 20 || (code !== '55006' && code !== '3D000')) throw err;
        // Another session briefly holding the template (a concurrent clone) is retried. A checkout with
        // other migrations on the same server drops templates not its own (ensureTemplate): build ours again.
        if (code === '3D000') {
          templateReady = undefined;
          template = await ensureTemplate();
        }
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  return {
    kind: 'postgres',
    name,
    url: databaseUrl(name),
    drop: () =>
      withAdminClient(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

/**
 * Migrated template data directories live here, one per migrations hash and PGlite version
 * (TEST_EMBEDDED_TEMPLATES overrides), shared by every jest worker and checkout on the machine.
 */
const EMBEDDED_TEMPLATES = process.env.TEST_EMBEDDED_TEMPLATES ?? join(tmpdir(), 'ews-test-templates');
const STALE_TEMPLATE_MS = 24 * 3600_000;

function pgliteVersion(): string {
  return (
    JSON.parse(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
}

export function embeddedTemplateDir(): string {
  return join(EMBEDDED_TEMPLATES, `embedded_${migrationsHash()}_pglite-${pgliteVersion()}`);
}

let embeddedTemplateReady: Promise<string> | undefined;

/**
 * Builds the migrated template data directory once: the first worker to get here migrates a
 * fresh PGlite directory under a file lock and renames it into place; the others wait for the
 * lock and reuse it. Copying it (≈ 40 MB) costs far less than initdb plus every migration.
 * Templates of other migrations unused for a day are removed.
 */
export function ensureEmbeddedTemplate(): Promise<string> {
  return (embeddedTemplateReady ??= (async () => {
    const template = embeddedTemplateDir();
    if (existsSync(template)) return touched(template);
    mkdirSync(EMBEDDED_TEMPLATES, { recursive: true });
    const release = await lockfile.lock(EMBEDDED_TEMPLATES, {
      lockfilePath: `${template}.lock`,
      realpath: false,
      stale: 60_000,
      update: 10_000,
      retries: { retries: 600, minTimeout: 100, maxTimeout: 500 },
    });
    try {
      if (existsSync(template)) return touched(template);
      const building = `${template}.building-${process.pid}`;
      rmSync(building, { recursive: true, force: true });
      const db = await openDatabase({ dataDir: building, poolSize: 1, entities: [], migrations });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      renameSync(building, template);
      for (const entry of readdirSync(EMBEDDED_TEMPLATES)) {
        const path = join(EMBEDDED_TEMPLATES, entry);
        if (path === template || !entry.startsWith('embedded_') || entry.endsWith('.lock')) continue;
        if (Date.now() - statSync(path).mtimeMs > STALE_TEMPLATE_MS) rmSync(path, { recursive: true, force: true });
      }
      return template;
    } finally {
      await release();
    }
  })());
}

/** Marks a template as used (its mtime), so the stale sweep above leaves it. */
function touched(template: string): string {
  const now = new Date();
  utimesSync(template, now, now);
  return template;
}

/** A fresh DATA_DIR for one test file, holding a copy of the migrated template's database. */
export async function createEmbeddedDatabase(): Promise<EmbeddedTestDatabase> {
  const template = await ensureEmbeddedTemplate();
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-test-'));
  cpSync(join(template, 'pgdata'), join(dataDir, 'pgdata'), { recursive: true });
  return {
    kind: 'embedded',
    dataDir,
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
