import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { parquetReadObjects } from 'hyparquet';
import { randomUUID } from 'node:crypto';
import supertest from 'supertest';
import { UrlSigner } from '#libs/common/signed-url.js';
import { expectProblem } from '../../utils/problem.js';
import { uploadRows } from '../../utils/datasets.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const ROWS = [
  { question: 'Capital of France?', answer: 'Paris', score: 0.9, hard: false, meta: { lang: 'en' } },
  { question: 'Say "hi", please', answer: 'hi', score: 2, hard: true, meta: null },
  { question: 'Line\nbreak', answer: null, score: null, hard: true, meta: { tags: ['a', 'b'] } },
];

describe('datasets: signed download URLs, snapshots as CSV, JSON Lines and Parquet', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let versionId: string;
  let rowIds: string[];

  /** Fetches a signed URL's path and query through the app (the URL's host is the test server's). */
  const fetchSigned = (url: string) => {
    const u = new URL(url);
    return supertest(t.app.getHttpServer())
      .get(`${u.pathname}${u.search}`)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
  };

  /** A signed URL fetched as JSON (for the refusals). */
  const getSigned = (url: string) => {
    const u = new URL(url);
    return supertest(t.app.getHttpServer()).get(`${u.pathname}${u.search}`);
  };

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ({ datasetId, versionId, rowIds } = await uploadRows(t, r.member.auth, r.workspace.id, ROWS, 'quiz.json'));
  });
  afterAll(async () => t?.close());

  it('streams JSON Lines that round-trip exactly, with row ids', async () => {
    const signed = await t.http
      .get(`/datasets/${datasetId}/download-url`)
      .query({ format: 'jsonl' })
      .set(r.viewer.auth)
      .expect(200);
    expect(signed.body).toEqual(
      expect.objectContaining({
        method: 'GET',
        format: 'jsonl',
        filename: 'quiz-v1.jsonl',
        version_id: versionId,
        content_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        expires_at: expect.any(String),
      }),
    );
    const res = await fetchSigned(signed.body.url).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="quiz-v1.jsonl"');
    const lines = res.body
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l: string) => JSON.parse(l));
    expect(lines).toEqual(ROWS.map((row, i) => ({ _row_id: rowIds[i], ...row })));
  });

  it('streams CSV that uploads again to the same rows and content hash', async () => {
    const signed = await t.http
      .get(`/datasets/${datasetId}/versions/${versionId}/download`)
      .query({ format: 'csv' })
      .set(r.viewer.auth)
      .expect(200);
    const res = await fetchSigned(signed.body.url).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const records = parse(res.body.toString('utf8'), { columns: true }) as Array<Record<string, string>>;
    expect(records.map((rec) => rec._row_id)).toEqual(rowIds);
    expect(records[1]).toEqual({
      _row_id: rowIds[1],
      question: 'Say "hi", please',
      answer: 'hi',
      score: '2',
      hard: 'true',
      meta: '',
    });
    expect(records[2].meta).toBe('{"tags":["a","b"]}');
    const again = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', res.body, 'again.csv')
      .expect(201);
    const copy = (await t.http.post(`/datasets/${again.body.id}/query`).set(r.viewer.auth).send({}).expect(200)).body
      .items;
    expect(copy.map((row: { _row_id: string }) => row._row_id)).toEqual(rowIds);
    expect(copy[1]).toEqual({
      _row_id: rowIds[1],
      question: 'Say "hi", please',
      answer: 'hi',
      score: 2,
      hard: true,
      meta: null,
    });
  });

  it('streams Parquet that a standard reader reads back', async () => {
    const signed = await t.http
      .get(`/datasets/${datasetId}/download-url`)
      .query({ format: 'parquet', version_id: versionId })
      .set(r.viewer.auth)
      .expect(200);
    const res = await fetchSigned(signed.body.url).expect(200);
    expect(res.body.subarray(0, 4).toString()).toBe('PAR1');
    const buffer = res.body.buffer.slice(res.body.byteOffset, res.body.byteOffset + res.body.length);
    const rows = await parquetReadObjects({ file: buffer });
    expect(rows.map((row) => [row._row_id, row.question, row.score, row.hard, row.meta])).toEqual([
      [rowIds[0], 'Capital of France?', 0.9, false, '{"lang":"en"}'],
      [rowIds[1], 'Say "hi", please', 2, true, null],
      [rowIds[2], 'Line\nbreak', null, true, '{"tags":["a","b"]}'],
    ]);
  });

  it('refuses altered, expired and re-targeted URLs without a token', async () => {
    const signed = (await t.http.get(`/datasets/${datasetId}/download-url`).set(r.viewer.auth).expect(200)).body;
    expect(signed.format).toBe('csv');
    const url = new URL(signed.url);
    const tampered = new URL(url);
    tampered.searchParams.set('format', 'jsonl');
    expectProblem(await getSigned(tampered.toString()), 403, 'invalid_signature');
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expectProblem(await getSigned(later.toString()), 403, 'invalid_signature');
    const other = new URL(url.toString().replace(versionId, randomUUID()));
    expectProblem(await getSigned(other.toString()), 403, 'invalid_signature');
    // A URL signed correctly whose expiry has passed.
    const signer = t.app.get(UrlSigner, { strict: false });
    const past = signer.sign('http://localhost', url.pathname, { format: 'csv' }, -5);
    expectProblem(await getSigned(past.url), 403, 'url_expired');
    expectProblem(await supertest(t.app.getHttpServer()).get(url.pathname).query({ format: 'csv' }), 400);
  });

  it('answers 400, 401, 403 and 404 on the URL operations', async () => {
    expectProblem(
      await t.http.get(`/datasets/${datasetId}/download-url`).query({ format: 'xlsx' }).set(r.viewer.auth),
      400,
    );
    expectProblem(
      await t.http.get(`/datasets/${datasetId}/download-url`).query({ expires_in: 5 }).set(r.viewer.auth),
      400,
    );
    expectProblem(
      await t.http.get(`/datasets/${datasetId}/download-url`).query({ version_id: randomUUID() }).set(r.viewer.auth),
      404,
      'version_not_found',
    );
    expectProblem(await t.http.get(`/datasets/${datasetId}/download-url`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/datasets/${datasetId}/download-url`), 401);
    expectProblem(await t.http.get(`/datasets/${datasetId}/versions/${randomUUID()}/download`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get(`/datasets/${datasetId}/versions/${versionId}/download`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/datasets/${datasetId}/versions/${versionId}/download`), 401);
    expectProblem(await t.http.get(`/datasets/${datasetId}/snapshots`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/datasets/${randomUUID()}/snapshots`).set(r.viewer.auth), 404);
  });
});
