import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { agentTrace, otlpJson, recordTraces } from '../../utils/otel-traces.js';

const DAY = 24 * 3600_000;

describe('trace retention', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    key = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'exporter', role: 'member' })
        .expect(201)
    ).body.key;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Exports traces that started `daysAgo` days ago into `dataset`, and waits for them to land. */
  const exportAged = async (
    dataset: string,
    daysAgo: number[],
    session: string,
  ): Promise<{ datasetId: string; versionId: string }> => {
    const traces = daysAgo.map((d, i) => ({
      plan: agentTrace(`${session}-${i}`, `question ${i}`),
      at: Date.now() - d * DAY,
    }));
    for (const { plan, at } of traces)
      await t.http
        .post('/v1/traces')
        .set({ Authorization: `Bearer ${key}`, 'x-ews-dataset': dataset })
        .send(otlpJson(recordTraces([plan], at)))
        .expect(200);
    const listed = await t.http.get('/datasets').query({ workspace_id: ws, q: dataset }).set(r.member.auth).expect(200);
    const datasetId = listed.body.items.find((d: { name: string }) => d.name === dataset).id as string;
    for (let i = 0; i < 300; i++) {
      const live = (await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth).expect(200)).body;
      if (live.pending_spans === 0 && live.head_spans === traces.length * 5)
        return { datasetId, versionId: live.head_version_id };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('spans did not land');
  };
  const total = async (datasetId: string, versionId: string) =>
    (
      await t.http
        .post(`/datasets/${datasetId}/query`)
        .set(r.member.auth)
        .send({ version_id: versionId, limit: 1, include_total: true })
        .expect(200)
    ).body.total as number;

  it("deletes spans older than the dataset's retention from every version, keeps the rest, and records it", async () => {
    const { datasetId, versionId } = await exportAged('retained', [40, 20, 1], 'r');
    expect(await total(datasetId, versionId)).toBe(15);
    // Settings: the workspace keeps 30 days, this dataset overrides it with 10.
    expect(
      (await t.http.put(`/workspaces/${ws}/trace-retention`).set(r.admin.auth).send({ retention_days: 30 }).expect(200))
        .body,
    ).toEqual({ workspace_id: ws, retention_days: 30, datasets: [] });
    expect((await t.http.get(`/traces/datasets/${datasetId}/retention`).set(r.viewer.auth).expect(200)).body).toEqual({
      dataset_id: datasetId,
      retention_days: null,
      inherited: true,
      effective_retention_days: 30,
    });
    expect(
      (
        await t.http
          .put(`/traces/datasets/${datasetId}/retention`)
          .set(r.admin.auth)
          .send({ retention_days: 10 })
          .expect(200)
      ).body,
    ).toEqual({ dataset_id: datasetId, retention_days: 10, inherited: false, effective_retention_days: 10 });
    await t.http
      .put(`/traces/datasets/${datasetId}/retention`)
      .set(r.member.auth)
      .send({ retention_days: 1 })
      .expect(403);
    expectProblem(
      await t.http.put(`/workspaces/${ws}/trace-retention`).set(r.admin.auth).send({ retention_days: 0 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.put(`/workspaces/${ws}/trace-retention`).set(r.admin.auth).send({}),
      400,
      'validation_failed',
    );

    const swept = (await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(r.admin.auth).expect(200)).body;
    expect(swept.datasets).toEqual([
      expect.objectContaining({ dataset_id: datasetId, retention_days: 10, spans_deleted: 10, versions_updated: 1 }),
    ]);
    expect(await total(datasetId, versionId)).toBe(5);
    const version = (await t.http.get(`/dataset-versions/${versionId}`).set(r.member.auth).expect(200)).body;
    expect(version.row_count).toBe(5);
    const audit = (await t.http.get(`/datasets/${datasetId}/audit`).set(r.member.auth).expect(200)).body as Array<{
      action: string;
      details: Record<string, unknown>;
    }>;
    expect(audit.find((e) => e.action === 'trace_retention.swept')?.details).toEqual(
      expect.objectContaining({ retention_days: 10, spans_deleted: 10 }),
    );
    // A second sweep finds nothing more.
    expect(
      (await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(r.admin.auth).expect(200)).body.datasets,
    ).toEqual([]);

    // Inheriting again applies the workspace's 30 days; null on the dataset keeps its spans forever.
    await t.http.delete(`/traces/datasets/${datasetId}/retention`).set(r.admin.auth).expect(204);
    expect(
      (await t.http.get(`/traces/datasets/${datasetId}/retention`).set(r.member.auth).expect(200)).body
        .effective_retention_days,
    ).toBe(30);
    const forever = await exportAged('forever', [400], 'f');
    await t.http
      .put(`/traces/datasets/${forever.datasetId}/retention`)
      .set(r.admin.auth)
      .send({ retention_days: null })
      .expect(200);
    expect(
      (await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(r.admin.auth).expect(200)).body.datasets,
    ).toEqual([]);
    expect(await total(forever.datasetId, forever.versionId)).toBe(5);
  });

  it("touches no other workspace's data", async () => {
    const other = await t.factory.workspaceWithRoles();
    await t.http
      .put(`/workspaces/${other.workspace.id}/trace-retention`)
      .set(other.admin.auth)
      .send({ retention_days: 1 })
      .expect(200);
    const mine = await exportAged('mine', [5], 'm');
    const swept = (
      await t.http.post(`/workspaces/${other.workspace.id}/trace-retention:sweep`).set(other.admin.auth).expect(200)
    ).body;
    expect(swept.datasets).toEqual([]);
    expect(await total(mine.datasetId, mine.versionId)).toBe(5);
    await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(other.admin.auth).expect(403);
  });
});
