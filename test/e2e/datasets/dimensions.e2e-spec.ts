import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { uploadRows } from '../../utils/datasets.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const ROWS = [
  { q: 'How do I get a refund?', conv: 'c1', lang: 'en' },
  { q: 'Refund still missing', conv: 'c1', lang: 'en' },
  { q: 'Change my billing address', conv: 'c2', lang: 'en' },
  { q: 'Où est ma facture ?', conv: 'c3', lang: 'fr' },
  { q: 'Reset my password', conv: 'c4', lang: 'en' },
];

describe('datasets: dimensions, partitions and available metrics', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let versionId: string;
  let ids: string[];
  const base = () => `/datasets/${datasetId}/versions/${versionId}`;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ({ datasetId, versionId, rowIds: ids } = await uploadRows(t, r.member.auth, r.workspace.id, ROWS, 'support.json'));
  });
  afterAll(async () => t?.close());

  it('assigns values by rule and by row ids, creating dimensions and values on first use', async () => {
    const byRule = await t.http
      .post(`/datasets/${datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({
        dimension: 'topic',
        value: 'refunds',
        rule: { field: 'q', op: 'contains', value: 'efund', case_insensitive: true },
        description: 'What the user asks about',
      })
      .expect(201);
    expect(byRule.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      dimension: 'topic',
      value: 'refunds',
      assigned: 2,
      reassigned: 0,
      created_dimension: true,
      created_value: true,
    });
    const byIds = await t.http
      .post(`/datasets/${datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension: 'topic', value: 'billing', row_ids: [ids[2], ids[3], ids[1]] })
      .expect(201);
    // Row 1 was "refunds": it is reassigned, one value per dimension per row.
    expect(byIds.body).toEqual(
      expect.objectContaining({ assigned: 3, reassigned: 1, created_dimension: false, created_value: true }),
    );
    await t.http
      .post(`/datasets/${datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension: 'persona', value: 'new', row_ids: [ids[0], ids[2]] })
      .expect(201);
    await t.http
      .post(`/datasets/${datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension: 'topic', value: 'account', row_ids: [] })
      .expect(400);

    const summary = await t.http.get(`${base()}/dimensions`).set(r.viewer.auth).expect(200);
    expect(summary.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      row_count: 5,
      dimensions: [
        {
          name: 'persona',
          description: '',
          values: [{ value: 'new', count: 2 }],
          assigned_rows: 2,
          unassigned_rows: 3,
        },
        {
          name: 'topic',
          description: 'What the user asks about',
          values: [
            { value: 'billing', count: 3 },
            { value: 'refunds', count: 1 },
          ],
          assigned_rows: 4,
          unassigned_rows: 1,
        },
      ],
    });
    const values = await t.http
      .get(`${base()}/dimensions/values`)
      .query({ dimension: 'topic' })
      .set(r.viewer.auth)
      .expect(200);
    expect(values.body.values).toEqual([
      { dimension: 'topic', value: 'billing', count: 3, share: 0.6 },
      { dimension: 'topic', value: 'refunds', count: 1, share: 0.2 },
    ]);
    expectProblem(
      await t.http.get(`${base()}/dimensions/values`).query({ dimension: 'nope' }).set(r.viewer.auth),
      400,
      'unknown_dimension',
    );

    const audit = (await t.http.get(`/datasets/${datasetId}/audit`).set(r.viewer.auth).expect(200)).body;
    expect(audit[0]).toEqual(
      expect.objectContaining({
        action: 'dimension.assigned',
        details: expect.objectContaining({ dimension: 'persona', value: 'new', assigned: 2 }),
      }),
    );
  });

  it('queries rows by dimension values with grouped counts, and filters by dimension', async () => {
    const res = await t.http
      .post(`${base()}/dimensions/query`)
      .set(r.viewer.auth)
      .send({ dimensions: { topic: ['billing'] }, group_by: ['persona'], limit: 10 })
      .expect(200);
    expect(res.body.total).toBe(3);
    expect(res.body.groups).toEqual([
      { values: { persona: null }, count: 2 },
      { values: { persona: 'new' }, count: 1 },
    ]);
    expect(
      res.body.items.map((row: { _row_id: string; _dimensions: Record<string, string> }) => [
        row._row_id,
        row._dimensions,
      ]),
    ).toEqual([
      [ids[1], { topic: 'billing' }],
      [ids[2], { topic: 'billing', persona: 'new' }],
      [ids[3], { topic: 'billing' }],
    ]);
    const withFilter = await t.http
      .post(`${base()}/dimensions/query`)
      .set(r.viewer.auth)
      .send({
        dimensions: { topic: ['billing', 'refunds'] },
        filter: { field: 'lang', op: 'eq', value: 'en' },
        limit: 0,
      })
      .expect(200);
    expect(withFilter.body).toEqual(expect.objectContaining({ total: 3, items: [] }));
    const dimFilter = await t.http
      .post(`/datasets/${datasetId}/query`)
      .set(r.viewer.auth)
      .send({
        filter: {
          or: [
            { dimension: 'topic', op: 'eq', value: 'refunds' },
            { dimension: 'persona', op: 'is_null', value: false },
          ],
        },
      })
      .expect(200);
    expect(dimFilter.body.items.map((row: { _row_id: string }) => row._row_id)).toEqual([ids[0], ids[2]]);
    const unassigned = await t.http
      .post(`/datasets/${datasetId}/query`)
      .set(r.viewer.auth)
      .send({ filter: { dimension: 'topic', op: 'is_null' } })
      .expect(200);
    expect(unassigned.body.items.map((row: { _row_id: string }) => row._row_id)).toEqual([ids[4]]);
    expectProblem(
      await t.http
        .post(`${base()}/dimensions/query`)
        .set(r.viewer.auth)
        .send({ dimensions: { nope: ['x'] } }),
      400,
      'unknown_dimension',
    );
    expectProblem(
      await t.http
        .post(`${base()}/dimensions/query`)
        .set(r.viewer.auth)
        .send({ dimensions: { topic: 'billing' } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`${base()}/dimensions/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'zz', op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
  });

  it('saves partitions, resolves them to sessions, and lists applicable metrics', async () => {
    await t.http.post(`${base()}/map`).set(r.member.auth).send({ input: 'q', session_id: 'conv' }).expect(200);
    const created = await t.http
      .post(`${base()}/partitions`)
      .set(r.member.auth)
      .send({
        name: 'English money questions',
        dimension_values: { topic: ['billing', 'refunds'] },
        filter: { field: 'lang', op: 'eq', value: 'en' },
      })
      .expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        dataset_id: datasetId,
        version_id: versionId,
        name: 'English money questions',
        level: 'session',
        row_count: 3,
        created_by: r.member.id,
      }),
    );
    const pid = created.body.id;
    expectProblem(
      await t.http.post(`${base()}/partitions`).set(r.member.auth).send({ name: 'english MONEY questions' }),
      409,
      'partition_name_taken',
    );
    expectProblem(
      await t.http.post(`${base()}/partitions`).set(r.member.auth).send({ name: 'spans', level: 'span' }),
      400,
      'level_not_supported',
    );
    expectProblem(
      await t.http
        .post(`${base()}/partitions`)
        .set(r.member.auth)
        .send({ name: 'bad', filter: { field: 'nope', op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
    expectProblem(
      await t.http
        .post(`${base()}/partitions`)
        .set(r.member.auth)
        .send({ name: 'bad', dimension_values: { ghost: ['x'] } }),
      400,
      'unknown_dimension',
    );
    expectProblem(await t.http.post(`${base()}/partitions`).set(r.viewer.auth).send({ name: 'v' }), 403);

    const resolved = await t.http.post(`${base()}/partitions/${pid}/resolve`).set(r.viewer.auth).expect(200);
    expect(resolved.body).toEqual([
      { level: 'session', session_id: 'c1', row_ids: [ids[0], ids[1]] },
      { level: 'session', session_id: 'c2', row_ids: [ids[2]] },
    ]);
    const page = await t.http
      .post(`${base()}/partitions/${pid}/resolve`)
      .query({ limit: 1, offset: 1, include_rows: true })
      .set(r.viewer.auth)
      .expect(200);
    expect(page.body).toEqual([
      { level: 'session', session_id: 'c2', row_ids: [ids[2]], rows: [{ _row_id: ids[2], ...ROWS[2] }] },
    ]);

    const list = await t.http.get(`${base()}/partitions`).set(r.viewer.auth).expect(200);
    expect(list.body.map((p: { id: string; row_count: number }) => [p.id, p.row_count])).toEqual([[pid, 3]]);

    const metrics = await t.http.get(`${base()}/available-metrics`).set(r.viewer.auth).expect(200);
    const metric = (name: string) => metrics.body.metrics.find((m: { name: string }) => m.name === name);
    expect(metrics.body.mapping).toEqual({ input: 'q', session_id: 'conv' });
    expect(metric('answer_relevance')).toEqual(expect.objectContaining({ available: true, missing: [] }));
    expect(metric('exact_match')).toEqual(expect.objectContaining({ available: false, missing: ['expected_output'] }));
    expect(metric('faithfulness')).toEqual(expect.objectContaining({ available: false, missing: ['context'] }));
    const pmetrics = await t.http.get(`${base()}/partitions/${pid}/available-metrics`).set(r.viewer.auth).expect(200);
    expect(pmetrics.body).toEqual(
      expect.objectContaining({ partition_id: pid, row_count: 3, metrics: metrics.body.metrics }),
    );

    expectProblem(
      await t.http.post(`${base()}/partitions/${randomUUID()}/resolve`).set(r.viewer.auth),
      404,
      'partition_not_found',
    );
    expectProblem(
      await t.http.get(`${base()}/partitions/${randomUUID()}/available-metrics`).set(r.viewer.auth),
      404,
      'partition_not_found',
    );
    expectProblem(await t.http.delete(`${base()}/partitions/${pid}`).set(r.viewer.auth), 403);
    await t.http.delete(`${base()}/partitions/${pid}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.delete(`${base()}/partitions/${pid}`).set(r.member.auth), 404, 'partition_not_found');
  });

  it('answers 400, 401, 403 and 404 on the dimension operations', async () => {
    const assign = (auth: Record<string, string> | undefined, body: Record<string, unknown>, id = datasetId) => {
      const req = t.http.post(`/datasets/${id}/dimensions:assign`);
      return (auth ? req.set(auth) : req).send(body);
    };
    expectProblem(await assign(r.member.auth, { dimension: 'topic', value: 'x' }), 400, 'validation_failed');
    expectProblem(
      await assign(r.member.auth, {
        dimension: 'topic',
        value: 'x',
        row_ids: [ids[0]],
        rule: { field: 'q', op: 'eq', value: 'x' },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await assign(r.member.auth, { dimension: '', value: 'x', row_ids: [ids[0]] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await assign(r.member.auth, { dimension: 'topic', value: 'x', rule: { field: 'nope', op: 'eq', value: 1 } }),
      400,
      'invalid_filter',
    );
    expectProblem(
      await assign(r.member.auth, { dimension: 'topic', value: 'x', row_ids: [randomUUID()] }),
      404,
      'row_not_found',
    );
    expectProblem(await assign(r.viewer.auth, { dimension: 'topic', value: 'x', row_ids: [ids[0]] }), 403);
    expectProblem(await assign(r.outsider.auth, { dimension: 'topic', value: 'x', row_ids: [ids[0]] }), 403);
    expectProblem(
      await assign(r.member.auth, { dimension: 'topic', value: 'x', row_ids: [ids[0]] }, randomUUID()),
      404,
    );
    expectProblem(await assign(undefined, { dimension: 'topic', value: 'x', row_ids: [ids[0]] }), 401);
    expectProblem(await t.http.get(`${base()}/dimensions`).set(r.outsider.auth), 403);
    expectProblem(
      await t.http.get(`/datasets/${datasetId}/versions/${randomUUID()}/dimensions`).set(r.viewer.auth),
      404,
    );
    expectProblem(await t.http.get(`${base()}/dimensions`), 401);
  });
});
