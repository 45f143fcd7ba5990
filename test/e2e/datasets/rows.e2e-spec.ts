import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The HTTP contract of staged row edits, commits and the version lifecycle: status and body on
 * success, each problem answer, and who may call. The rules (what each edit stages or refuses,
 * the audit, one current version) are test/medium/rows.medium-spec.ts's and
 * test/medium/commits.medium-spec.ts's, on both databases.
 */
describe('datasets: staged row edits, commits and version lifecycle', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let v1: string;
  let ids: string[];

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    const res = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from('input,expected\nq1,a1\nq2,a2\nq3,a3\n'), 'edits.csv')
      .expect(201);
    datasetId = res.body.id;
    v1 = res.body.latest_version.id;
    ids = (
      await t.http
        .post(`/datasets/${datasetId}/versions/${v1}/query`)
        .set(r.viewer.auth)
        .send({ limit: 1000 })
        .expect(200)
    ).body.items.map((row: { _row_id: string }) => row._row_id);
  });
  afterAll(async () => t?.close());

  it('stages inserts, updates and deletes (200 with the rows), lists them, and commits them as version 2', async () => {
    const given = randomUUID();
    const inserted = await t.http
      .post(`/datasets/${datasetId}/rows/insert`)
      .set(r.member.auth)
      .send({
        rows: [
          { input: 'q4', expected: 'a4', extra: { k: 1 } },
          { _row_id: given, input: 'q5' },
        ],
      })
      .expect(200);
    expect(inserted.body).toEqual([
      { _row_id: expect.any(String), input: 'q4', expected: 'a4', extra: { k: 1 } },
      { _row_id: given, input: 'q5' },
    ]);
    const updated = await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.member.auth)
      .send({ rows: { [ids[0]]: { expected: 'A1' } }, mode: 'merge' })
      .expect(200);
    expect(updated.body).toEqual({ [ids[0]]: { _row_id: ids[0], input: 'q1', expected: 'A1' } });
    expect(
      (
        await t.http
          .post(`/datasets/${datasetId}/rows/delete`)
          .set(r.member.auth)
          .send({ row_ids: [ids[1]] })
          .expect(200)
      ).body,
    ).toEqual([ids[1]]);

    const staged = await t.http.get(`/datasets/${datasetId}/rows/staged`).set(r.viewer.auth).expect(200);
    expect(staged.body).toHaveLength(4);
    expect(staged.body.find((e: { row_id: string }) => e.row_id === ids[0])).toEqual({
      row_id: ids[0],
      op: 'update',
      row: { _row_id: ids[0], input: 'q1', expected: 'A1' },
      base_version: 1,
      staged_by: r.member.id,
      staged_by_email: r.member.email,
      staged_at: expect.any(String),
    });

    const commit = await t.http
      .post(`/datasets/${datasetId}/rows/commit`)
      .set(r.member.auth)
      .send({ message: 'fix answers' })
      .expect(200);
    expect(commit.body).toEqual(
      expect.objectContaining({
        dataset_id: datasetId,
        inserted: 2,
        updated: 1,
        deleted: 1,
        row_count: 4,
        version: expect.objectContaining({
          number: 2,
          state: 'candidate',
          source: 'commit',
          message: 'fix answers',
          parent_version_id: v1,
          changes: { inserted: 2, updated: 1, deleted: 1 },
          columns: ['input', 'expected', 'extra'],
        }),
      }),
    );
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/rows/commit`).set(r.member.auth).send({}),
      409,
      'nothing_to_commit',
    );
  });

  it('tells a second writer about a conflicting staged edit (409 with the conflicts); discarding is 204, not for viewers', async () => {
    const target = ids[0];
    await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.member.auth)
      .send({ rows: { [target]: { expected: 'mine' } } })
      .expect(200);
    const conflict = await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.admin.auth)
      .send({ rows: { [target]: { expected: 'theirs' } } });
    expectProblem(conflict, 409, 'row_edit_conflict');
    expect(conflict.body.conflicts).toEqual([
      {
        row_id: target,
        op: 'update',
        staged_by: r.member.id,
        staged_by_email: r.member.email,
        staged_at: expect.any(String),
      },
    ]);
    expectProblem(await t.http.delete(`/datasets/${datasetId}/rows/staged`).set(r.viewer.auth), 403);
    const discarded = await t.http.delete(`/datasets/${datasetId}/rows/staged`).set(r.member.auth).expect(204);
    expect(discarded.text).toBe('');
  });

  it('answers bad edits with 400, 404 and 409 problems', async () => {
    const url = (op: string) => `/datasets/${datasetId}/rows/${op}`;
    expectProblem(await t.http.post(url('insert')).set(r.member.auth).send({ rows: [] }), 400, 'validation_failed');
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.member.auth)
        .send({ rows: ['x'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.member.auth)
        .send({ rows: Array.from({ length: 1001 }, () => ({ a: 1 })) }),
      400,
      'validation_failed',
    );
    const invalid = await t.http
      .post(url('insert'))
      .set(r.member.auth)
      .send({ rows: [{ _row_id: 'x' }] });
    expectProblem(invalid, 400, 'invalid_row');
    expect(invalid.body).toEqual(expect.objectContaining({ where: 'rows[0]', reason: expect.any(String) }));
    const exists = await t.http
      .post(url('insert'))
      .set(r.member.auth)
      .send({ rows: [{ _row_id: ids[0] }] });
    expectProblem(exists, 409, 'row_exists');
    expect(exists.body.row_ids).toEqual([ids[0]]);
    const missing = await t.http
      .patch(url('update'))
      .set(r.member.auth)
      .send({ rows: { [ids[1]]: { a: 1 } } });
    expectProblem(missing, 404, 'row_not_found');
    expect(missing.body.row_ids).toEqual([ids[1]]);
    expectProblem(
      await t.http
        .patch(url('update'))
        .set(r.member.auth)
        .send({ rows: { [ids[0]]: { a: 1 } }, mode: 'patch' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(url('delete'))
        .set(r.member.auth)
        .send({ row_ids: ['x'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(url('commit')).set(r.member.auth).send({ promote: 'yes' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.viewer.auth)
        .send({ rows: [{ a: 1 }] }),
      403,
    );
    expectProblem(await t.http.post(url('commit')).set(r.outsider.auth).send({}), 403);
    expectProblem(await t.http.post(`/datasets/${randomUUID()}/rows/commit`).set(r.member.auth).send({}), 404);
    expectProblem(await t.http.post(url('commit')).send({}), 401);
    expect((await t.http.get(`/datasets/${datasetId}/rows/staged`).set(r.viewer.auth).expect(200)).body).toEqual([]);
  });

  it('promotes, demotes and maps a version (200 with the version), with their 400, 403, 404 and 409 problems', async () => {
    const versions = (await t.http.get(`/datasets/${datasetId}/versions`).set(r.viewer.auth).expect(200)).body.items;
    const v2 = versions[0].id;
    expect(
      (await t.http.post(`/datasets/${datasetId}/versions/${v2}/promote`).set(r.member.auth).expect(200)).body,
    ).toEqual(expect.objectContaining({ id: v2, state: 'current', promoted_at: expect.any(String) }));
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${v2}/promote`).set(r.member.auth),
      409,
      'version_state_conflict',
    );
    const demoted = await t.http.post(`/datasets/${datasetId}/versions/${v2}/demote`).set(r.member.auth).expect(200);
    expect(demoted.body).toEqual(expect.objectContaining({ state: 'retired', retired_at: expect.any(String) }));
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${randomUUID()}/promote`).set(r.member.auth),
      404,
      'version_not_found',
    );
    expectProblem(await t.http.post(`/datasets/${datasetId}/versions/${v2}/promote`).set(r.viewer.auth), 403);

    const mapped = await t.http
      .post(`/datasets/${datasetId}/versions/${v2}/map`)
      .set(r.member.auth)
      .send({ input: 'input', expected_output: 'expected', metadata: ['extra'] })
      .expect(200);
    expect(mapped.body.mapping).toEqual({ input: 'input', expected_output: 'expected', metadata: ['extra'] });
    const unknown = await t.http
      .post(`/datasets/${datasetId}/versions/${v2}/map`)
      .set(r.member.auth)
      .send({ input: 'question' });
    expectProblem(unknown, 400, 'unknown_column');
    expect(unknown.body.available).toEqual(['input', 'expected', 'extra']);
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${v2}/map`).set(r.member.auth).send({ input: 3 }),
      400,
      'validation_failed',
    );
  });

  it('answers GET /dataset-versions/{id} with the version, its dataset and schema; 404, 400 and 401 problems', async () => {
    const byId = await t.http.get(`/dataset-versions/${v1}`).set(r.viewer.auth).expect(200);
    expect(byId.body).toEqual(
      expect.objectContaining({
        id: v1,
        number: 1,
        dataset: expect.objectContaining({ id: datasetId, current_version_id: null }),
        schema: expect.arrayContaining([expect.objectContaining({ name: 'input' })]),
      }),
    );
    expectProblem(await t.http.get(`/dataset-versions/${v1}`).set(r.outsider.auth), 404);
    expectProblem(await t.http.get(`/dataset-versions/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/dataset-versions/nope').set(r.viewer.auth), 400);
    expectProblem(await t.http.get(`/dataset-versions/${v1}`), 401);
  });

  it('refuses a commit whose staged edits name rows a newer upload removed (409 stale_edits)', async () => {
    const current = (await t.http.post(`/datasets/${datasetId}/query`).set(r.viewer.auth).send({}).expect(200)).body
      .items[0]._row_id;
    await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.member.auth)
      .send({ rows: { [current]: { expected: 'late' } } })
      .expect(200);
    await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .field('dataset_id', datasetId)
      .attach('file', Buffer.from('input\nfresh\n'), 'new.csv')
      .expect(201);
    const stale = await t.http.post(`/datasets/${datasetId}/rows/commit`).set(r.member.auth).send({});
    expectProblem(stale, 409, 'stale_edits');
    expect(stale.body.row_ids).toEqual([current]);
  });
});
