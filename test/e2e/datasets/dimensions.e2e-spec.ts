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

/**
 * The HTTP contract of the dimension and partition operations: status and body on success, each
 * problem they answer, and who reaches them. Which rows an assignment, a query or a partition
 * reaches, and what they write, is test/medium/dimensions.medium-spec.ts's.
 */
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

  const assign = (auth: Record<string, string> | undefined, body: Record<string, unknown>, id = datasetId) => {
    const req = t.http.post(`/datasets/${id}/dimensions:assign`);
    return (auth ? req.set(auth) : req).send(body);
  };

  it('assign: 201 with the assignment; 400, 404, 403 and 401', async () => {
    const res = await assign(r.member.auth, {
      dimension: 'topic',
      value: 'refunds',
      rule: { field: 'q', op: 'contains', value: 'efund', case_insensitive: true },
      description: 'What the user asks about',
    }).expect(201);
    expect(res.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      dimension: 'topic',
      value: 'refunds',
      assigned: 2,
      reassigned: 0,
      created_dimension: true,
      created_value: true,
    });
    await assign(r.member.auth, { dimension: 'topic', value: 'billing', row_ids: [ids[2], ids[3]] }).expect(201);
    await assign(r.member.auth, { dimension: 'persona', value: 'new', row_ids: [ids[0], ids[2]] }).expect(201);

    const invalid = await assign(r.member.auth, { dimension: '', value: 'x', row_ids: [] });
    expectProblem(invalid, 400, 'validation_failed');
    expect(invalid.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['dimension', 'row_ids']);
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
    const body = { dimension: 'topic', value: 'x', row_ids: [ids[0]] };
    expectProblem(await assign(r.viewer.auth, body), 403);
    expectProblem(await assign(r.outsider.auth, body), 403);
    expectProblem(await assign(r.member.auth, body, randomUUID()), 404);
    expectProblem(await assign(undefined, body), 401);
  });

  it('dimensions: 200 with every dimension and its counts; 403, 404 and 401', async () => {
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
            { value: 'billing', count: 2 },
            { value: 'refunds', count: 2 },
          ],
          assigned_rows: 4,
          unassigned_rows: 1,
        },
      ],
    });
    expectProblem(await t.http.get(`${base()}/dimensions`).set(r.outsider.auth), 403);
    expectProblem(
      await t.http.get(`/datasets/${datasetId}/versions/${randomUUID()}/dimensions`).set(r.viewer.auth),
      404,
    );
    expectProblem(await t.http.get(`${base()}/dimensions`), 401);
  });

  it('dimension values: 200 with counts and shares; 400 unknown_dimension', async () => {
    const values = await t.http
      .get(`${base()}/dimensions/values`)
      .query({ dimension: 'persona' })
      .set(r.viewer.auth)
      .expect(200);
    expect(values.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      row_count: 5,
      values: [{ dimension: 'persona', value: 'new', count: 2, share: 0.4 }],
    });
    expectProblem(
      await t.http.get(`${base()}/dimensions/values`).query({ dimension: 'nope' }).set(r.viewer.auth),
      400,
      'unknown_dimension',
    );
  });

  it('dimension query: 200 with total, groups and rows; 400 unknown_dimension, validation_failed, invalid_filter', async () => {
    const res = await t.http
      .post(`${base()}/dimensions/query`)
      .set(r.viewer.auth)
      .send({ dimensions: { persona: ['new'] }, group_by: ['topic'], limit: 10 })
      .expect(200);
    expect(res.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      total: 2,
      groups: [
        { values: { topic: 'billing' }, count: 1 },
        { values: { topic: 'refunds' }, count: 1 },
      ],
      items: [
        { _row_id: ids[0], ...ROWS[0], _dimensions: { topic: 'refunds', persona: 'new' } },
        { _row_id: ids[2], ...ROWS[2], _dimensions: { topic: 'billing', persona: 'new' } },
      ],
      limit: 10,
      offset: 0,
    });
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

  it('partitions: create, list, resolve, available metrics and delete, with their problems and roles', async () => {
    await t.http.post(`${base()}/map`).set(r.member.auth).send({ input: 'q', session_id: 'conv' }).expect(200);
    const created = await t.http
      .post(`${base()}/partitions`)
      .set(r.member.auth)
      .send({ name: 'Refund questions', dimension_values: { topic: ['refunds'] } })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      dataset_id: datasetId,
      version_id: versionId,
      name: 'Refund questions',
      description: '',
      level: 'session',
      dimension_values: { topic: ['refunds'] },
      filter: null,
      row_count: 2,
      created_by: r.member.id,
      created_at: expect.any(String),
    });
    const pid = created.body.id;
    expectProblem(
      await t.http.post(`${base()}/partitions`).set(r.member.auth).send({ name: 'Refund questions' }),
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

    const list = await t.http.get(`${base()}/partitions`).set(r.viewer.auth).expect(200);
    expect(list.body).toEqual([created.body]);

    const resolved = await t.http.post(`${base()}/partitions/${pid}/resolve`).set(r.viewer.auth).expect(200);
    expect(resolved.body).toEqual([{ level: 'session', session_id: 'c1', row_ids: [ids[0], ids[1]] }]);
    expectProblem(
      await t.http.post(`${base()}/partitions/${randomUUID()}/resolve`).set(r.viewer.auth),
      404,
      'partition_not_found',
    );

    const metrics = await t.http.get(`${base()}/available-metrics`).set(r.viewer.auth).expect(200);
    expect(metrics.body).toEqual({
      dataset_id: datasetId,
      version_id: versionId,
      mapping: { input: 'q', session_id: 'conv' },
      metrics: expect.arrayContaining([
        expect.objectContaining({ name: 'answer_relevance', available: true, missing: [] }),
      ]),
    });
    const pmetrics = await t.http.get(`${base()}/partitions/${pid}/available-metrics`).set(r.viewer.auth).expect(200);
    expect(pmetrics.body).toEqual({ ...metrics.body, partition_id: pid, row_count: 2 });
    expectProblem(
      await t.http.get(`${base()}/partitions/${randomUUID()}/available-metrics`).set(r.viewer.auth),
      404,
      'partition_not_found',
    );

    expectProblem(await t.http.delete(`${base()}/partitions/${pid}`).set(r.viewer.auth), 403);
    await t.http.delete(`${base()}/partitions/${pid}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.delete(`${base()}/partitions/${pid}`).set(r.member.auth), 404, 'partition_not_found');
  });
});
