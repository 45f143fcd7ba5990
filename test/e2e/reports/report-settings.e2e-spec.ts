import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { chatCompletion } from '../../utils/fake-upstream.js';
import { expectProblem } from '../../utils/problem.js';
import type { TestApp } from '../../utils/test-app.js';
import { MISSING, type Report, type ReportWorld, section, startReportWorld } from './support/report-world.js';

/** Reports written through the workspace judge, report configs, workspace report settings and prompts, and partitions. */
describe('report narratives, configs and settings', () => {
  let world: ReportWorld;
  let t: TestApp;
  let r: ReportWorld['r'];
  let ws: string;
  let llm: ReportWorld['llm'];
  let data: ReportWorld['data'];
  let run: string;
  let judgeId: string;
  let partitionId: string;
  let report: Report;

  beforeAll(async () => {
    world = await startReportWorld();
    ({ t, r, ws, llm, data, run, judgeId, partitionId } = world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  beforeAll(async () => {
    report = (await t.http.post(`/reports/${run}`).set(r.member.auth).send({}).expect(201)).body as Report;
  });

  it('writes narratives through the workspace judge with custom prompts, and falls back to the template when the judge fails', async () => {
    llm.on('POST', '/v1/chat/completions', {
      json: chatCompletion(JSON.stringify({ markdown: 'The judge finds two regressions worth a look.' })),
    });
    await t.http.put('/report-settings').set(r.admin.auth).send({ workspace_id: ws, judge_id: judgeId }).expect(200);
    await t.http
      .put('/report-settings/prompts/summary')
      .set(r.admin.auth)
      .send({ workspace_id: ws, prompt: 'Summarise {{run_name}} on {{dataset_name}}. Figures: {{data}}' })
      .expect(200);
    const judged = (await t.http.post(`/reports/${run}`).set(r.member.auth).send({}).expect(201)).body as Report;
    expect(judged.judge_id).toBe(judgeId);
    for (const s of judged.sections)
      expect(s).toEqual(expect.objectContaining({ generated_by: 'judge', judge_error: null }));
    expect(section(judged, 'summary').markdown).toContain('The judge finds two regressions worth a look.');
    // The figures stay beside the judge's narrative.
    expect(section(judged, 'summary').markdown).toContain('| Pass rate | 66.7% |');
    const calls = llm.received('POST', '/v1/chat/completions');
    expect(calls).toHaveLength(6);
    const prompts = calls.map(
      (c) =>
        (c.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')!
          .content,
    );
    const custom = prompts.find((p) => p.startsWith('Summarise nightly-2 on quiz.'))!;
    expect(custom).toBeDefined();
    expect(JSON.parse(custom.slice(custom.indexOf('Figures: ') + 9))).toEqual(
      expect.objectContaining({ passed_rows: 4, pass_rate: 0.6667 }),
    );
    expect(prompts.some((p) => p.startsWith('Describe, in one paragraph, how each metric'))).toBe(true);

    // A failing judge: every narrative from the template, and the report says why.
    llm.on('POST', '/v1/chat/completions', { status: 500, json: { error: 'down' } });
    const fallback = (await t.http.post(`/reports/${run}`).set(r.member.auth).send({}).expect(201)).body as Report;
    for (const s of fallback.sections) {
      expect(s.generated_by).toBe('template');
      expect(s.judge_error).toMatch(/judge call failed \(http_status/);
    }
    expect(section(fallback, 'summary').markdown).toContain(
      'Narrative from the built-in template: the judge call failed',
    );
    expect(section(fallback, 'summary').markdown).toContain('4 rows passed and 2 failed');

    // Regenerating with the judge back and template_only in turn.
    llm.on('POST', '/v1/chat/completions', { json: chatCompletion('Plain text narrative, no JSON.') });
    const regenerated = (
      await t.http.post(`/reports/${fallback.id}/regenerate`).set(r.member.auth).send({}).expect(200)
    ).body as Report;
    expect(section(regenerated, 'metrics_overview')).toEqual(expect.objectContaining({ generated_by: 'judge' }));
    expect(section(regenerated, 'metrics_overview').markdown).toContain('Plain text narrative, no JSON.');
    const templated = (
      await t.http
        .post(`/reports/${fallback.id}/regenerate`)
        .set(r.member.auth)
        .send({ template_only: true })
        .expect(200)
    ).body as Report;
    expect(templated.judge_id).toBeNull();
    expect(templated.sections.every((s) => s.generated_by === 'template' && s.judge_error === null)).toBe(true);
    const noJudge = (await t.http.post(`/reports/${run}`).set(r.member.auth).send({ template_only: true }).expect(201))
      .body as Report;
    expect(noJudge.judge_id).toBeNull();

    await t.http.put('/report-settings').set(r.admin.auth).send({ workspace_id: ws, judge_id: null }).expect(200);
    await t.http.delete('/report-settings/prompts/summary').query({ workspace_id: ws }).set(r.admin.auth).expect(204);
  });

  it('manages report configs: create, list, read, template YAML, delete; a config chooses sections, titles and questions', async () => {
    const template = await t.http.get('/report-configs/template').set(r.viewer.auth).expect(200);
    expect(template.headers['content-type']).toMatch(/^text\/plain/);
    const parsed = parseYaml(template.text) as { sections: Array<{ key: string }> };
    expect(parsed.sections.map((s) => s.key)).toEqual([
      'summary',
      'metrics_overview',
      'results_by_dimension',
      'regressions',
      'failure_examples',
      'recommendations',
    ]);
    expectProblem(await t.http.get('/report-configs/template'), 401, 'unauthenticated');

    const created = (
      await t.http
        .post('/report-configs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'Exec brief',
          description: 'Short',
          sections: [{ key: 'summary', title: 'At a glance', questions: ['Can we ship?'] }, { key: 'recommendations' }],
        })
        .expect(201)
    ).body;
    expect(created).toEqual(
      expect.objectContaining({
        name: 'Exec brief',
        section_keys: ['summary', 'recommendations'],
        is_default: false,
        sections: [
          { key: 'summary', title: 'At a glance', questions: ['Can we ship?'] },
          { key: 'recommendations', title: 'Recommendations', questions: [] },
        ],
      }),
    );
    expectProblem(
      await t.http
        .post('/report-configs')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'exec BRIEF', sections: [{ key: 'summary' }] }),
      409,
      'report_config_name_taken',
    );
    expectProblem(
      await t.http
        .post('/report-configs')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'twice', sections: [{ key: 'summary' }, { key: 'summary' }] }),
      400,
      'report_config_invalid',
    );
    expectProblem(
      await t.http
        .post('/report-configs')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'bad', sections: [{ key: 'appendix' }] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post('/report-configs').set(r.member.auth).send({ workspace_id: ws, name: 'empty', sections: [] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/report-configs')
        .set(r.viewer.auth)
        .send({ workspace_id: ws, name: 'v', sections: [{ key: 'summary' }] }),
      403,
      'forbidden',
    );

    expect(
      (await t.http.get('/report-configs').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body,
    ).toEqual([expect.objectContaining({ id: created.id, name: 'Exec brief' })]);
    expect(
      (await t.http.get(`/report-configs/${created.id}`).set(r.viewer.auth).expect(200)).body.sections,
    ).toHaveLength(2);

    const brief = (await t.http.post(`/reports/${run}`).set(r.member.auth).send({ config_id: created.id }).expect(201))
      .body as Report;
    expect(brief.section_keys).toEqual(['summary', 'recommendations']);
    expect(section(brief, 'summary').title).toBe('At a glance');
    expect(section(brief, 'summary').questions).toContain('Can we ship?');
    expect(section(brief, 'summary').markdown).toMatch(/^## At a glance/);
    const q = (
      await t.http.get(`/reports/questions/${run}`).query({ config_id: created.id }).set(r.viewer.auth).expect(200)
    ).body;
    expect(q.sections.map((s: { key: string }) => s.key)).toEqual(['summary', 'recommendations']);
    expect(q.sections[0].questions.at(-1)).toEqual({ id: 'summary.4', text: 'Can we ship?', source: 'config' });

    // The settings' default config applies when a request names none.
    await t.http
      .put('/report-settings')
      .set(r.admin.auth)
      .send({ workspace_id: ws, default_config_id: created.id })
      .expect(200);
    expect(
      (await t.http.get('/report-configs').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body[0]
        .is_default,
    ).toBe(true);
    expect(
      ((await t.http.post(`/reports/${run}`).set(r.member.auth).send({}).expect(201)).body as Report).section_keys,
    ).toEqual(['summary', 'recommendations']);

    expectProblem(await t.http.delete(`/report-configs/${created.id}`).set(r.viewer.auth), 403, 'forbidden');
    await t.http.delete(`/report-configs/${created.id}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.get(`/report-configs/${created.id}`).set(r.viewer.auth), 404, 'not_found');
    expectProblem(await t.http.delete(`/report-configs/${created.id}`).set(r.member.auth), 404);
    expect(
      (await t.http.get('/report-settings').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body
        .default_config_id,
    ).toBeNull();
    expect((await t.http.get(`/reports/${brief.id}`).set(r.viewer.auth).expect(200)).body.config_id).toBeNull();
    expectProblem(await t.http.get('/report-configs/not-a-uuid').set(r.viewer.auth), 400, 'invalid_identifier');
  });

  it('keeps workspace report settings and section prompts (admins write, viewers read)', async () => {
    const defaults = (await t.http.get('/report-settings').query({ workspace_id: ws }).set(r.viewer.auth).expect(200))
      .body;
    expect(defaults).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        judge_id: null,
        formats: ['markdown', 'html', 'pdf'],
        default_format: 'pdf',
        custom_prompts: [],
      }),
    );
    const changed = (
      await t.http
        .put('/report-settings')
        .set(r.admin.auth)
        .send({ workspace_id: ws, formats: ['markdown', 'html'], default_format: 'html' })
        .expect(200)
    ).body;
    expect(changed).toEqual(
      expect.objectContaining({ formats: ['markdown', 'html'], default_format: 'html', updated_by: r.admin.id }),
    );
    expectProblem(
      await t.http.post(`/reports/${report.id}/export`).set(r.member.auth).send({ format: 'pdf' }),
      400,
      'report_format_not_enabled',
    );
    expect(
      (await t.http.post(`/reports/${report.id}/export`).set(r.member.auth).send({}).expect(200)).body.format,
    ).toBe('html');
    expectProblem(
      await t.http
        .put('/report-settings')
        .set(r.admin.auth)
        .send({ workspace_id: ws, formats: ['markdown'], default_format: 'pdf' }),
      400,
      'report_settings_invalid',
    );
    expectProblem(
      await t.http.put('/report-settings').set(r.admin.auth).send({ workspace_id: ws, judge_id: MISSING }),
      400,
      'report_settings_invalid',
    );
    expectProblem(
      await t.http
        .put('/report-settings')
        .set(r.admin.auth)
        .send({ workspace_id: ws, formats: ['docx'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.put('/report-settings').set(r.admin.auth).send({ workspace_id: ws, theme: 'dark' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .put('/report-settings')
        .set(r.member.auth)
        .send({ workspace_id: ws, formats: ['pdf'] }),
      403,
      'forbidden',
    );
    await t.http
      .put('/report-settings')
      .set(r.admin.auth)
      .send({ workspace_id: ws, formats: ['markdown', 'html', 'pdf'], default_format: 'pdf' })
      .expect(200);

    const prompts = (
      await t.http.get('/report-settings/prompts').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)
    ).body;
    expect(prompts.map((p: { section_key: string; source: string }) => `${p.section_key}:${p.source}`)).toEqual([
      'summary:builtin',
      'metrics_overview:builtin',
      'results_by_dimension:builtin',
      'regressions:builtin',
      'failure_examples:builtin',
      'recommendations:builtin',
    ]);
    const put = (
      await t.http
        .put('/report-settings/prompts/regressions')
        .set(r.admin.auth)
        .send({ workspace_id: ws, prompt: 'Only list regressions: {{data}}' })
        .expect(200)
    ).body;
    expect(put).toEqual(
      expect.objectContaining({
        section_key: 'regressions',
        source: 'custom',
        prompt: 'Only list regressions: {{data}}',
        updated_by: r.admin.id,
      }),
    );
    expect(put.builtin_prompt).toContain('previous run');
    expect(
      (
        await t.http
          .get('/report-settings/prompts/regressions')
          .query({ workspace_id: ws })
          .set(r.viewer.auth)
          .expect(200)
      ).body.source,
    ).toBe('custom');
    expect(
      (await t.http.get('/report-settings').query({ workspace_id: ws }).set(r.viewer.auth).expect(200)).body
        .custom_prompts,
    ).toEqual(['regressions']);
    expectProblem(
      await t.http
        .put('/report-settings/prompts/regressions')
        .set(r.member.auth)
        .send({ workspace_id: ws, prompt: 'x' }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.http
        .put('/report-settings/prompts/regressions')
        .set(r.admin.auth)
        .send({ workspace_id: ws, prompt: '   ' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .put('/report-settings/prompts/regressions')
        .set(r.admin.auth)
        .send({ workspace_id: ws, prompt: 'x'.repeat(20_001) }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.put('/report-settings/prompts/appendix').set(r.admin.auth).send({ workspace_id: ws, prompt: 'x' }),
      404,
      'report_section_key_unknown',
    );
    expectProblem(
      await t.http.get('/report-settings/prompts/appendix').query({ workspace_id: ws }).set(r.viewer.auth),
      404,
      'report_section_key_unknown',
    );
    expectProblem(
      await t.http.delete('/report-settings/prompts/regressions').query({ workspace_id: ws }).set(r.member.auth),
      403,
      'forbidden',
    );
    await t.http
      .delete('/report-settings/prompts/regressions')
      .query({ workspace_id: ws })
      .set(r.admin.auth)
      .expect(204);
    expect(
      (
        await t.http
          .get('/report-settings/prompts/regressions')
          .query({ workspace_id: ws })
          .set(r.viewer.auth)
          .expect(200)
      ).body,
    ).toEqual(expect.objectContaining({ source: 'builtin', updated_at: null }));
    expectProblem(
      await t.http.delete('/report-settings/prompts/appendix').query({ workspace_id: ws }).set(r.admin.auth),
      404,
      'report_section_key_unknown',
    );
    expectProblem(await t.http.get('/report-settings').set(r.viewer.auth), 400, 'validation_failed');
  });

  it("lists the partitions of a run's dataset version and the metrics of each", async () => {
    const partitions = (await t.http.get(`/reports/${run}/partitions`).set(r.viewer.auth).expect(200)).body;
    expect(partitions).toEqual([
      expect.objectContaining({ id: partitionId, name: 'geography', version_id: data.versionId, row_count: 2 }),
    ]);
    const metrics = (await t.http.get(`/reports/${run}/partitions/metrics`).set(r.viewer.auth).expect(200)).body;
    expect(Object.keys(metrics)).toEqual([partitionId]);
    expect(metrics[partitionId][0]).toBe('exact_match');
    expect(metrics[partitionId]).toEqual(expect.arrayContaining(['exact_match', 'token_f1']));
    expectProblem(await t.http.get(`/reports/${MISSING}/partitions`).set(r.viewer.auth), 404);
  });
});
