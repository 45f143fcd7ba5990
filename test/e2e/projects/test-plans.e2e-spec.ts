import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/** Test plans (versioned, attached to projects) and test-package recommendations (built-in and a workspace's own). */
describe('test plans and test packages', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let data: UploadedDataset;
  let projectId: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    data = await uploadRows(t, r.member.auth, ws, [
      { question: 'q1', answer: 'a' },
      { question: 'q2', answer: 'b' },
    ]);
    await t.http
      .post(`/datasets/${data.datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension: 'topic', value: 'billing', row_ids: data.rowIds })
      .expect(201);
    const dimensions = [
      { name: 'topic', description: 'What it is about', values: [{ value: 'billing', description: 'b' }] },
    ];
    projectId = (
      await t.http
        .post('/projects')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'Support', dimensions, dataset_ids: [data.datasetId] })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('versions test plans by id or name and attaches, replaces and detaches them', async () => {
    const body = {
      workspace_id: ws,
      name: 'release-gate',
      datasets: [{ dataset_id: data.datasetId }],
      metrics: [
        {
          name: 'exact_match',
          threshold: { operator: '>=', value: 0.7 },
          per_dimension: [{ dimension: 'topic', value: 'billing', threshold: { operator: '>=', value: 0.8 } }],
        },
      ],
    };
    const plan = (await t.http.post('/test-plans').set(r.member.auth).send(body).expect(201)).body;
    expect(plan).toEqual(
      expect.objectContaining({
        name: 'release-gate',
        version: 1,
        latest_version: 1,
        release_rule: {
          mode: 'all_metrics',
          min_metrics_passing: null,
          include_dimension_thresholds: true,
          min_row_pass_rate: null,
        },
      }),
    );
    expect(plan.metrics[0]).toEqual(
      expect.objectContaining({ gating: true, per_dimension: [expect.objectContaining({ dimension: 'topic' })] }),
    );
    expectProblem(await t.http.post('/test-plans').set(r.member.auth).send(body), 409, 'test_plan_name_taken');
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', datasets: [{ dataset_id: randomUUID() }] }),
      400,
      'unknown_dataset',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', datasets: [{ dataset_id: data.datasetId, version_id: randomUUID() }] }),
      400,
      'unknown_dataset',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', datasets: [{ dataset_id: data.datasetId, partition_id: randomUUID() }] }),
      400,
      'unknown_dataset',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', metrics: [body.metrics[0], body.metrics[0]] }),
      400,
      'test_plan_invalid',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', release_rule: { mode: 'min_metrics_passing', min_metrics_passing: 3 } }),
      400,
      'test_plan_invalid',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({ ...body, name: 'p2', metrics: [] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/test-plans')
        .set(r.viewer.auth)
        .send({ ...body, name: 'p2' }),
      403,
      'forbidden',
    );

    const v2 = (
      await t.http
        .post('/test-plans/Release-Gate/versions')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send({ message: 'stricter', metrics: [{ name: 'exact_match', threshold: { operator: '>=', value: 0.9 } }] })
        .expect(201)
    ).body;
    expect(v2).toEqual(
      expect.objectContaining({
        id: plan.id,
        version: 2,
        latest_version: 2,
        message: 'stricter',
        datasets: plan.datasets,
      }),
    );
    expect(v2.metrics[0].threshold.value).toBe(0.9);
    const byId = (await t.http.get(`/test-plans/${plan.id}`).query({ workspace_id: ws }).set(r.viewer.auth).expect(200))
      .body;
    expect(byId).toEqual(expect.objectContaining({ version: 2, is_latest: true, projects: [] }));
    const v1 = (
      await t.http.get('/test-plans/release-gate/versions/1').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body;
    expect(v1).toEqual(expect.objectContaining({ version: 1, is_latest: false }));
    expect(v1.metrics[0].threshold.value).toBe(0.7);
    const versions = (
      await t.http.get('/test-plans/release-gate/versions').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body;
    expect(versions).toEqual(expect.objectContaining({ test_plan_id: plan.id, total: 2, latest_version: 2 }));
    expect(versions.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const list = (await t.http.get('/test-plans').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body;
    expect(list.items).toEqual([
      expect.objectContaining({ id: plan.id, latest_version: 2, metric_count: 1, dataset_count: 1, project_count: 0 }),
    ]);
    // A version and a partition of the dataset are asked of the datasets family, and pass.
    const partition = (
      await t.http
        .post(`/datasets/${data.datasetId}/versions/${data.versionId}/partitions`)
        .set(r.member.auth)
        .send({ name: 'billing only', dimension_values: { topic: ['billing'] } })
        .expect(201)
    ).body;
    const pinned = (
      await t.http
        .post('/test-plans')
        .set(r.member.auth)
        .send({
          ...body,
          name: 'pinned',
          datasets: [{ dataset_id: data.datasetId, version_id: data.versionId, partition_id: partition.id }],
        })
        .expect(201)
    ).body;
    expect(pinned.datasets).toEqual([
      { dataset_id: data.datasetId, version_id: data.versionId, partition_id: partition.id },
    ]);
    expectProblem(
      await t.http
        .get('/test-plans/release-gate/versions')
        .query({ workspace_id: ws, page_size: 0 })
        .set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.get('/test-plans/release-gate/versions').set(r.viewer.auth), 400, 'validation_failed');
    expectProblem(
      await t.http.get('/test-plans/release-gate/versions/zero').query({ workspace_id: ws }).set(r.viewer.auth),
      400,
      'invalid_test_plan_version',
    );
    expectProblem(
      await t.http.get('/test-plans/release-gate/versions/9').query({ workspace_id: ws }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expectProblem(
      await t.http.get('/test-plans/nope').query({ workspace_id: ws }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expectProblem(
      await t.http.get('/test-plans/release-gate').query({ workspace_id: ws }).set(r.outsider.auth),
      403,
      'forbidden',
    );
    expectProblem(await t.http.get('/test-plans/release-gate').query({ workspace_id: ws }), 401);

    const attached = (
      await t.http
        .post(`/projects/${projectId}/test-plan`)
        .set(r.member.auth)
        .send({ test_plan: 'release-gate', version: 1 })
        .expect(200)
    ).body;
    expect(attached).toEqual(
      expect.objectContaining({
        changed: ['test_plan'],
        test_plan: { id: plan.id, name: 'release-gate', version: 1, latest_version: 2 },
      }),
    );
    expectProblem(
      await t.http.post(`/projects/${projectId}/test-plan`).set(r.member.auth).send({ test_plan: 'release-gate' }),
      409,
      'project_test_plan_attached',
    );
    const replaced = (
      await t.http.put(`/projects/${projectId}/test-plan`).set(r.member.auth).send({ test_plan: plan.id }).expect(200)
    ).body;
    expect(replaced.test_plan).toEqual(expect.objectContaining({ version: 2 }));
    expectProblem(
      await t.http.put(`/projects/${projectId}/test-plan`).set(r.member.auth).send({ test_plan: 'missing-plan' }),
      400,
      'unknown_test_plan',
    );
    expectProblem(
      await t.http
        .put(`/projects/${projectId}/test-plan`)
        .set(r.member.auth)
        .send({ test_plan: 'release-gate', version: 7 }),
      400,
      'unknown_test_plan',
    );
    expectProblem(
      await t.http.put(`/projects/${projectId}/test-plan`).set(r.viewer.auth).send({ test_plan: 'release-gate' }),
      403,
      'forbidden',
    );
    expect(
      (await t.http.get(`/test-plans/${plan.id}`).query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body
        .projects,
    ).toEqual([{ id: projectId, name: 'Support', version: 2 }]);
    const detached = (await t.http.delete(`/projects/${projectId}/test-plan`).set(r.member.auth).expect(200)).body;
    expect(detached.test_plan).toBeNull();
    expect(
      (await t.http.delete(`/projects/${projectId}/test-plan`).set(r.member.auth).expect(200)).body.test_plan,
    ).toBeNull();
    expectProblem(await t.http.delete(`/projects/${randomUUID()}/test-plan`).set(r.member.auth), 404, 'not_found');
    expectProblem(await t.http.delete(`/projects/${projectId}/test-plan`), 401);
  });

  it("serves built-in recommendations read-only and a workspace's own with CRUD", async () => {
    const list = (
      await t.http.get('/test-packages/recommendations').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body;
    const rag = list.find((x: { id: string }) => x.id === 'builtin-rag-question-answering');
    const template = (await t.http.get('/templates/rag-question-answering').set(r.viewer.auth).expect(200)).body;
    expect(rag).toEqual(
      expect.objectContaining({
        builtin: true,
        workspace_id: null,
        use_case: 'rag_qa',
        template: 'rag-question-answering',
        dimensions: template.dimensions.map((d: { name: string }) => d.name),
      }),
    );
    expect(rag.metrics.map((m: { name: string }) => m.name)).toEqual(
      template.suggested_metrics.map((m: { name: string }) => m.name),
    );
    expect(rag.checks.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining(['exact_duplicates', 'empty_fields']),
    );
    expect(
      (
        await t.http
          .get('/test-packages/recommendations/builtin-rag-question-answering')
          .query({ workspace_id: ws })
          .set(r.viewer.auth)
          .expect(200)
      ).body,
    ).toEqual(rag);

    const body = {
      workspace_id: ws,
      name: 'Our RAG package',
      use_case: 'rag_qa',
      metrics: [{ name: 'exact_match', kind: 'deterministic', threshold: { operator: '>=', value: 0.8 } }],
      checks: ['pii'],
      dimensions: ['topic'],
    };
    const own = (await t.http.post('/test-packages/recommendations').set(r.member.auth).send(body).expect(201)).body;
    expect(own).toEqual(
      expect.objectContaining({
        builtin: false,
        workspace_id: ws,
        checks: [{ id: 'pii', reason: expect.any(String) }],
      }),
    );
    expectProblem(
      await t.http.post('/test-packages/recommendations').set(r.member.auth).send(body),
      409,
      'recommendation_name_taken',
    );
    expectProblem(
      await t.http
        .post('/test-packages/recommendations')
        .set(r.member.auth)
        .send({ ...body, name: 'x', checks: ['nope'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/test-packages/recommendations')
        .set(r.viewer.auth)
        .send({ ...body, name: 'x' }),
      403,
      'forbidden',
    );
    const onlyRag = (
      await t.http
        .get('/test-packages/recommendations')
        .query({ workspace_id: ws, use_case: 'rag_qa', source: 'workspace' })
        .set(r.viewer.auth)
        .expect(200)
    ).body;
    expect(onlyRag.map((x: { id: string }) => x.id)).toEqual([own.id]);

    const { workspace_id: _ignored, ...definition } = body;
    const replaced = (
      await t.http
        .put(`/test-packages/recommendations/${own.id}`)
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send({ ...definition, description: 'v2', checks: [] })
        .expect(200)
    ).body;
    expect(replaced).toEqual(expect.objectContaining({ description: 'v2', checks: [] }));
    expectProblem(
      await t.http
        .put('/test-packages/recommendations/builtin-rag-question-answering')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send(definition),
      403,
      'builtin_recommendation_read_only',
    );
    expectProblem(
      await t.http
        .delete('/test-packages/recommendations/builtin-rag-question-answering')
        .query({ workspace_id: ws })
        .set(r.member.auth),
      403,
      'builtin_recommendation_read_only',
    );
    expectProblem(
      await t.http.get(`/test-packages/recommendations/${randomUUID()}`).query({ workspace_id: ws }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expectProblem(
      await t.http.get(`/test-packages/recommendations/${own.id}`).query({ workspace_id: ws }).set(r.outsider.auth),
      403,
      'forbidden',
    );
    expectProblem(
      await t.http.delete(`/test-packages/recommendations/${own.id}`).query({ workspace_id: ws }).set(r.viewer.auth),
      403,
      'forbidden',
    );
    expectProblem(await t.http.get('/test-packages/recommendations').query({ workspace_id: ws }), 401);
    await t.http
      .delete(`/test-packages/recommendations/${own.id}`)
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .expect(204);
    expectProblem(
      await t.http.get(`/test-packages/recommendations/${own.id}`).query({ workspace_id: ws }).set(r.viewer.auth),
      404,
      'not_found',
    );
  });
});
