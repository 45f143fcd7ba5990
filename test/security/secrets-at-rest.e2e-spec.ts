import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { keyIdOf } from '#libs/crypto/secret-cipher.js';
import { ADMIN_URL, createTestDatabase, databaseUrl, type TestDatabase } from '../utils/database.js';
import { startTestApp, testEnvironment, type TestApp } from '../utils/test-app.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CANARY = `canary-${randomBytes(12).toString('hex')}`;
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');

/** Every file under a directory, read whole (the embedded database's files at rest). */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ path: join(e.parentPath, e.name), bytes: readFileSync(join(e.parentPath, e.name)) }));
}

/** Runs the real `rotate-keys` command (from source) against the test database. */
function rotateKeys(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        join(root, 'test/e2e/queue/support/register-ts.mjs'),
        join(root, 'src/cli/rotate-encryption-key.ts'),
      ],
      {
        env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('secrets at rest: canary and key rotation', () => {
  let db: TestDatabase;
  let t: TestApp;
  let ws: string;
  let admin: { auth: { Authorization: string } };
  const logs: string[] = [];
  const responses: string[] = [];
  const secretIds: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, done) => (logs.push(String(chunk)), done()) });
    db = await createTestDatabase();
    t = await startTestApp(
      { ENCRYPTION_KEY: keyA, LOG_LEVEL: 'trace' },
      { logger: pino({ level: 'trace' }, sink), database: db },
    );
    const r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    admin = r.admin;
    for (const [name, value] of [
      ['CANARY', CANARY],
      ['OTHER_1', 'other-one'],
      ['OTHER_2', 'other-two'],
    ]) {
      const res = await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(admin.auth)
        .send({ name, value, description: 'canary test' })
        .expect(201);
      responses.push(res.text);
      secretIds.push(res.body.id);
    }
    for (const path of [`/workspaces/${ws}/secrets`, `/workspaces/${ws}/secrets/${secretIds[0]}`])
      responses.push((await t.http.get(path).set(admin.auth).expect(200)).text);
    responses.push(
      (
        await t.http
          .patch(`/workspaces/${ws}/secrets/${secretIds[0]}`)
          .set(admin.auth)
          .send({ value: CANARY, description: 'again' })
          .expect(200)
      ).text,
    );
    responses.push(
      (await t.http.post(`/workspaces/${ws}/secrets`).set(admin.auth).send({ name: 'CANARY', value: CANARY })).text,
    );
    const revealed = await t.http.post(`/workspaces/${ws}/secrets/${secretIds[0]}/reveal`).set(admin.auth).expect(200);
    expect(revealed.body.value).toBe(CANARY);
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('appears in no response but reveal', () => {
    expect(responses.length).toBeGreaterThan(5);
    for (const body of responses) expect(body).not.toContain(CANARY);
  });

  it('appears nowhere in the logs, even at trace level', () => {
    expect(logs.length).toBeGreaterThan(5);
    const all = logs.join('');
    expect(all).toContain('request');
    expect(all).not.toContain(CANARY);
  });

  it('appears nowhere in a dump of the database, as text or as hex', async () => {
    if (db.kind === 'embedded') {
      // No pg_dump for PGlite: every file of DATA_DIR (tables, indexes, WAL) after a checkpoint.
      await t.dataSource.query('CHECKPOINT');
      const [{ ciphertext }] = (await t.dataSource.query('SELECT ciphertext FROM workspace_secrets WHERE id = $1', [
        secretIds[0],
      ])) as Array<{ ciphertext: Buffer }>;
      const files = filesUnder(db.dataDir);
      expect(files.some((f) => f.bytes.includes(ciphertext))).toBe(true);
      for (const needle of [CANARY, Buffer.from(CANARY).toString('hex'), Buffer.from(CANARY).toString('base64')]) {
        expect(files.filter((f) => f.bytes.includes(needle)).map((f) => f.path)).toEqual([]);
      }
      return;
    }
    const url = new URL(databaseUrl(db.name));
    const admin = new URL(ADMIN_URL);
    const dump = spawnSync(
      'pg_dump',
      ['-h', url.hostname, '-p', url.port || '5432', '-U', admin.username || 'postgres', '--data-only', db.name],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(dump.status).toBe(0);
    expect(dump.stdout).toContain('workspace_secrets');
    expect(dump.stdout).not.toContain(CANARY);
    expect(dump.stdout).not.toContain(Buffer.from(CANARY).toString('hex'));
    expect(dump.stdout).not.toContain(Buffer.from(CANARY).toString('base64'));
  });

  it('names the sealing key on every row', async () => {
    const rows: Array<{ key_id: string }> = await t.dataSource.query(
      'SELECT key_id FROM workspace_secrets WHERE workspace_id = $1',
      [ws],
    );
    expect(rows.map((r) => r.key_id)).toEqual(rows.map(() => keyIdOf(Buffer.from(keyA, 'base64'))));
  });

  it('rotates: with the new key and the old one as previous, the command re-seals every secret, which all still reveal', async () => {
    const env = testEnvironment(db, {
      ENCRYPTION_KEY: keyB,
      ENCRYPTION_KEY_PREVIOUS: keyA,
      DATA_DIR: t.config.dataDir,
    });
    const newId = keyIdOf(Buffer.from(keyB, 'base64'));
    // The embedded database serves one process: the service stops before the command opens DATA_DIR.
    if (db.kind === 'embedded') await t.close();

    const rotated = await rotateKeys(env);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const report = JSON.parse(rotated.stdout.trim().split('\n').pop()!);
    expect(report).toEqual({ key_id: newId, resealed: 3, failed: [], by_key: { [newId]: 3 } });

    const again = await rotateKeys(env);
    expect(JSON.parse(again.stdout.trim().split('\n').pop()!).resealed).toBe(0);

    // The old key is gone from configuration: every secret still reveals under the new one.
    const after = await startTestApp({ ENCRYPTION_KEY: keyB }, { database: db });
    try {
      const owner = await after.factory.actor({ systemRole: 'admin' });
      const values: string[] = [];
      for (const id of secretIds)
        values.push(
          (await after.http.post(`/workspaces/${ws}/secrets/${id}/reveal`).set(owner.auth).expect(200)).body.value,
        );
      expect(values).toEqual([CANARY, 'other-one', 'other-two']);
    } finally {
      await after.close();
    }
  });

  it('reports, and leaves alone, secrets that no configured key opens', async () => {
    const stranger = randomBytes(32).toString('base64');
    const res = await rotateKeys(testEnvironment(db, { ENCRYPTION_KEY: stranger, DATA_DIR: t.config.dataDir }));
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout.trim().split('\n').pop()!);
    expect(report.resealed).toBe(0);
    expect([...report.failed].sort()).toEqual([...secretIds].sort());
  });
});
