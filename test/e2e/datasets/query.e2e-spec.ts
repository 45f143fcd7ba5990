import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { QUERY_CASES, QUERY_ROWS } from './query-cases.js';

describe('datasets: the query language over HTTP (PostgreSQL)', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let versionId: string;

  const query = (body: Record<string, unknown>) =>
    t.http.post(`/datasets/${datasetId}/versions/${versionId}/query`).set(r.viewer.auth).send(body);
  const keys = async (filter: unknown) => {
    const res = await query({ filter, limit: 1000 });
    if (res.status !== 200) throw new Error(`${JSON.stringify(filter)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.items.map((row: { key: string }) => row.key).sort();
  };

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    const res = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from(QUERY_ROWS.map((row) => JSON.stringify(row)).join('\n')), 'rows.jsonl')
      .expect(201);
    datasetId = res.body.id;
    versionId = res.body.latest_version.id;
  });
  afterAll(async () => t?.close());

  it.each(QUERY_CASES)('%s', async (_name, filter, expected) => {
    expect(await keys(filter)).toEqual([...expected].sort());
  });

  it('treats hostile field names and values as data, never SQL', async () => {
    expectProblem(
      await query({ filter: { field: "text'); DROP TABLE dataset_rows; --", op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
    expect(await keys({ field: 'text', op: 'eq', value: "x'); DROP TABLE dataset_rows; --" })).toEqual([]);
    expect(await keys({ field: ['meta', "a'b"], op: 'is_null', value: false })).toEqual([]);
    expect(
      await t.dataSource.query('SELECT count(*)::int AS n FROM dataset_rows WHERE dataset_id = $1', [datasetId]),
    ).toEqual([{ n: QUERY_ROWS.length }]);
  });

  it('sorts, projects, pages with offsets and cursors, and counts', async () => {
    const sorted = await query({
      filter: { field: 'n', op: 'gte', value: 0 },
      sort: [{ field: 'n', direction: 'desc' }],
      select: ['key', 'n'],
      limit: 3,
    }).expect(200);
    expect(sorted.body).toEqual(
      expect.objectContaining({ total: 5, limit: 3, offset: 0, version_id: versionId, version_number: 1 }),
    );
    expect(sorted.body.items.map((row: Record<string, unknown>) => Object.keys(row).sort())).toEqual([
      ['_row_id', 'key', 'n'],
      ['_row_id', 'key', 'n'],
      ['_row_id', 'key', 'n'],
    ]);
    expect(sorted.body.items.map((row: { n: number }) => row.n)).toEqual([42, 10, 3.5]);
    const next = await query({
      filter: { field: 'n', op: 'gte', value: 0 },
      sort: [{ field: 'n', direction: 'desc' }],
      select: ['key', 'n'],
      limit: 3,
      cursor: sorted.body.next_cursor,
    }).expect(200);
    expect(next.body.items.map((row: { n: number }) => row.n)).toEqual([2, 0]);
    expect(next.body.next_cursor).toBeNull();
    expectProblem(await query({ limit: 2, cursor: sorted.body.next_cursor }), 400, 'invalid_cursor');
    expectProblem(await query({ cursor: 'garbage' }), 400, 'invalid_cursor');
    const noTotal = await query({ include_total: false, offset: 2, limit: 2 }).expect(200);
    expect(noTotal.body.total).toBeUndefined();
    expect(noTotal.body.items).toHaveLength(2);
    const byRowId = await query({
      filter: { field: '_row_id', op: 'in', value: [sorted.body.items[0]._row_id, randomUUID()] },
    }).expect(200);
    expect(byRowId.body.items.map((row: { key: string }) => row.key)).toEqual([sorted.body.items[0].key]);
  });

  it('pages in row order by keyset cursors, and caps totals at 10,000', async () => {
    const csv = ['n', ...Array.from({ length: 10_005 }, (_, i) => String(i))].join('\n');
    const big = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from(csv), 'many.csv')
      .expect(201);
    const page = (body: Record<string, unknown>) =>
      t.http.post(`/datasets/${big.body.id}/query`).set(r.viewer.auth).send(body).expect(200);
    const first = await page({ limit: 1000 });
    expect(first.body).toEqual(expect.objectContaining({ total: 10_000, total_capped: true, offset: 0 }));
    const seen = first.body.items.map((row: { n: number }) => row.n);
    let cursor = first.body.next_cursor;
    while (cursor) {
      const next = await page({ limit: 1000, cursor });
      seen.push(...next.body.items.map((row: { n: number }) => row.n));
      cursor = next.body.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: 10_005 }, (_, i) => i));
    const few = await page({ filter: { field: 'n', op: 'lt', value: 10 } });
    expect(few.body).toEqual(expect.objectContaining({ total: 10, total_capped: false }));
  });

  it('explains every mistake with a pointer into the request', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ field: 'nope', op: 'eq', value: 1 }, '/filter/field', /unknown column "nope"/],
      [{ field: 'n', op: 'like', value: 1 }, '/filter/op', /op must be one of eq, ne/],
      [{ and: [] }, '/filter/and', /non-empty array/],
      [{ and: [{ field: 'n', op: 'eq' }] }, '/filter/and/0/value', /needs a value/],
      [{ or: [{ field: 'n', op: 'in', value: [] }] }, '/filter/or/0/value', /non-empty array/],
      [{ field: 'n', op: 'gt', value: true }, '/filter/value', /number or a string/],
      [{ field: 'n', op: 'eq', value: 1, extra: 1 }, '/filter/extra', /unknown member "extra"/],
      [{ field: '_row_id', op: 'eq', value: 'x' }, '/filter/value', /UUID/],
      [
        {
          not: {
            not: {
              not: {
                not: { not: { not: { not: { not: { not: { not: { not: { field: 'n', op: 'eq', value: 1 } } } } } } } },
              },
            },
          },
        },
        '/filter/not/not/not/not/not/not/not/not/not/not/not',
        /nest at most 10/,
      ],
    ];
    for (const [filter, pointer, detail] of cases) {
      const res = await query({ filter });
      expectProblem(res, 400, 'invalid_filter');
      expect(res.body.pointer).toBe(pointer);
      expect(res.body.detail).toMatch(detail);
    }
    expectProblem(await query({ sort: [{ field: 'n', direction: 'up' }] }), 400, 'invalid_filter');
    expectProblem(await query({ select: ['nope'] }), 400, 'invalid_filter');
    expectProblem(await query({ filter: 'n > 3' }), 400, 'validation_failed');
    expectProblem(await query({ limit: 1001 }), 400, 'validation_failed');
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/query`).set(r.viewer.auth).send({ version_id: randomUUID() }),
      404,
      'version_not_found',
    );
    expectProblem(await t.http.post(`/datasets/${datasetId}/query`).set(r.outsider.auth).send({}), 403);
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${versionId}/query`).set(r.outsider.auth).send({}),
      403,
    );
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${randomUUID()}/query`).set(r.viewer.auth).send({}),
      404,
    );
    expectProblem(await t.http.post(`/datasets/${datasetId}/query`).send({}), 401);
  });
});
