import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { createRootLogger } from '#libs/common/logger.js';
import { createApp } from '#src/bootstrap.js';
import { AppConfig } from '#libs/config/app-config.js';
import { QUERY_CASES, QUERY_ROWS } from '../e2e/datasets/query-cases.js';

jest.setTimeout(120_000);

/**
 * Datasets on the embedded database (PGlite): bulk writes take the unnest path instead of COPY,
 * so upload, commit, the whole query language and downloads are proven here as on PostgreSQL.
 */
describe('smoke: datasets on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-smoke-ds-'));
  const env = {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'ds-admin@example.com',
    ADMIN_PASSWORD: 'ds-password-1',
    LOG_LEVEL: 'silent',
  };
  let app: NestExpressApplication;
  let http: ReturnType<typeof supertest>;
  let auth: Record<string, string>;
  let datasetId: string;
  let versionId: string;

  beforeAll(async () => {
    const config = AppConfig.fromEnvironment(env);
    expect(config.embedded).toBe(true);
    ({ app } = await createApp(config, createRootLogger('silent')));
    http = supertest(app.getHttpServer());
    const login = await http
      .post('/auth/token')
      .send({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD })
      .expect(200);
    auth = { Authorization: `Bearer ${login.body.access_token}` };
    const ws = await http.post('/workspaces').set(auth).send({ name: 'embedded' }).expect(201);
    const up = await http
      .post('/datasets/upload')
      .query({ workspace_id: ws.body.id })
      .set(auth)
      .attach('file', Buffer.from(QUERY_ROWS.map((row) => JSON.stringify(row)).join('\n')), 'rows.jsonl')
      .expect(201);
    datasetId = up.body.id;
    versionId = up.body.latest_version.id;
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(QUERY_CASES)('query: %s', async (_name, filter, expected) => {
    const res = await http
      .post(`/datasets/${datasetId}/versions/${versionId}/query`)
      .set(auth)
      .send({ filter, limit: 1000 })
      .expect(200);
    expect(res.body.items.map((row: { key: string }) => row.key).sort()).toEqual([...expected].sort());
  });

  it('uploads a CSV of 5000 rows through the unnest path, edits, commits and downloads it', async () => {
    const csv = [
      'id,text,score',
      ...Array.from({ length: 5000 }, (_, i) => `${i},"row ${i}, with comma",${i % 7}`),
    ].join('\n');
    const ws = (await http.get('/workspaces').set(auth).expect(200)).body.items[0].id;
    const up = await http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(auth)
      .attach('file', Buffer.from(csv), 'big.csv')
      .expect(201);
    expect(up.body.latest_version.row_count).toBe(5000);
    const id = up.body.id;
    const first = (
      await http
        .post(`/datasets/${id}/query`)
        .set(auth)
        .send({ filter: { field: 'score', op: 'eq', value: 6 }, limit: 2 })
        .expect(200)
    ).body;
    expect(first.total).toBe(714);
    await http
      .post(`/datasets/${id}/rows/delete`)
      .set(auth)
      .send({ row_ids: [first.items[0]._row_id] })
      .expect(200);
    await http
      .patch(`/datasets/${id}/rows/update`)
      .set(auth)
      .send({ rows: { [first.items[1]._row_id]: { score: 100 } } })
      .expect(200);
    await http
      .post(`/datasets/${id}/rows/insert`)
      .set(auth)
      .send({ rows: [{ id: 5000, text: 'new', score: 1 }] })
      .expect(200);
    const commit = await http
      .post(`/datasets/${id}/rows/commit`)
      .set(auth)
      .send({ message: 'edit', promote: true })
      .expect(200);
    expect(commit.body).toEqual(
      expect.objectContaining({
        inserted: 1,
        updated: 1,
        deleted: 1,
        row_count: 5000,
        version: expect.objectContaining({ number: 2, state: 'current' }),
      }),
    );
    const signed = (await http.get(`/datasets/${id}/download-url`).query({ format: 'jsonl' }).set(auth).expect(200))
      .body;
    const url = new URL(signed.url);
    const file = await http
      .get(`${url.pathname}${url.search}`)
      .buffer(true)
      .parse((res, cb) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => cb(null, text));
      })
      .expect(200);
    const lines = (file.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { score: number; text: string });
    expect(lines).toHaveLength(5000);
    expect(lines.filter((l) => l.score === 100)).toHaveLength(1);
    expect(lines[lines.length - 1]).toEqual(expect.objectContaining({ text: 'new' }));
  });
});
