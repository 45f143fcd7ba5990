import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { randomUUID } from 'node:crypto';
import { RowsRepository } from '#src/modules/datasets/rows/rows.repository.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';

const CSV =
  'question,answer,difficulty,score\n"What is 2+2?",4,easy,0.5\n"Capital of France?",Paris,medium,1\n"Say ""hi""",hi,,007\n';

// Twice: files parsed on node's own thread (small files, by default), and on a worker thread
// (UPLOAD_THREAD_MIN_BYTES=0 sends every file there; from 1 MiB on by default). Cases that do
// not parse a file run once.
describe.each([
  { where: "node's own thread", env: {} as Record<string, string>, everything: true },
  { where: 'a worker thread', env: { UPLOAD_THREAD_MIN_BYTES: '0' }, everything: false },
])('datasets: upload, read, edit, delete (files parsed on $where)', ({ env, everything }) => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let datasetId: string;

  const upload = (
    auth: Record<string, string>,
    file: Buffer | string,
    filename: string,
    fields: Record<string, string> = {},
    workspace = ws,
  ) => {
    const req = t.http.post('/datasets/upload').query({ workspace_id: workspace }).set(auth);
    for (const [k, v] of Object.entries(fields)) void req.field(k, v);
    return req.attach('file', Buffer.from(file), filename);
  };

  /**
   * The statistics and the content hash an upload gathered while it streamed equal what SQL
   * computes over the stored rows (the commit path): the hash is over the text jsonb prints.
   */
  const expectStatsMatchSql = async (id: string) => {
    const schema = (await t.http.get(`/datasets/${id}/schema`).set(r.viewer.auth).expect(200)).body;
    const rows = t.app.get(RowsRepository, { strict: false });
    const sql = await t.app.get(TransactionRunner).run(() =>
      rows.versionStats(
        id,
        schema.version_number,
        schema.columns.map((c: { name: string }) => c.name),
        schema.row_count,
      ),
    );
    const latest = (await t.http.get(`/datasets/${id}`).set(r.viewer.auth).expect(200)).body.latest_version;
    const content = await t.app.get(TransactionRunner).run(() => rows.contentHash(id, latest.number));
    expect({ row_count: latest.row_count, sha256: latest.content_sha256 }).toEqual({
      row_count: content.rowCount,
      sha256: content.sha256,
    });
    const round = (cols: Array<Record<string, unknown>>) =>
      cols.map((c) => ({
        ...c,
        ...(typeof c.mean_length === 'number' ? { mean_length: Math.round(c.mean_length * 1e9) / 1e9 } : {}),
      }));
    expect(round(schema.columns)).toEqual(round(sql as unknown as Array<Record<string, unknown>>));
  };

  beforeAll(async () => {
    t = await startTestApp(env);
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => t?.close());

  it('uploads a CSV as a dataset with version 1, typed cells and an inferred schema', async () => {
    const res = await upload(r.member.auth, CSV, 'qa-set.csv', {
      description: 'smoke questions',
      tags: 'smoke,en',
    }).expect(201);
    datasetId = res.body.id;
    expect(res.headers.etag).toMatch(/^"/);
    expect(res.headers.location).toBe(`/datasets/${datasetId}`);
    expect(res.body).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        name: 'qa-set',
        description: 'smoke questions',
        kind: 'rows',
        tags: ['smoke', 'en'],
        current_version_id: null,
        version_count: 1,
        staged_edits: 0,
        created_by: r.member.id,
        version: 1,
      }),
    );
    const v1 = res.body.latest_version;
    expect(v1).toEqual(
      expect.objectContaining({
        number: 1,
        state: 'candidate',
        source: 'upload',
        row_count: 3,
        columns: ['question', 'answer', 'difficulty', 'score'],
        upload: { filename: 'qa-set.csv', format: 'csv', bytes: CSV.length },
      }),
    );
    expect(v1.content_sha256).toMatch(/^[0-9a-f]{64}$/);

    const schema = await t.http.get(`/datasets/${datasetId}/schema`).set(r.viewer.auth).expect(200);
    const col = (name: string) => schema.body.columns.find((c: { name: string }) => c.name === name);
    expect(schema.body).toEqual(
      expect.objectContaining({ dataset_id: datasetId, version_id: v1.id, version_number: 1, row_count: 3 }),
    );
    // "4" is a number, "Paris" and "hi" strings: a mixed column.
    expect(col('answer')).toEqual(
      expect.objectContaining({ type: 'mixed', types: { integer: 1, string: 2 }, null_count: 0, distinct_count: 3 }),
    );
    expect(col('difficulty')).toEqual(
      expect.objectContaining({
        type: 'string',
        types: { string: 2, null: 1 },
        null_count: 1,
        distinct_count: 2,
        min_length: 4,
        max_length: 6,
        mean_length: 5,
      }),
    );
    // 0.5 and 1 are numbers; "007" is not a canonical number and stays a string.
    expect(col('score')).toEqual(
      expect.objectContaining({ type: 'mixed', types: { number: 1, integer: 1, string: 1 }, min: 0.5, max: 1 }),
    );
    expect(col('question')).toEqual(expect.objectContaining({ type: 'string', distinct_count: 3, max_length: 18 }));
    await expectStatsMatchSql(datasetId);

    const rows = await t.http.post(`/datasets/${datasetId}/query`).set(r.viewer.auth).send({}).expect(200);
    expect(
      rows.body.items.map((row: Record<string, unknown>) => [row.question, row.answer, row.difficulty, row.score]),
    ).toEqual([
      ['What is 2+2?', 4, 'easy', 0.5],
      ['Capital of France?', 'Paris', 'medium', 1],
      ['Say "hi"', 'hi', null, '007'],
    ]);
  });

  it('uploads JSON, JSON Lines and Parquet, keeping nested values and given row ids', async () => {
    const id = randomUUID();
    const json = JSON.stringify([
      { _row_id: id, input: 'a', meta: { lang: 'en', tags: ['x'] } },
      { input: 'b', meta: null },
    ]);
    const a = await upload(r.member.auth, json, 'nested.json').expect(201);
    expect(a.body.latest_version).toEqual(expect.objectContaining({ row_count: 2, columns: ['input', 'meta'] }));
    const rows = await t.http.post(`/datasets/${a.body.id}/query`).set(r.viewer.auth).send({}).expect(200);
    expect(rows.body.items[0]).toEqual({ _row_id: id, input: 'a', meta: { lang: 'en', tags: ['x'] } });
    await expectStatsMatchSql(a.body.id);

    const jsonl = '{"input":"x","n":1}\n\n{"input":"y","n":2.5}\n';
    const b = await upload(r.member.auth, jsonl, 'lines.ndjson', { name: 'Lines' }).expect(201);
    expect(b.body).toEqual(
      expect.objectContaining({
        name: 'Lines',
        latest_version: expect.objectContaining({ row_count: 2, upload: expect.objectContaining({ format: 'jsonl' }) }),
      }),
    );

    const parquet = parquetWriteBuffer({
      columnData: [
        { name: 'prompt', data: ['hello', 'world', 'again'], type: 'STRING' },
        { name: 'tokens', data: [3, 5, 8], type: 'INT32' },
        { name: 'ok', data: [true, false, true], type: 'BOOLEAN' },
      ],
    });
    const c = await upload(r.member.auth, Buffer.from(parquet), 'data.parquet').expect(201);
    const schema = await t.http.get(`/datasets/${c.body.id}/schema`).set(r.viewer.auth).expect(200);
    expect(schema.body.columns.map((col: { name: string; type: string }) => [col.name, col.type])).toEqual([
      ['prompt', 'string'],
      ['tokens', 'integer'],
      ['ok', 'boolean'],
    ]);
    await expectStatsMatchSql(c.body.id);
    const mixed = await upload(
      r.member.auth,
      JSON.stringify([
        { v: { b: 1, a: 2 } },
        { v: { a: 2, b: 1 } },
        { v: 'é😀x' },
        { v: 2.5 },
        { v: 3 },
        { v: null },
        {},
      ]),
      'mixed.json',
    ).expect(201);
    await expectStatsMatchSql(mixed.body.id);
  });

  it('hashes the content as the database prints it: member order, escapes, numbers in every notation', async () => {
    // Members of every length and alphabet (jsonb orders them by UTF-8 length, then bytes), escapes
    // and control characters, numbers JSON.stringify writes with an exponent, nesting, empty containers.
    const lines = [
      '{"zz":1,"a":2,"é":3,"ab":4,"ключ":"значение","😀":"emoji 😀","long name here":0.1}',
      '{"n":[1e21,1.5e-7,-0,12345678901234567890,-2.5e-9,1.7976931348623157e308,5e-324,100,0.000001]}',
      '{"s":"quote \\" backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f ctl \\u0001 \\u001f del \\u007f é \\u00e9 \\u2028"}',
      '{"deep":{"b":[{"y":null,"x":true,"":false},[],{}],"a":{"cc":"", "b":[[1,[2,[3]]]]}},"t":true,"f":false,"z":null}',
      `{"_row_id":"${randomUUID().toUpperCase()}","id":"given, upper case"}`,
    ];
    const res = await upload(r.member.auth, `${lines.join('\n')}\n`, 'tricky.jsonl').expect(201);
    await expectStatsMatchSql(res.body.id);
  });

  it('refuses malformed files with the line and reason, creating nothing', async () => {
    const before = await t.dataSource.query(
      'SELECT (SELECT count(*) FROM datasets)::int AS d, (SELECT count(*) FROM dataset_rows)::int AS r',
    );
    const cases: Array<[string, string, RegExp]> = [
      ['a,b\n1,2\n3\n', 'bad.csv', /^line 3: expected 2 fields/],
      ['a,a\n1,2\n', 'dup.csv', /^line 1: column name "a" appears twice/],
      ['{"a":1}\n{"a":\n', 'bad.jsonl', /^line 2: not valid JSON/],
      ['{"a":1}\n[1,2]\n', 'arr.jsonl', /^line 2: expected a JSON object/],
      ['{"a":1}', 'obj.json', /must be an array of objects/],
      ['[{"a":1}, {"a":', 'cut.json', /not valid JSON/],
      ['[{"_row_id":"nope"}]', 'id.json', /^row 1: _row_id must be a UUID/],
      ['not parquet at all', 'x.parquet', /not a readable Parquet file/],
    ];
    for (const [content, filename, detail] of cases) {
      const res = await upload(r.member.auth, content, filename);
      expectProblem(res, 400, 'malformed_file');
      expect(res.body.detail).toMatch(detail);
      expect(res.body).toEqual(expect.objectContaining({ where: expect.any(String), reason: expect.any(String) }));
    }
    const id = randomUUID();
    const twice = await upload(r.member.auth, JSON.stringify([{ _row_id: id }, { _row_id: id }]), 'twice.json');
    expectProblem(twice, 400, 'invalid_row');
    expectProblem(await upload(r.member.auth, 'a\n', 'empty.csv'), 400, 'empty_dataset');
    expectProblem(await upload(r.member.auth, 'a,b\n', 'data.txt'), 400, 'unsupported_format');
    expect(
      await t.dataSource.query(
        'SELECT (SELECT count(*) FROM datasets)::int AS d, (SELECT count(*) FROM dataset_rows)::int AS r',
      ),
    ).toEqual(before);
  });

  if (everything)
    it('validates the request: file part, fields, workspace and roles', async () => {
      expectProblem(
        await t.http.post('/datasets/upload').query({ workspace_id: ws }).set(r.member.auth).field('name', 'x'),
        400,
        'file_required',
      );
      expectProblem(await upload(r.member.auth, CSV, 'a.csv', { format: 'xlsx' }), 400, 'validation_failed');
      expectProblem(await upload(r.member.auth, CSV, 'a.csv', { owner: 'me' }), 400, 'validation_failed');
      expectProblem(await upload(r.member.auth, CSV, 'qa-set.csv'), 409, 'dataset_name_taken');
      expectProblem(
        await t.http.post('/datasets/upload').set(r.member.auth).attach('file', Buffer.from(CSV), 'a.csv'),
        400,
      );
      expectProblem(await upload(r.viewer.auth, CSV, 'v.csv'), 403);
      expectProblem(await upload(r.outsider.auth, CSV, 'o.csv'), 403);
      expectProblem(await upload(r.member.auth, CSV, 'n.csv', {}, randomUUID()), 404);
      expectProblem(
        await t.http.post('/datasets/upload').query({ workspace_id: ws }).attach('file', Buffer.from(CSV), 'a.csv'),
        401,
      );
      expectProblem(
        await t.http
          .post('/datasets/upload')
          .query({ workspace_id: ws })
          .set(r.member.auth)
          .send({ name: 'json body' }),
        415,
      );
    });

  it('uploads a new version into an existing dataset, closing the old rows', async () => {
    const res = await upload(r.member.auth, 'question,answer\nQ,A\n', 'ignored.csv', {
      dataset_id: datasetId,
      message: 'replace',
    }).expect(201);
    expect(res.body).toEqual(
      expect.objectContaining({
        id: datasetId,
        version_count: 2,
        latest_version: expect.objectContaining({
          number: 2,
          row_count: 1,
          message: 'replace',
          parent_version_id: expect.any(String),
        }),
      }),
    );
    const versions = await t.http.get(`/datasets/${datasetId}/versions`).set(r.viewer.auth).expect(200);
    expect(versions.body).toEqual(expect.objectContaining({ total: 2, page: 1 }));
    expect(versions.body.items.map((v: { number: number; row_count: number }) => [v.number, v.row_count])).toEqual([
      [2, 1],
      [1, 3],
    ]);
    // Version 1 still reads as it was.
    const v1 = versions.body.items[1].id;
    const old = await t.http
      .post(`/datasets/${datasetId}/versions/${v1}/query`)
      .set(r.viewer.auth)
      .send({})
      .expect(200);
    expect(old.body.items).toHaveLength(3);
    await expectStatsMatchSql(datasetId);
  });

  if (everything)
    it('lists, reads, patches with If-Match and deletes', async () => {
      const list = await t.http
        .get('/datasets')
        .query({ workspace_id: ws, q: 'QA', sort: 'name' })
        .set(r.viewer.auth)
        .expect(200);
      expect(list.body.items.map((d: { name: string }) => d.name)).toEqual(['qa-set']);
      const mine = await t.http.get('/datasets').query({ tag: 'smoke' }).set(r.viewer.auth).expect(200);
      expect(mine.body.total).toBe(1);
      expect((await t.http.get('/datasets').set(r.outsider.auth).expect(200)).body.total).toBe(0);
      expectProblem(await t.http.get('/datasets').query({ workspace_id: ws }).set(r.outsider.auth), 403);
      expectProblem(await t.http.get('/datasets').query({ workspace_id: 'x' }).set(r.viewer.auth), 400);
      expectProblem(await t.http.get('/datasets').query({ page_size: 1000 }).set(r.viewer.auth), 400);

      const got = await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200);
      const patched = await t.http
        .patch(`/datasets/${datasetId}`)
        .set(r.member.auth)
        .set('If-Match', got.headers.etag)
        .send({ name: 'QA set', tags: ['smoke'] })
        .expect(200);
      expect(patched.body).toEqual(expect.objectContaining({ name: 'QA set', tags: ['smoke'], version: 2 }));
      expectProblem(
        await t.http
          .patch(`/datasets/${datasetId}`)
          .set(r.member.auth)
          .set('If-Match', got.headers.etag)
          .send({ name: 'again' }),
        412,
      );
      expectProblem(await t.http.patch(`/datasets/${datasetId}`).set(r.member.auth).send({ name: null }), 400);
      expectProblem(
        await t.http.patch(`/datasets/${datasetId}`).set(r.member.auth).send({ workspace_id: randomUUID() }),
        400,
      );
      expectProblem(
        await t.http.patch(`/datasets/${datasetId}`).set(r.member.auth).send({ name: 'Lines' }),
        409,
        'dataset_name_taken',
      );
      expectProblem(await t.http.patch(`/datasets/${datasetId}`).set(r.viewer.auth).send({ name: 'v' }), 403);
      expectProblem(await t.http.get(`/datasets/${datasetId}`).set(r.outsider.auth), 403);
      expectProblem(await t.http.get(`/datasets/${randomUUID()}`).set(r.viewer.auth), 404);
      expectProblem(await t.http.get('/datasets/not-a-uuid').set(r.viewer.auth), 400);
      expectProblem(await t.http.get(`/datasets/${datasetId}`), 401);

      const audit = await t.http.get(`/datasets/${datasetId}/audit`).set(r.viewer.auth).expect(200);
      expect(audit.body.map((e: { action: string }) => e.action)).toEqual([
        'dataset.updated',
        'version.created',
        'version.created',
        'dataset.created',
      ]);
      expect(audit.body[0]).toEqual(
        expect.objectContaining({
          actor_id: r.member.id,
          details: { name: { from: 'qa-set', to: 'QA set' }, tags: { from: ['smoke', 'en'], to: ['smoke'] } },
        }),
      );
      const older = await t.http
        .get(`/datasets/${datasetId}/audit`)
        .query({ before: audit.body[1].created_at, limit: 1 })
        .set(r.viewer.auth)
        .expect(200);
      expect(older.body).toHaveLength(1);

      const snapshots = await t.http.get(`/datasets/${datasetId}/snapshots`).set(r.viewer.auth).expect(200);
      expect(
        snapshots.body.map((s: { version_number: number; formats: string[] }) => [s.version_number, s.formats]),
      ).toEqual([
        [2, ['csv', 'jsonl', 'parquet']],
        [1, ['csv', 'jsonl', 'parquet']],
      ]);

      expectProblem(await t.http.delete(`/datasets/${datasetId}`).set(r.member.auth), 403);
      await t.http.delete(`/datasets/${datasetId}`).set(r.admin.auth).expect(204);
      expectProblem(await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth), 404);
      expect(
        await t.dataSource.query('SELECT count(*)::int AS n FROM dataset_rows WHERE dataset_id = $1', [datasetId]),
      ).toEqual([{ n: 0 }]);
    });
});
