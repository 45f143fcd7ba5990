import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { chatCompletion, FakeUpstream } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import { followLocation } from '../../utils/accepted.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('synthetic data generation', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let llm: FakeUpstream;
  let seed: UploadedDataset;
  let target: UploadedDataset;

  async function finished(adapterId: string, runId: string) {
    for (let i = 0; i < 200; i++) {
      const adapter = (await t.http.get(`/sdg/adapters/${adapterId}`).set(r.viewer.auth).expect(200)).body;
      const run = adapter.recent_runs.find((x: { id: string }) => x.id === runId);
      if (run && ['succeeded', 'failed'].includes(run.state)) return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the SDG run did not finish');
  }

  beforeAll(async () => {
    t = await startTestApp();
    llm = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    seed = await uploadRows(t, r.member.auth, ws, [
      { product: 'Mail', answer: 'Open settings' },
      { product: 'Drive', answer: 'Use the share button' },
    ]);
    target = await uploadRows(
      t,
      r.member.auth,
      ws,
      [{ input: 'existing question', expected_output: 'existing answer' }],
      'target.json',
    );
  });
  afterAll(async () => {
    await llm?.close();
    await t?.close();
  });

  it('expands templates over seed rows and dimension values into a new candidate version, leaving the old one alone', async () => {
    const adapter = await t.http
      .post('/sdg/adapters')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'how-to',
        kind: 'template',
        columns: {
          input: 'How do I {{dim.task}} in {{seed.product}}? (#{{index}})',
          expected_output: '{{seed.answer}}',
        },
        dimensions: { task: ['share a file', 'reset my password'] },
      })
      .expect(201);
    expect(adapter.body).toEqual(
      expect.objectContaining({
        kind: 'template',
        dimensions: { task: ['share a file', 'reset my password'] },
        dimension_columns: true,
        recent_runs: [],
      }),
    );
    const started = await t.http
      .post(`/sdg/adapters/${adapter.body.id}/runs`)
      .set(r.member.auth)
      .send({ target_dataset_id: target.datasetId, seed: { dataset_id: seed.datasetId }, message: 'how-to questions' })
      .expect(202);
    await followLocation(t, started, r.viewer.auth);
    expect(started.body).toEqual(
      expect.objectContaining({ state: 'queued', target_dataset_id: target.datasetId, job_id: expect.any(String) }),
    );
    const run = await finished(adapter.body.id, started.body.id);
    expect(run).toEqual(
      expect.objectContaining({ state: 'succeeded', generated: 4, dropped: 0, version_id: expect.any(String) }),
    );

    const version = (await t.http.get(`/dataset-versions/${run.version_id}`).set(r.viewer.auth).expect(200)).body;
    expect(version).toEqual(
      expect.objectContaining({
        number: 2,
        state: 'candidate',
        source: 'generated',
        message: 'how-to questions',
        row_count: 5,
      }),
    );
    const rows = (
      await t.http
        .post(`/datasets/${target.datasetId}/versions/${run.version_id}/query`)
        .set(r.viewer.auth)
        .send({})
        .expect(200)
    ).body.items;
    expect(rows.map((x: { input: string }) => x.input)).toEqual([
      'existing question',
      'How do I share a file in Mail? (#0)',
      'How do I reset my password in Mail? (#1)',
      'How do I share a file in Drive? (#2)',
      'How do I reset my password in Drive? (#3)',
    ]);
    expect(rows[1]).toEqual(expect.objectContaining({ expected_output: 'Open settings', task: 'share a file' }));
    expect(
      (
        await t.http
          .post(`/datasets/${target.datasetId}/versions/${target.versionId}/query`)
          .set(r.viewer.auth)
          .send({})
          .expect(200)
      ).body.items,
    ).toHaveLength(1);
  });

  it('generates rows with an LLM through a judge connection, dropping rows without the columns asked for', async () => {
    llm.on('POST', '/v1/chat/completions', (req, n) =>
      n === 0
        ? {
            json: chatCompletion(
              JSON.stringify({
                rows: [{ input: 'Paraphrase A', expected_output: 'X' }, { input: 'missing the answer' }],
              }),
            ),
          }
        : { json: chatCompletion('Here you go: {"rows": [{"input": "Paraphrase B", "expected_output": "Y",},]}') },
    );
    const judge = (
      await t.http
        .post('/judges')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'writer',
          provider: 'openai_compatible',
          base_url: llm.url('/v1'),
          model: 'gen',
        })
        .expect(201)
    ).body.id;
    const adapter = (
      await t.http
        .post('/sdg/adapters')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'paraphrase',
          kind: 'llm',
          prompt: 'Write {{dim.n}} paraphrases of a question about {{seed.product}}.',
          output_columns: ['input', 'expected_output'],
          count: 2,
          dimensions: { n: ['two'] },
          dimension_columns: false,
          judge_id: judge,
        })
        .expect(201)
    ).body;
    const started = await t.http
      .post(`/sdg/adapters/${adapter.id}/runs`)
      .set(r.member.auth)
      .send({ target_dataset_id: target.datasetId, seed: { dataset_id: seed.datasetId } })
      .expect(202);
    const run = await finished(adapter.id, started.body.id);
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        generated: 2,
        dropped: 1,
        errors: [expect.stringContaining('lacks expected_output')],
      }),
    );
    const prompt = llm.received('POST', '/v1/chat/completions')[0].body as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(prompt.messages[1].content).toBe('Write two paraphrases of a question about Mail.');
    const version = (await t.http.get(`/dataset-versions/${run.version_id}`).set(r.viewer.auth).expect(200)).body;
    expect(version).toEqual(expect.objectContaining({ number: 3, row_count: 7 }));
  });

  it('fails a run that would exceed max_rows, and answers 400, 401, 403, 404 and 409', async () => {
    const adapter = (
      await t.http.get('/sdg/adapters').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body.items.find((a: { name: string }) => a.name === 'how-to');
    const started = await t.http
      .post(`/sdg/adapters/${adapter.id}/runs`)
      .set(r.member.auth)
      .send({ target_dataset_id: target.datasetId, seed: { dataset_id: seed.datasetId }, max_rows: 3 })
      .expect(202);
    expect(await finished(adapter.id, started.body.id)).toEqual(
      expect.objectContaining({
        state: 'failed',
        state_reason: expect.stringContaining('over max_rows 3'),
        version_id: null,
      }),
    );

    const create = (body: Record<string, unknown>, auth = r.member.auth) =>
      t.http
        .post('/sdg/adapters')
        .set(auth)
        .send({ workspace_id: ws, name: 'x', ...body });
    expectProblem(
      await create({ kind: 'template', columns: { input: '{{seed.a}} {{dim.nope}}' } }),
      400,
      'sdg_adapter_invalid',
    );
    expectProblem(await create({ kind: 'template', columns: { input: '{{whatever}}' } }), 400, 'sdg_adapter_invalid');
    expectProblem(await create({ kind: 'template' }), 400, 'sdg_adapter_invalid');
    expectProblem(
      await create({ kind: 'llm', prompt: 'Write rows', output_columns: ['input'] }),
      400,
      'sdg_adapter_invalid',
    );
    expectProblem(
      await create({ kind: 'llm', prompt: 'Write rows', output_columns: ['input'], judge_id: randomUUID() }),
      400,
      'sdg_adapter_invalid',
    );
    expectProblem(
      await create({ kind: 'template', columns: { input: 'a' }, dimensions: { d: [] } }),
      400,
      'sdg_adapter_invalid',
    );
    expectProblem(await create({ kind: 'mixed' }), 400, 'validation_failed');
    expectProblem(
      await create({ name: 'HOW-TO', kind: 'template', columns: { input: 'a' } }),
      409,
      'sdg_adapter_name_taken',
    );
    expectProblem(
      await t.http
        .post(`/sdg/adapters/${adapter.id}/runs`)
        .set(r.member.auth)
        .send({ target_dataset_id: randomUUID() }),
      400,
      'sdg_input_invalid',
    );
    expectProblem(
      await t.http
        .post(`/sdg/adapters/${adapter.id}/runs`)
        .set(r.member.auth)
        .send({ target_dataset_id: target.datasetId, max_rows: 0 }),
      400,
      'validation_failed',
    );
    expectProblem(await create({ kind: 'template', columns: { input: 'a' } }, r.viewer.auth), 403);
    expectProblem(
      await t.http
        .post(`/sdg/adapters/${adapter.id}/runs`)
        .set(r.viewer.auth)
        .send({ target_dataset_id: target.datasetId }),
      403,
    );
    expectProblem(await t.http.get(`/sdg/adapters/${adapter.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get('/sdg/adapters').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.get(`/sdg/adapters/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(
      await t.http
        .post(`/sdg/adapters/${randomUUID()}/runs`)
        .set(r.member.auth)
        .send({ target_dataset_id: target.datasetId }),
      404,
    );
  });
});
