import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { MetricConfigsService } from '#src/modules/catalogues/metrics/metric-configs.service.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';

describe('metric configs, workspace defaults and resolution', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let judgeId: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    judgeId = (
      await t.http
        .post('/judges')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'grader',
          provider: 'openai_compatible',
          base_url: 'http://127.0.0.1:9/v1',
          model: 'm',
        })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => t?.close());

  const create = (body: Record<string, unknown>, auth = r.member.auth) =>
    t.http
      .post('/metric-configs')
      .set(auth)
      .send({ workspace_id: ws, ...body });
  const version = (name: string, v: string | number) =>
    t.http.get(`/metric-configs/${name}/${v}`).query({ workspace_id: ws }).set(r.viewer.auth);

  it('creates deterministic and judged configs, checking parameters against the metric schema', async () => {
    const strict = await create({
      name: 'strict-match',
      kind: 'deterministic',
      metric: 'exact_match',
      params: { case_sensitive: true },
      threshold: 1,
      description: 'Byte-exact',
    }).expect(201);
    expect(strict.body).toEqual(
      expect.objectContaining({
        name: 'strict-match',
        version: 1,
        kind: 'deterministic',
        metric: 'exact_match',
        params: { case_sensitive: true },
        threshold: 1,
        judged: null,
        frozen: false,
        is_latest: true,
      }),
    );
    const judged = await create({
      name: 'faithful',
      kind: 'judged',
      metric: 'faithfulness',
      judged: { judge_id: judgeId },
    }).expect(201);
    expect(judged.body.judged).toEqual(
      expect.objectContaining({
        rubric: expect.stringContaining('{{context}}'),
        scale: { type: 'numeric', min: 1, max: 5 },
        pass_threshold: 0.75,
        pass_labels: null,
        judge_id: judgeId,
      }),
    );
    const labels = await create({
      name: 'tone',
      kind: 'judged',
      metric: 'llm_judge',
      judged: {
        rubric: 'Is the tone of {{output}} polite?',
        scale: { type: 'labels', labels: ['polite', 'neutral', 'rude'] },
        pass_labels: ['polite', 'neutral'],
      },
    }).expect(201);
    expect(labels.body.judged).toEqual(expect.objectContaining({ pass_labels: ['polite', 'neutral'], judge_id: null }));

    expectProblem(await create({ name: 'x', kind: 'deterministic', metric: 'meteor' }), 400, 'unknown_metric');
    expectProblem(await create({ name: 'x', kind: 'statistical', metric: 'bleu' }), 400, 'validation_failed');
    const badParams = await create({
      name: 'x',
      kind: 'deterministic',
      metric: 'regex',
      params: { pattern: '(unclosed' },
    });
    expectProblem(badParams, 400, 'metric_params_invalid');
    expect(badParams.body.errors).toEqual([expect.objectContaining({ field: 'params.pattern' })]);
    expectProblem(
      await create({ name: 'x', kind: 'deterministic', metric: 'bleu', params: { max_n: 'four' } }),
      400,
      'metric_params_invalid',
    );
    expectProblem(
      await create({ name: 'x', kind: 'deterministic', metric: 'regex', params: {} }),
      400,
      'metric_params_invalid',
    );
    expectProblem(await create({ name: 'x', kind: 'judged', metric: 'llm_judge' }), 400, 'rubric_invalid');
    expectProblem(
      await create({ name: 'x', kind: 'judged', metric: 'llm_judge', judged: { rubric: 'Rate {{answer}}' } }),
      400,
      'rubric_invalid',
    );
    expectProblem(
      await create({ name: 'x', kind: 'judged', metric: 'correctness', judged: { judge_id: randomUUID() } }),
      400,
      'unknown_judge',
    );
    expectProblem(
      await create({
        name: 'x',
        kind: 'judged',
        metric: 'llm_judge',
        judged: { rubric: 'Rate {{output}}', scale: { type: 'labels', labels: ['a', 'b'] }, pass_labels: ['c'] },
      }),
      400,
      'scale_invalid',
    );
    expectProblem(await create({ name: 'x', kind: 'custom', metric: 'toxicity' }), 400, 'unknown_metric');
    expectProblem(
      await create({ name: 'STRICT-MATCH', kind: 'deterministic', metric: 'contains' }),
      409,
      'metric_config_name_taken',
    );
  });

  it("lists the workspace's configs in its metric catalogue beside the built-ins", async () => {
    const res = await t.http.get(`/workspaces/${ws}/metrics`).set(r.viewer.auth).expect(200);
    const by = Object.fromEntries(res.body.metrics.map((m: { name: string }) => [m.name, m]));
    expect(by.bleu).toEqual(expect.objectContaining({ source: 'builtin', latest_version: null, available: true }));
    expect(by['strict-match']).toEqual(
      expect.objectContaining({
        source: 'metric_config',
        kind: 'deterministic',
        requires: ['expected_output'],
        better: 'higher',
        latest_version: 1,
        description: 'Byte-exact',
      }),
    );
    expect(by.faithful).toEqual(
      expect.objectContaining({ source: 'metric_config', kind: 'judged', requires: ['context'], better: null }),
    );
    expect(by.tone).toEqual(expect.objectContaining({ kind: 'judged', requires: [] }));
  });

  it('adds versions copying what is left out, freezes a version once a run used it, and refuses deleting what is pinned', async () => {
    const v2 = await t.http
      .post(`/workspaces/${ws}/metric-configs/strict-match/versions`)
      .set(r.member.auth)
      .send({ threshold: 0.5 })
      .expect(201);
    expect(v2.body).toEqual(
      expect.objectContaining({
        version: 2,
        params: { case_sensitive: true },
        threshold: 0.5,
        description: 'Byte-exact',
        is_latest: true,
      }),
    );
    expect((await version('strict-match', 1).expect(200)).body.is_latest).toBe(false);
    expect((await version('STRICT-MATCH', 'latest').expect(200)).body.version).toBe(2);
    const fromV1 = await t.http
      .post(`/workspaces/${ws}/metric-configs/strict-match/versions`)
      .set(r.member.auth)
      .send({ from_version: 1, params: { case_sensitive: false } })
      .expect(201);
    expect(fromV1.body).toEqual(
      expect.objectContaining({ version: 3, threshold: 1, params: { case_sensitive: false } }),
    );

    const edited = await t.http
      .put('/metric-configs/strict-match/3')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .send({ description: 'Case-folded' })
      .expect(200);
    expect(edited.body).toEqual(
      expect.objectContaining({ version: 3, description: 'Case-folded', params: { case_sensitive: false } }),
    );

    // A run starting with v1 freezes it (runs call this; issue 6 wires it to POST /runs).
    const runId = randomUUID();
    const v1 = (await version('strict-match', 1).expect(200)).body.id as string;
    await t.app.get(TransactionRunner).run(() => t.app.get(MetricConfigsService).markUsed([v1], runId));
    const frozen = await version('strict-match', 1).expect(200);
    expect(frozen.body).toEqual(expect.objectContaining({ frozen: true, first_used_by_run: runId }));
    expectProblem(
      await t.http
        .put('/metric-configs/strict-match/1')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send({ threshold: 0.1 }),
      409,
      'metric_config_frozen',
    );
    expectProblem(
      await t.http.delete('/metric-configs/strict-match/1').query({ workspace_id: ws }).set(r.member.auth),
      409,
      'metric_config_frozen',
    );

    const summaries = await t.http.get('/metric-configs').query({ workspace_id: ws }).set(r.viewer.auth).expect(200);
    expect(summaries.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'strict-match',
          latest_version: 3,
          version_count: 3,
          frozen_versions: [1],
          description: 'Case-folded',
        }),
      ]),
    );
    expect(
      (
        await t.http.get('/metric-configs').query({ workspace_id: ws, kind: 'judged' }).set(r.viewer.auth).expect(200)
      ).body.items.map((s: { name: string }) => s.name),
    ).toEqual(['faithful', 'tone']);

    await t.http
      .post(`/workspaces/${ws}/metric-config-defaults`)
      .set(r.admin.auth)
      .send({
        defaults: [{ metric_name: 'exact_match', config_name: 'strict-match', config_version: 3, note: 'fold case' }],
      })
      .expect(201);
    expectProblem(
      await t.http.delete('/metric-configs/strict-match/3').query({ workspace_id: ws }).set(r.member.auth),
      409,
      'metric_config_in_use',
    );
    await t.http.delete('/metric-configs/strict-match/2').query({ workspace_id: ws }).set(r.member.auth).expect(204);
    expectProblem(await version('strict-match', 2), 404);
  });

  it('pins workspace defaults with their history and resolves what is in force, and why', async () => {
    const set = await t.http
      .post(`/workspaces/${ws}/metric-config-defaults/`)
      .set(r.admin.auth)
      .send({
        defaults: [
          { metric_name: 'exact_match', config_name: 'strict-match', config_version: null },
          { metric_name: 'faithfulness', config_name: 'faithful' },
        ],
      })
      .expect(201);
    expect(set.body.items).toEqual([
      expect.objectContaining({
        metric_name: 'exact_match',
        config_name: 'strict-match',
        config_version: null,
        revision: 2,
      }),
      expect.objectContaining({
        metric_name: 'faithfulness',
        config_name: 'faithful',
        config_version: null,
        revision: 1,
        set_by: r.admin.id,
      }),
    ]);
    const history = await t.http
      .get(`/workspaces/${ws}/metric-config-defaults/exact_match/versions/`)
      .set(r.viewer.auth)
      .expect(200);
    expect(
      history.body.items.map((h: { revision: number; config_version: number | null; note: string }) => [
        h.revision,
        h.config_version,
        h.note,
      ]),
    ).toEqual([
      [2, null, ''],
      [1, 3, 'fold case'],
    ]);
    expect(
      (await t.http.get(`/workspaces/${ws}/metric-config-defaults/bleu/versions`).set(r.viewer.auth).expect(200)).body
        .items,
    ).toEqual([]);

    const resolved = await t.http.get(`/workspaces/${ws}/metric-configs/resolved`).set(r.viewer.auth).expect(200);
    const by = (name: string) => resolved.body.items.find((i: { metric_name: string }) => i.metric_name === name);
    expect(by('exact_match')).toEqual(
      expect.objectContaining({
        source: 'workspace_default',
        config_name: 'strict-match',
        config_version: 3,
        reason: expect.stringContaining('follows the newest version'),
      }),
    );
    expect(by('tone')).toEqual(
      expect.objectContaining({ source: 'latest_version', config_version: 1, kind: 'judged' }),
    );
    expect(by('bleu')).toEqual(
      expect.objectContaining({ source: 'builtin', config_name: null, kind: 'deterministic', params: {} }),
    );
    expect(by('faithfulness')).toEqual(
      expect.objectContaining({ source: 'workspace_default', config_name: 'faithful' }),
    );

    // Clearing a pin goes back to the built-in metric.
    await t.http
      .post(`/workspaces/${ws}/metric-config-defaults`)
      .set(r.admin.auth)
      .send({ defaults: [{ metric_name: 'faithfulness', config_name: null }] })
      .expect(201);
    expect(
      (
        await t.http
          .get(`/workspaces/${ws}/metric-configs/resolved`)
          .query({ metric: 'faithfulness' })
          .set(r.viewer.auth)
          .expect(200)
      ).body.items,
    ).toEqual([expect.objectContaining({ source: 'builtin', kind: 'judged' })]);

    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/metric-config-defaults`)
        .set(r.admin.auth)
        .send({ defaults: [{ metric_name: 'bleu', config_name: 'strict-match' }] }),
      400,
      'metric_default_invalid',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/metric-config-defaults`)
        .set(r.admin.auth)
        .send({ defaults: [{ metric_name: 'exact_match', config_name: 'strict-match', config_version: 9 }] }),
      400,
      'metric_default_invalid',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/metric-config-defaults`)
        .set(r.admin.auth)
        .send({ defaults: [{ metric_name: 'meteor', config_name: null }] }),
      400,
      'unknown_metric',
    );
    expectProblem(
      await t.http.post(`/workspaces/${ws}/metric-config-defaults`).set(r.admin.auth).send({ defaults: [] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/metric-config-defaults`)
        .set(r.member.auth)
        .send({ defaults: [{ metric_name: 'bleu', config_name: null }] }),
      403,
    );
    expectProblem(await t.http.get(`/workspaces/${ws}/metric-config-defaults/meteor/versions`).set(r.viewer.auth), 404);
    expectProblem(
      await t.http.get(`/workspaces/${ws}/metric-configs/resolved`).query({ metric: 'meteor' }).set(r.viewer.auth),
      404,
    );
    expectProblem(await t.http.get(`/workspaces/${ws}/metric-config-defaults`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/workspaces/${ws}/metric-configs/resolved`), 401);
  });

  it('bundles metrics, a default judge and a pass rule in eval configs, resolved per eval config', async () => {
    const evalBody = {
      workspace_id: ws,
      name: 'release-gate',
      metrics: [
        { config_name: 'strict-match', config_version: 3, min_pass_rate: 0.9 },
        { config_name: 'tone', gating: false },
        { config_name: 'correctness' },
      ],
      default_judge_id: judgeId,
      pass_rule: { min_pass_rate: 0.8 },
    };
    const created = await t.http.post('/eval-configs').set(r.member.auth).send(evalBody).expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        name: 'release-gate',
        default_judge_id: judgeId,
        pass_rule: { row: 'all', min_pass_rate: 0.8, errors_fail: true },
        metrics: [
          { config_name: 'strict-match', config_version: 3, threshold: null, min_pass_rate: 0.9, gating: true },
          { config_name: 'tone', config_version: null, threshold: null, min_pass_rate: null, gating: false },
          { config_name: 'correctness', config_version: null, threshold: null, min_pass_rate: null, gating: true },
        ],
      }),
    );
    const resolved = await t.http
      .get(`/workspaces/${ws}/metric-configs/resolved`)
      .query({ eval_config_id: created.body.id })
      .set(r.viewer.auth)
      .expect(200);
    const strict = resolved.body.items.find((i: { metric_name: string }) => i.metric_name === 'strict-match');
    expect(strict).toEqual(
      expect.objectContaining({
        source: 'eval_config',
        config_version: 3,
        reason: 'eval config release-gate pins strict-match v3',
      }),
    );
    expect(resolved.body.eval_config_id).toBe(created.body.id);

    const read = await t.http.get(`/eval-configs/${created.body.id}`).set(r.viewer.auth).expect(200);
    const { workspace_id: _ws, ...replacement } = evalBody;
    const replaced = await t.http
      .put(`/eval-configs/${created.body.id}`)
      .set(r.member.auth)
      .set('If-Match', read.headers.etag as string)
      .send({ ...replacement, pass_rule: { row: 'any' } })
      .expect(200);
    expect(replaced.body.pass_rule).toEqual({ row: 'any', min_pass_rate: 1, errors_fail: true });
    expectProblem(
      await t.http
        .put(`/eval-configs/${created.body.id}`)
        .set(r.member.auth)
        .set('If-Match', read.headers.etag as string)
        .send(replacement),
      412,
      'precondition_failed',
    );
    expect(
      (await t.http.get('/eval-configs').query({ workspace_id: ws, q: 'gate' }).set(r.viewer.auth).expect(200)).body
        .total,
    ).toBe(1);
    expectProblem(await t.http.delete(`/judges/${judgeId}`).set(r.admin.auth), 409, 'judge_in_use');

    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', default_judge_id: null }),
      400,
      'judge_required',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', metrics: [{ config_name: 'nope' }] }),
      400,
      'eval_config_invalid',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', metrics: [{ config_name: 'strict-match', config_version: 2 }] }),
      400,
      'eval_config_invalid',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', metrics: [{ config_name: 'tone' }, { config_name: 'TONE' }] }),
      400,
      'eval_config_invalid',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', metrics: [] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'x', default_judge_id: randomUUID() }),
      400,
      'unknown_judge',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({ ...evalBody, name: 'RELEASE-GATE' }),
      409,
      'eval_config_name_taken',
    );
    expectProblem(
      await t.http.delete('/metric-configs/strict-match/3').query({ workspace_id: ws }).set(r.member.auth),
      409,
      'metric_config_in_use',
    );
    expectProblem(
      await t.http
        .post('/eval-configs')
        .set(r.viewer.auth)
        .send({ ...evalBody, name: 'x' }),
      403,
    );
    expectProblem(await t.http.get(`/eval-configs/${created.body.id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/eval-configs/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/eval-configs').query({ workspace_id: ws }), 401);
    await t.http.delete(`/eval-configs/${created.body.id}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.get(`/eval-configs/${created.body.id}`).set(r.viewer.auth), 404);
  });

  it('answers 400, 401, 403 and 404 on metric configs', async () => {
    expectProblem(await version('strict-match', 'one'), 400, 'invalid_config_version');
    expectProblem(await version('nope', 1), 404);
    expectProblem(await t.http.get('/metric-configs/strict-match/1').set(r.viewer.auth), 400, 'validation_failed');
    expectProblem(await t.http.get('/metric-configs').query({ workspace_id: ws }), 401);
    expectProblem(await t.http.get('/metric-configs').query({ workspace_id: ws }).set(r.outsider.auth), 403);
    expectProblem(await create({ name: 'y', kind: 'deterministic', metric: 'bleu' }, r.viewer.auth), 403);
    expectProblem(
      await t.http.put('/metric-configs/tone/1').query({ workspace_id: ws }).set(r.viewer.auth).send({}),
      403,
    );
    expectProblem(await t.http.post(`/workspaces/${ws}/metric-configs/nope/versions`).set(r.member.auth).send({}), 404);
    expectProblem(
      await t.http.post(`/workspaces/${ws}/metric-configs/tone/versions`).set(r.member.auth).send({ from_version: 7 }),
      404,
    );
    expectProblem(
      await t.http
        .post(`/workspaces/${ws}/metric-configs/tone/versions`)
        .set(r.member.auth)
        .send({ judged: { pass_threshold: 0.5 } }),
      400,
      'scale_invalid',
    );
    expectProblem(await t.http.post(`/workspaces/${ws}/metric-configs/tone/versions`).set(r.viewer.auth).send({}), 403);
    expectProblem(
      await t.http
        .put('/metric-configs/tone/1')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send({ threshold: 0.5 }),
      400,
      'metric_params_invalid',
    );
    expectProblem(
      await t.http
        .put('/metric-configs/strict-match/3')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .send({ judged: {} }),
      400,
      'metric_params_invalid',
    );
  });
});
