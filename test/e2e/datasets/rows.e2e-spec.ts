import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('datasets: staged row edits, commits and version lifecycle', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let v1: string;
  let ids: string[];

  const rowsOf = async (versionId: string) =>
    (
      await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/query`)
        .set(r.viewer.auth)
        .send({ limit: 1000 })
        .expect(200)
    ).body.items as Array<Record<string, unknown>>;

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
    ids = (await rowsOf(v1)).map((row) => row._row_id as string);
  });
  afterAll(async () => t?.close());

  it('stages inserts, updates and deletes, then commits them as version 2 in one transaction', async () => {
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
      .send({ rows: { [ids[0]]: { expected: 'A1' }, [given]: { expected: 'a5' } } })
      .expect(200);
    expect(updated.body).toEqual({
      [ids[0]]: { _row_id: ids[0], input: 'q1', expected: 'A1' },
      [given]: { _row_id: given, input: 'q5', expected: 'a5' },
    });
    const replaced = await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.member.auth)
      .send({ rows: { [ids[2]]: { input: 'only' } }, mode: 'replace' })
      .expect(200);
    expect(replaced.body[ids[2]]).toEqual({ _row_id: ids[2], input: 'only' });
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
    expect(staged.body.map((e: { op: string }) => e.op).sort()).toEqual([
      'delete',
      'insert',
      'insert',
      'update',
      'update',
    ]);
    expect((await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200)).body.staged_edits).toBe(5);
    // Nothing is visible until the commit.
    expect(await rowsOf(v1)).toHaveLength(3);

    const commit = await t.http
      .post(`/datasets/${datasetId}/rows/commit`)
      .set(r.member.auth)
      .send({ message: 'fix answers' })
      .expect(200);
    expect(commit.body).toEqual(
      expect.objectContaining({
        dataset_id: datasetId,
        inserted: 2,
        updated: 2,
        deleted: 1,
        row_count: 4,
        version: expect.objectContaining({
          number: 2,
          state: 'candidate',
          source: 'commit',
          message: 'fix answers',
          parent_version_id: v1,
          changes: { inserted: 2, updated: 2, deleted: 1 },
          columns: ['input', 'expected', 'extra'],
        }),
      }),
    );
    const v2 = commit.body.version.id;
    const rows = await rowsOf(v2);
    // Updated rows keep their place; inserted rows follow in staging order.
    expect(rows.map((row) => [row._row_id, row.input, row.expected])).toEqual([
      [ids[0], 'q1', 'A1'],
      [ids[2], 'only', undefined],
      [inserted.body[0]._row_id, 'q4', 'a4'],
      [given, 'q5', 'a5'],
    ]);
    // Version 1 is untouched.
    expect((await rowsOf(v1)).map((row) => row.expected)).toEqual(['a1', 'a2', 'a3']);
    expect((await t.http.get(`/datasets/${datasetId}/rows/staged`).set(r.viewer.auth).expect(200)).body).toEqual([]);
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/rows/commit`).set(r.member.auth).send({}),
      409,
      'nothing_to_commit',
    );

    const audit = (await t.http.get(`/datasets/${datasetId}/audit`).set(r.viewer.auth).expect(200)).body;
    expect(audit[0]).toEqual(
      expect.objectContaining({
        action: 'rows.committed',
        details: expect.objectContaining({ number: 2, inserted: 2, updated: 2, deleted: 1, message: 'fix answers' }),
      }),
    );
    expect(audit.filter((e: { action: string }) => e.action === 'rows.staged')).toHaveLength(4);
  });

  it('tells a second writer about a conflicting staged edit (409), never merging', async () => {
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
      expect.objectContaining({
        row_id: target,
        op: 'update',
        staged_by: r.member.id,
        staged_by_email: r.member.email,
      }),
    ]);
    expectProblem(
      await t.http
        .post(`/datasets/${datasetId}/rows/delete`)
        .set(r.admin.auth)
        .send({ row_ids: [target] }),
      409,
      'row_edit_conflict',
    );
    // The first writer may restage; discarding clears the way for the second.
    await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.member.auth)
      .send({ rows: { [target]: { expected: 'mine again' } } })
      .expect(200);
    expectProblem(await t.http.delete(`/datasets/${datasetId}/rows/staged`).set(r.viewer.auth), 403);
    await t.http.delete(`/datasets/${datasetId}/rows/staged`).set(r.member.auth).expect(204);
    await t.http
      .patch(`/datasets/${datasetId}/rows/update`)
      .set(r.admin.auth)
      .send({ rows: { [target]: { expected: 'theirs' } } })
      .expect(200);
    await t.http.delete(`/datasets/${datasetId}/rows/staged`).set(r.admin.auth).expect(204);
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
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.member.auth)
        .send({ rows: [{ _row_id: 'x' }] }),
      400,
      'invalid_row',
    );
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.member.auth)
        .send({ rows: [{ a: 'nul\u0000' }] }),
      400,
      'invalid_row',
    );
    expectProblem(
      await t.http
        .post(url('insert'))
        .set(r.member.auth)
        .send({ rows: [{ _row_id: ids[0] }] }),
      409,
      'row_exists',
    );
    expectProblem(
      await t.http
        .patch(url('update'))
        .set(r.member.auth)
        .send({ rows: { 'not-a-uuid': {} } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .patch(url('update'))
        .set(r.member.auth)
        .send({ rows: { [ids[0]]: 'x' } }),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.patch(url('update')).set(r.member.auth).send({ rows: {} }), 400, 'validation_failed');
    const missing = await t.http
      .patch(url('update'))
      .set(r.member.auth)
      .send({ rows: { [ids[1]]: { a: 1 } } });
    expectProblem(missing, 404, 'row_not_found');
    expect(missing.body.row_ids).toEqual([ids[1]]);
    expectProblem(
      await t.http
        .post(url('delete'))
        .set(r.member.auth)
        .send({ row_ids: [randomUUID()] }),
      404,
      'row_not_found',
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

  it('promotes one current version at a time, demotes, maps columns and commits with promote', async () => {
    const versions = (await t.http.get(`/datasets/${datasetId}/versions`).set(r.viewer.auth).expect(200)).body.items;
    const v2 = versions[0].id;
    expect(
      (await t.http.post(`/datasets/${datasetId}/versions/${v1}/promote`).set(r.member.auth).expect(200)).body,
    ).toEqual(expect.objectContaining({ state: 'current', promoted_at: expect.any(String) }));
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${v1}/promote`).set(r.member.auth),
      409,
      'version_state_conflict',
    );
    await t.http.post(`/datasets/${datasetId}/versions/${v2}/promote`).set(r.member.auth).expect(200);
    const states = (await t.http.get(`/datasets/${datasetId}/versions`).set(r.viewer.auth).expect(200)).body.items.map(
      (v: { number: number; state: string }) => [v.number, v.state],
    );
    expect(states).toEqual([
      [2, 'current'],
      [1, 'candidate'],
    ]);
    expect((await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200)).body.current_version_id).toBe(
      v2,
    );
    expect(
      (
        await t.http
          .get('/datasets/' + datasetId + '/versions')
          .query({ state: 'current' })
          .set(r.viewer.auth)
          .expect(200)
      ).body.total,
    ).toBe(1);

    const demoted = await t.http.post(`/datasets/${datasetId}/versions/${v2}/demote`).set(r.member.auth).expect(200);
    expect(demoted.body).toEqual(expect.objectContaining({ state: 'retired', retired_at: expect.any(String) }));
    expect(
      (await t.http.get(`/datasets/${datasetId}`).set(r.viewer.auth).expect(200)).body.current_version_id,
    ).toBeNull();
    expectProblem(
      await t.http.post(`/datasets/${datasetId}/versions/${v2}/demote`).set(r.member.auth),
      409,
      'version_state_conflict',
    );
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

    // The mapping carries over to the next version, which the commit promotes at once.
    await t.http
      .post(`/datasets/${datasetId}/rows/delete`)
      .set(r.member.auth)
      .send({ row_ids: [ids[2]] })
      .expect(200);
    const commit = await t.http
      .post(`/datasets/${datasetId}/rows/commit`)
      .set(r.member.auth)
      .send({ promote: true })
      .expect(200);
    expect(commit.body.version).toEqual(
      expect.objectContaining({
        number: 3,
        state: 'current',
        row_count: 3,
        mapping: { input: 'input', expected_output: 'expected', metadata: ['extra'] },
      }),
    );

    const byId = await t.http.get(`/dataset-versions/${commit.body.version.id}`).set(r.viewer.auth).expect(200);
    expect(byId.body).toEqual(
      expect.objectContaining({
        id: commit.body.version.id,
        number: 3,
        dataset: expect.objectContaining({ id: datasetId, current_version_id: commit.body.version.id }),
        schema: expect.arrayContaining([expect.objectContaining({ name: 'input' })]),
      }),
    );
    expectProblem(await t.http.get(`/dataset-versions/${commit.body.version.id}`).set(r.outsider.auth), 404);
    expectProblem(await t.http.get(`/dataset-versions/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/dataset-versions/nope').set(r.viewer.auth), 400);
    expectProblem(await t.http.get(`/dataset-versions/${commit.body.version.id}`), 401);
  });

  it('refuses a commit whose staged edits name rows a newer upload removed', async () => {
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
