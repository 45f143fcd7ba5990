import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { createRootLogger } from '#libs/common/logger.js';
import { openDatabase } from '#libs/database/data-source.factory.js';
import { DataDirLockedError } from '#libs/database/embedded-lock.js';
import { EMBEDDED_SHARED_BUFFERS_DEFAULT } from '#libs/database/data-source.factory.js';
import { DataSource } from 'typeorm';
import { createApp } from '#src/bootstrap.js';
import { AppConfig } from '#libs/config/app-config.js';
import { migrations } from '#src/database/migrations/index.js';
import { describeOn } from '../utils/database-mode.js';

// A fresh DATA_DIR: initdb and every migration on PGlite, which takes a minute or more on the
// loaded 2-core machine (the e2e files copy a migrated template instead).
jest.setTimeout(300_000);

/**
 * The default mode of `npm start`: no DATABASE_URL, no REDIS_URL, nothing prepared. The real
 * application on PGlite under a fresh DATA_DIR, booted twice to prove the data survives.
 */
describeOn('embedded', 'starts from a DATA_DIR alone, whatever the project; once is enough')(
  'smoke: embedded mode (PGlite under DATA_DIR, in-process queue)',
  () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-smoke-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      ADMIN_EMAIL: 'smoke-admin@example.com',
      ADMIN_PASSWORD: 'smoke-password-1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    };
    let app: NestExpressApplication | undefined;
    let http: ReturnType<typeof supertest>;
    let config: AppConfig;

    async function boot(): Promise<void> {
      // Only what this file sets: no DATABASE_URL or REDIS_URL leaks in from the shell.
      config = AppConfig.fromEnvironment(env);
      ({ app } = await createApp(config, createRootLogger(env.LOG_LEVEL)));
      http = supertest(app.getHttpServer());
    }

    beforeAll(boot);
    afterAll(async () => {
      await app?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    let token: string;
    let workspaceId: string | undefined;

    it('runs on the embedded database with the in-process queue', () => {
      expect(config.embedded).toBe(true);
      expect(config.queueDriver).toBe('in-process');
    });

    it('answers /live and /ready (database and queue up)', async () => {
      await http.get('/live').expect(200);
      const ready = await http.get('/ready').expect(200);
      expect(ready.body).toEqual({
        status: 'ready',
        checks: {
          database: { status: 'up', latency_ms: expect.any(Number) },
          queue: { status: 'up', latency_ms: expect.any(Number) },
        },
      });
    });

    it('runs PGlite with the default EMBEDDED_SHARED_BUFFERS, not its own 128MB, and leaves postgresql.conf alone', async () => {
      const db = app!.get(DataSource);
      expect(await db.query('SHOW shared_buffers')).toEqual([{ shared_buffers: EMBEDDED_SHARED_BUFFERS_DEFAULT }]);
      // The setting is on PGlite's command line; the data directory's own file still has initdb's.
      expect(readFileSync(join(dataDir, 'pgdata', 'postgresql.conf'), 'utf8')).toMatch(/^timezone = /m);
    });

    it('created the configured admin on first start, who can log in and read /auth/me', async () => {
      const login = await http
        .post('/auth/token')
        .send({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD })
        .expect(200);
      token = login.body.access_token;
      const me = await http.get('/auth/me').set('Authorization', `Bearer ${token}`).expect(200);
      expect(me.body).toEqual(
        expect.objectContaining({ email: env.ADMIN_EMAIL, system_role: 'admin', status: 'active' }),
      );
    });

    it('writes through HTTP: branding, and a workspace when that operation exists', async () => {
      const auth = { Authorization: `Bearer ${token}` };
      const branding = await http
        .put('/branding')
        .set(auth)
        .send({
          product_name: 'Smoke Eval',
          primary_color: '#112233',
          accent_color: '#445566',
          logo_url: 'https://example.com/logo.png',
        })
        .expect(200);
      expect(branding.body.version).toBe(1);

      const document = (await http.get('/openapi.json').expect(200)).body as {
        paths: Record<string, Record<string, unknown>>;
      };
      if (!document.paths['/workspaces']?.post) return;
      const created = await http.post('/workspaces').set(auth).send({ name: 'smoke-workspace' }).expect(201);
      workspaceId = created.body.id;
      const read = await http.get(`/workspaces/${workspaceId}`).set(auth).expect(200);
      expect(read.body.name).toBe('smoke-workspace');
    });

    it('has a second user, an accepted invitation, and 100 parallel invitations, all answered', async () => {
      const auth = { Authorization: `Bearer ${token}` };
      const second = await http
        .post('/users')
        .set(auth)
        .send({ email: 'second@example.com', display_name: 'Second', password: 'second-password-1' })
        .expect(201);
      await http.post('/auth/token').send({ email: 'second@example.com', password: 'second-password-1' }).expect(200);
      const ws = (await http.post('/workspaces').set(auth).send({ name: 'invitations' }).expect(201)).body.id as string;
      const invitation = await http
        .post(`/workspaces/${ws}/invitations`)
        .set(auth)
        .send({ email: 'invited@example.com', role: 'member' })
        .expect(201);
      const accepted = await http
        .post('/auth/accept-invitation')
        .send({ token: invitation.body.token, password: 'invited-password', display_name: 'Invited' })
        .expect(200);
      const members = await http.get(`/workspaces/${ws}/members`).set(auth).expect(200);
      expect(members.body.map((m: { user_id: string }) => m.user_id)).toEqual(
        expect.arrayContaining([accepted.body.id]),
      );

      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          http
            .post(`/workspaces/${ws}/invitations`)
            .set(auth)
            .send({ email: `parallel-${i}@example.com`, role: 'viewer' }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(100).fill(201));
      const pending = await http.get(`/workspaces/${ws}/invitations`).set(auth).query({ state: 'pending' }).expect(200);
      expect(new Set(pending.body.map((i: { email: string }) => i.email)).size).toBe(100);
      expect(second.body.email).toBe('second@example.com');
      await http.get('/ready').expect(200);
    });

    it('generated keys.json in DATA_DIR, readable by the owner only (0600)', () => {
      const file = join(dataDir, 'keys.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const keys = JSON.parse(readFileSync(file, 'utf8'));
      expect(keys).toEqual({
        jwt_secret: expect.any(String),
        encryption_key: expect.any(String),
        url_signing_key: expect.any(String),
      });
      expect(Buffer.from(keys.encryption_key, 'base64')).toHaveLength(32);
    });

    it('refuses a second process on the same DATA_DIR with a message naming DATA_DIR', async () => {
      const opening = openDatabase({ dataDir, poolSize: 1, entities: [], migrations });
      await expect(opening).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(opening).rejects.toThrow(
        new RegExp(`^DATA_DIR: ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another process`),
      );
    });

    it('keeps users, tokens, keys and records across a restart', async () => {
      const jwtSecret = config.keys.jwtSecret;
      await app!.close();
      app = undefined;
      // The restart also takes another buffer cache size.
      env.EMBEDDED_SHARED_BUFFERS = '16MB';
      await boot();
      expect(config.keys.jwtSecret).toBe(jwtSecret);
      expect(await app!.get(DataSource).query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);

      // The token issued before the restart is still valid: same key, persisted session.
      const me = await http.get('/auth/me').set('Authorization', `Bearer ${token}`).expect(200);
      expect(me.body.email).toBe(env.ADMIN_EMAIL);
      const branding = await http.get('/branding').expect(200);
      expect(branding.body).toEqual(expect.objectContaining({ product_name: 'Smoke Eval', version: 1 }));
      if (workspaceId) {
        const read = await http.get(`/workspaces/${workspaceId}`).set('Authorization', `Bearer ${token}`).expect(200);
        expect(read.body.name).toBe('smoke-workspace');
      }
      await http.get('/ready').expect(200);
    });
  },
);
