import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const DIMENSIONS = [
  {
    name: 'topic',
    description: 'What it is about',
    values: [
      { value: 'billing', description: 'b' },
      { value: 'shipping', description: 's' },
      { value: 'returns', description: 'r' },
    ],
  },
  {
    name: 'persona',
    description: 'Who asks',
    values: [
      { value: 'novice', description: 'n' },
      { value: 'expert', description: 'e' },
    ],
  },
];

describe('projects, test plans and test packages', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let data: UploadedDataset;
  let sutId: string;
  let projectId: string;

  const assign = (dimension: string, value: string, rowIds: string[]) =>
    t.http
      .post(`/datasets/${data.datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension, value, row_ids: rowIds })
      .expect(201);

  async function runWith(outputs: string[]): Promise<string> {
    const connection = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({ name: `offline-${randomUUID().slice(0, 8)}`, kind: 'offline' })
        .expect(201)
    ).body.id;
    const run = (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          version_id: data.versionId,
          sut_id: sutId,
          connection_id: connection,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body.id;
    const items = (await t.http.post(`/runs/${run}/results/query`).set(r.member.auth).send({}).expect(200)).body
      .items as Array<{ row_id: string }>;
    const byRow = new Map(data.rowIds.map((id, i) => [id, outputs[i]]));
    await t.http
      .put(`/runs/${run}/upload`)
      .set(r.member.auth)
      .send({ results: items.map((i) => ({ row_id: i.row_id, output: byRow.get(i.row_id) })) })
      .expect(202);
    for (let i = 0; i < 400; i++) {
      const state = (await t.http.get(`/runs/${run}`).set(r.viewer.auth).expect(200)).body.state;
      if (state === 'succeeded' || state === 'failed') return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('run did not finish');
  }

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    // Four rows; answers a, b, c, d.
    data = await uploadRows(t, r.member.auth, ws, [
      { question: 'q1', answer: 'a' },
      { question: 'q2', answer: 'b' },
      { question: 'q3', answer: 'c' },
      { question: 'q4', answer: 'd' },
    ]);
    await t.http
      .post(`/datasets/${data.datasetId}/versions/${data.versionId}/map`)
      .set(r.member.auth)
      .send({ input: 'question', expected_output: 'answer' })
      .expect(200);
    // topic: billing = rows 0,1,2; shipping = row 3; returns none. persona: novice = rows 0,3; expert = row 1; row 2 unassigned.
    await assign('topic', 'billing', data.rowIds.slice(0, 3));
    await assign('topic', 'shipping', [data.rowIds[3]]);
    await assign('persona', 'novice', [data.rowIds[0], data.rowIds[3]]);
    await assign('persona', 'expert', [data.rowIds[1]]);
    sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'assistant' }).expect(201))
      .body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a project from a template dimension list as it is, or edited, and checks its links', async () => {
    const template = (await t.http.get('/templates/rag-question-answering').set(r.viewer.auth).expect(200)).body;
    const asIs = await t.http
      .post('/projects')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: 'RAG bot', template: template.name, dimensions: template.dimensions })
      .expect(201);
    expect(asIs.body).toEqual(
      expect.objectContaining({
        name: 'RAG bot',
        template: 'rag-question-answering',
        dimension_source: 'template',
        dimensions: template.dimensions,
        test_plan: null,
      }),
    );
    const fromName = await t.http
      .post('/projects')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: 'RAG bot 2', template: template.name })
      .expect(201);
    expect(fromName.body.dimensions).toEqual(template.dimensions);
    const edited = template.dimensions.slice(0, 2);
    const editedRes = await t.http
      .post('/projects')
      .set(r.member.auth)
      .send({ workspace_id: ws, name: 'RAG bot 3', template: template.name, dimensions: edited })
      .expect(201);
    expect(editedRes.body.dimension_source).toBe('template_edited');

    const created = await t.http
      .post('/projects')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'Support',
        description: 'support bot',
        dimensions: DIMENSIONS,
        sut_ids: [sutId],
        dataset_ids: [data.datasetId],
      })
      .expect(201);
    projectId = created.body.id;
    expect(created.body).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        dimension_source: 'custom',
        sut_ids: [sutId],
        dataset_ids: [data.datasetId],
      }),
    );

    expectProblem(
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', sut_ids: [randomUUID()] }),
      400,
      'unknown_sut',
    );
    expectProblem(
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', dataset_ids: [randomUUID()] }),
      400,
      'unknown_dataset',
    );
    expectProblem(
      await t.http.post('/projects').set(r.member.auth).send({ workspace_id: ws, name: 'x', template: 'nope' }),
      400,
      'unknown_template',
    );
    expectProblem(
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', dimensions: [DIMENSIONS[0], DIMENSIONS[0]] }),
      400,
      'project_dimensions_invalid',
    );
    expectProblem(
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', dimensions: [{ name: 'Bad Name', description: '', values: [] }] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post('/projects').set(r.member.auth).send({ workspace_id: ws, name: 'x', id: randomUUID() }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post('/projects').set(r.member.auth).send({ workspace_id: ws, name: 'support' }),
      409,
      'project_name_taken',
    );
    expectProblem(
      await t.http.post('/projects').set(r.viewer.auth).send({ workspace_id: ws, name: 'y' }),
      403,
      'forbidden',
    );
    expectProblem(await t.http.post('/projects').send({ workspace_id: ws, name: 'y' }), 401);
    // A SUT of another workspace is refused.
    const other = await t.factory.workspaceWithRoles();
    const foreignSut = (
      await t.http
        .post('/suts')
        .set(other.member.auth)
        .send({ workspace_id: other.workspace.id, name: 'theirs' })
        .expect(201)
    ).body.id;
    expectProblem(
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'x', sut_ids: [foreignSut] }),
      400,
      'unknown_sut',
    );
  });

  it('lists, reads and patches projects; 400, 401, 403 and 404', async () => {
    const page = (
      await t.http.get('/projects').query({ workspace_id: ws, page_size: 2 }).set(r.viewer.auth).expect(200)
    ).body;
    expect(page).toEqual(expect.objectContaining({ total: 4, page: 1, page_size: 2 }));
    expect(page.items.map((p: { name: string }) => p.name)).toEqual(['RAG bot', 'RAG bot 2']);
    const filtered = (
      await t.http.get('/projects').query({ workspace_id: ws, q: 'supp' }).set(r.viewer.auth).expect(200)
    ).body;
    expect(filtered.items).toEqual([
      expect.objectContaining({ id: projectId, dimension_count: 2, sut_count: 1, dataset_count: 1 }),
    ]);
    expectProblem(
      await t.http.get('/projects').query({ workspace_id: ws, page_size: 500 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get('/projects').query({ workspace_id: ws }).set(r.outsider.auth), 403, 'forbidden');
    expectProblem(await t.http.get('/projects').query({ workspace_id: ws }), 401);

    expect((await t.http.get(`/projects/${projectId}`).set(r.viewer.auth).expect(200)).body).toEqual(
      expect.objectContaining({ id: projectId, name: 'Support' }),
    );
    expectProblem(await t.http.get(`/projects/${randomUUID()}`).set(r.viewer.auth), 404, 'not_found');
    expectProblem(await t.http.get('/projects/not-a-uuid').set(r.viewer.auth), 400, 'invalid_identifier');
    expectProblem(await t.http.get(`/projects/${projectId}`).set(r.outsider.auth), 403, 'forbidden');

    const patched = await t.http
      .patch(`/projects/${projectId}`)
      .set(r.member.auth)
      .send({ description: 'the support bot', name: 'Support' })
      .expect(200);
    expect(patched.body).toEqual(expect.objectContaining({ description: 'the support bot', changed: ['description'] }));
    expectProblem(
      await t.http
        .patch(`/projects/${projectId}`)
        .set(r.member.auth)
        .send({ dataset_ids: [randomUUID()] }),
      400,
      'unknown_dataset',
    );
    expectProblem(
      await t.http.patch(`/projects/${projectId}`).set(r.member.auth).send({ name: 'RAG bot' }),
      409,
      'project_name_taken',
    );
    expectProblem(
      await t.http.patch(`/projects/${projectId}`).set(r.viewer.auth).send({ description: 'x' }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.http.patch(`/projects/${projectId}`).set(r.member.auth).send({ workspace_id: ws }),
      400,
      'validation_failed',
    );
  });

  it('reports coverage per dimension value and pair, with the gaps', async () => {
    const res = await t.http
      .get(`/projects/${projectId}/coverage`)
      .query({ min_rows: 2, pairs: 'topic:persona' })
      .set(r.viewer.auth)
      .expect(200);
    const body = res.body;
    expect(body.total_rows).toBe(4);
    expect(body.datasets).toEqual([
      expect.objectContaining({ dataset_id: data.datasetId, rows: 4, version_number: 1 }),
    ]);
    const topic = body.dimensions.find((d: { name: string }) => d.name === 'topic');
    expect(topic.values).toEqual([
      { value: 'billing', rows: 3, covered: true, share: 0.75 },
      { value: 'shipping', rows: 1, covered: false, share: 0.25 },
      { value: 'returns', rows: 0, covered: false, share: 0 },
    ]);
    expect(topic).toEqual(expect.objectContaining({ covered_values: 1, total_values: 3, unassigned_rows: 0 }));
    const persona = body.dimensions.find((d: { name: string }) => d.name === 'persona');
    expect(persona).toEqual(expect.objectContaining({ covered_values: 1, total_values: 2, unassigned_rows: 1 }));
    expect(body.gaps).toEqual([
      { dimension: 'topic', value: 'returns', rows: 0, missing: 2 },
      { dimension: 'persona', value: 'expert', rows: 1, missing: 1 },
      { dimension: 'topic', value: 'shipping', rows: 1, missing: 1 },
    ]);
    expect(body.coverage_ratio).toBe(0.4);
    const cells = body.pairs[0].cells.map((c: { values: string[]; rows: number }) => `${c.values.join('+')}=${c.rows}`);
    expect(cells).toEqual([
      'billing+novice=1',
      'billing+expert=1',
      'shipping+novice=1',
      'shipping+expert=0',
      'returns+novice=0',
      'returns+expert=0',
    ]);
    expect(body.pairs[0]).toEqual(expect.objectContaining({ covered_cells: 0, total_cells: 6 }));

    const defaults = (await t.http.get(`/projects/${projectId}/coverage`).set(r.viewer.auth).expect(200)).body;
    expect(defaults.gaps).toEqual([{ dimension: 'topic', value: 'returns', rows: 0, missing: 1 }]);
    expectProblem(
      await t.http.get(`/projects/${projectId}/coverage`).query({ pairs: 'topic:nope' }).set(r.viewer.auth),
      400,
      'project_dimension_unknown',
    );
    expectProblem(
      await t.http.get(`/projects/${projectId}/coverage`).query({ min_rows: 0 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get(`/projects/${projectId}/coverage`).set(r.outsider.auth), 403, 'forbidden');
    expectProblem(await t.http.get(`/projects/${randomUUID()}/coverage`).set(r.viewer.auth), 404, 'not_found');
    expectProblem(await t.http.get(`/projects/${projectId}/coverage`), 401);
  });

  it('plots the metric values of the project runs over time, per dimension value', async () => {
    const first = await runWith(['a', 'x', 'c', 'd']); // exact_match 1,0,1,1
    const second = await runWith(['a', 'b', 'x', 'x']); // exact_match 1,1,0,0
    const trend = (
      await t.http
        .post(`/projects/${projectId}/trend`)
        .set(r.viewer.auth)
        .send({ metrics: ['exact_match'] })
        .expect(200)
    ).body;
    expect(trend.runs.map((x: { id: string }) => x.id)).toEqual([first, second]);
    // The runs list filters by project the same way (newest first); another workspace's project is unknown.
    const listed = (
      await t.http.get('/runs').query({ workspace_id: ws, project_id: projectId }).set(r.viewer.auth).expect(200)
    ).body;
    expect(listed.items.map((x: { id: string }) => x.id)).toEqual([second, first]);
    expectProblem(
      await t.http.get('/runs').query({ workspace_id: ws, project_id: randomUUID() }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expect(trend.series).toHaveLength(1);
    expect(
      trend.series[0].points.map((p: { run_ids: string[]; mean: number; count: number }) => [
        p.run_ids,
        p.mean,
        p.count,
      ]),
    ).toEqual([
      [[first], 0.75, 4],
      [[second], 0.5, 4],
    ]);
    const grouped = (
      await t.http
        .post(`/projects/${projectId}/trend`)
        .set(r.viewer.auth)
        .send({ metrics: ['exact_match'], group_by: 'topic' })
        .expect(200)
    ).body;
    const series = Object.fromEntries(
      grouped.series.map((s: { group: string | null; points: Array<{ mean: number }> }) => [
        s.group,
        s.points.map((p) => p.mean),
      ]),
    );
    // billing = rows 0..2: first 2/3, second 2/3; shipping = row 3: first 1, second 0.
    expect(series).toEqual({ billing: [0.666667, 0.666667], shipping: [1, 0] });
    const daily = (
      await t.http.post(`/projects/${projectId}/trend`).set(r.viewer.auth).send({ interval: 'day' }).expect(200)
    ).body;
    expect(daily.series[0].points).toEqual([
      expect.objectContaining({ run_ids: [first, second], mean: 0.625, count: 8 }),
    ]);
    const empty = (
      await t.http
        .post(`/projects/${projectId}/trend`)
        .set(r.viewer.auth)
        .send({ to: '2000-01-01T00:00:00Z' })
        .expect(200)
    ).body;
    expect(empty).toEqual(expect.objectContaining({ runs: [], series: [], metrics: [] }));
    expectProblem(
      await t.http.post(`/projects/${projectId}/trend`).set(r.viewer.auth).send({ group_by: 'nope' }),
      400,
      'project_dimension_unknown',
    );
    expectProblem(
      await t.http
        .post(`/projects/${projectId}/trend`)
        .set(r.viewer.auth)
        .send({ from: '2030-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' }),
      400,
      'invalid_time_range',
    );
    expectProblem(
      await t.http.post(`/projects/${projectId}/trend`).set(r.viewer.auth).send({ interval: 'year' }),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.post(`/projects/${projectId}/trend`).set(r.outsider.auth).send({}), 403, 'forbidden');
    expectProblem(await t.http.post(`/projects/${randomUUID()}/trend`).set(r.viewer.auth).send({}), 404, 'not_found');
    expectProblem(await t.http.post(`/projects/${projectId}/trend`).send({}), 401);
  });

  it('moves a project to another workspace only for admins of both', async () => {
    const target = await t.factory.newWorkspace(r.admin);
    expectProblem(
      await t.http.post(`/projects/${projectId}/move`).set(r.member.auth).send({ workspace_id: target.id }),
      403,
      'forbidden',
    );
    const foreign = await t.factory.workspaceWithRoles();
    expectProblem(
      await t.http.post(`/projects/${projectId}/move`).set(r.admin.auth).send({ workspace_id: foreign.workspace.id }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.http.post(`/projects/${projectId}/move`).set(r.admin.auth).send({ workspace_id: ws }),
      400,
      'project_move_invalid',
    );
    expectProblem(
      await t.http.post(`/projects/${projectId}/move`).set(r.admin.auth).send({ workspace_id: randomUUID() }),
      404,
      'not_found',
    );
    expectProblem(
      await t.http.post(`/projects/${projectId}/move`).set(r.admin.auth).send({ workspace_id: 'nope' }),
      400,
      'validation_failed',
    );
    const moved = (
      await t.http.post(`/projects/${projectId}/move`).set(r.admin.auth).send({ workspace_id: target.id }).expect(200)
    ).body;
    expect(moved).toEqual(
      expect.objectContaining({
        workspace_id: target.id,
        sut_ids: [],
        dataset_ids: [],
        test_plan: null,
        dimensions: DIMENSIONS,
      }),
    );
    expectProblem(await t.http.get(`/projects/${projectId}`).set(r.viewer.auth), 403, 'forbidden');
    expect((await t.http.get(`/projects/${projectId}`).set(r.admin.auth).expect(200)).body.workspace_id).toBe(
      target.id,
    );
    expectProblem(
      await t.http.post(`/projects/${randomUUID()}/move`).set(r.admin.auth).send({ workspace_id: target.id }),
      404,
      'not_found',
    );
    expectProblem(await t.http.post(`/projects/${projectId}/move`).send({ workspace_id: ws }), 401);
  });
});
