import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import type { TestApp } from '../../utils/test-app.js';
import {
  binary as download,
  MISSING,
  pdfText,
  type Report,
  type ReportWorld,
  type Section,
  section,
  startReportWorld,
} from './support/report-world.js';

/** Reports built from a run: sections, edits, regeneration, exports and downloads, and the refusals of every operation. */
describe('reports', () => {
  let world: ReportWorld;
  let t: TestApp;
  let r: ReportWorld['r'];
  let ws: string;
  let data: ReportWorld['data'];
  let baseRun: string;
  let run: string;
  let report: Report;
  const binary = (url: string) => download(t, url);

  beforeAll(async () => {
    world = await startReportWorld();
    ({ t, r, ws, data, baseRun, run } = world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it("builds a report from a run: every section holds the run's figures, written by the template without a judge", async () => {
    const res = await t.http.post(`/reports/${run}`).set(r.member.auth).send({}).expect(201);
    report = res.body as Report;
    expect(report).toEqual(
      expect.objectContaining({
        run_id: run,
        title: 'Report: nightly-2',
        judge_id: null,
        baseline_run_id: baseRun,
        section_keys: [
          'summary',
          'metrics_overview',
          'results_by_dimension',
          'regressions',
          'failure_examples',
          'recommendations',
        ],
      }),
    );
    for (const s of report.sections)
      expect(s).toEqual(expect.objectContaining({ generated_by: 'template', judge_error: null, edited: false }));

    // 4 of 6 rows pass exact_match; the default pass rule needs all of them.
    expect(section(report, 'summary').data).toEqual(
      expect.objectContaining({
        rows: 6,
        completed: 6,
        errored: 0,
        passed_rows: 4,
        failed_rows: 2,
        pass_rate: 0.6667,
        passed: false,
        sut: 'quiz-bot',
        latency_ms: expect.objectContaining({ mean: 350, p50: 300 }),
      }),
    );
    expect(section(report, 'summary').markdown).toContain('| Pass rate | 66.7% |');
    expect(section(report, 'metrics_overview').data.metrics).toEqual([
      expect.objectContaining({
        name: 'exact_match',
        scored: 6,
        mean: 0.6667,
        pass_rate: 0.6667,
        passed: 4,
        failed: 2,
        min: 0,
        max: 1,
      }),
    ]);
    const topic = (
      section(report, 'results_by_dimension').data.dimensions as Array<{
        dimension: string;
        values: Array<{ value: string; rows: number; pass_rate: number }>;
      }>
    )[0];
    expect(topic.dimension).toBe('topic');
    expect(topic.values.map((v) => [v.value, v.rows, v.pass_rate])).toEqual([
      ['geo', 2, 0.5],
      ['math', 2, 0.5],
      ['misc', 2, 1],
    ]);
    const regressions = section(report, 'regressions').data as {
      baseline_run_id: string;
      counts: Record<string, number>;
      metrics: Array<Record<string, unknown>>;
      regressed_rows: Array<{ row_id: string }>;
    };
    expect(regressions.baseline_run_id).toBe(baseRun);
    expect(regressions.counts).toEqual({
      rows: 6,
      regressed: 2,
      improved: 1,
      changed: 0,
      unchanged: 3,
      new: 0,
      missing: 0,
    });
    expect(regressions.metrics).toEqual([
      expect.objectContaining({ name: 'exact_match', base_mean: 0.8333, candidate_mean: 0.6667, delta: -0.1667 }),
    ]);
    expect(regressions.regressed_rows.map((x) => x.row_id).sort()).toEqual([data.rowIds[1], data.rowIds[3]].sort());
    const failures = section(report, 'failure_examples').data as {
      failed_rows: number;
      examples: Array<{
        row_id: string;
        input: string;
        expected_output: string;
        output: string;
        failed_metrics: string[];
      }>;
    };
    expect(failures.failed_rows).toBe(2);
    expect(failures.examples).toEqual([
      {
        row_id: data.rowIds[1],
        input: '3+3?',
        expected_output: '6',
        output: '7',
        error: null,
        failed_metrics: ['exact_match'],
      },
      {
        row_id: data.rowIds[3],
        input: 'capital of Peru?',
        expected_output: 'Lima',
        output: 'Cusco',
        error: null,
        failed_metrics: ['exact_match'],
      },
    ]);
    const recs = (section(report, 'recommendations').data.items as Array<{ text: string }>).map((i) => i.text);
    expect(recs).toEqual(expect.arrayContaining(['Review the rows that regressed since the previous run.']));

    // The first run has no earlier run to compare with.
    const first = (
      await t.http
        .post(`/reports/${baseRun}`)
        .set(r.member.auth)
        .send({ title: 'First', sections: ['regressions', 'summary'] })
        .expect(201)
    ).body as Report;
    expect(first.section_keys).toEqual(['regressions', 'summary']);
    expect(first.baseline_run_id).toBeNull();
    expect(section(first, 'regressions').data.baseline_run_id).toBeNull();
    expect(section(first, 'summary').data).toEqual(expect.objectContaining({ passed_rows: 5, pass_rate: 0.8333 }));

    expect((await t.http.get(`/reports/${report.id}`).set(r.viewer.auth).expect(200)).body).toEqual(
      expect.objectContaining({ id: report.id, version: report.version }),
    );
    const page = await t.http.get('/reports').query({ workspace_id: ws, page_size: 1 }).set(r.viewer.auth).expect(200);
    expect(page.body).toEqual(expect.objectContaining({ total: 2, page: 1, page_size: 1 }));
    expect(page.body.items[0].id).toBe(first.id);
    const byRun = await t.http.get('/reports').query({ workspace_id: ws, run_id: run }).set(r.viewer.auth).expect(200);
    expect(byRun.body.items.map((x: { id: string }) => x.id)).toEqual([report.id]);
    expectProblem(
      await t.http.get('/reports').query({ workspace_id: ws, page_size: 500 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.get('/reports').query({ workspace_id: ws, run_id: MISSING }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expectProblem(await t.http.get('/reports').set(r.viewer.auth), 400, 'validation_failed');

    expectProblem(
      await t.http.post(`/reports/${run}`).set(r.member.auth).send({ colour: 'red' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post(`/reports/${run}`)
        .set(r.member.auth)
        .send({ sections: ['nope'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(`/reports/${run}`).set(r.member.auth).send({ judge_id: MISSING }),
      400,
      'report_reference_invalid',
    );
    expectProblem(
      await t.http.post(`/reports/${run}`).set(r.member.auth).send({ config_id: MISSING }),
      400,
      'report_reference_invalid',
    );
    expectProblem(
      await t.http.post(`/reports/${run}`).set(r.member.auth).send({ baseline_run_id: run }),
      400,
      'report_reference_invalid',
    );
  });

  it('answers the question schema of a run from its metrics and dimensions', async () => {
    const q = (await t.http.get(`/reports/questions/${run}`).set(r.viewer.auth).expect(200)).body;
    expect(q).toEqual(
      expect.objectContaining({
        run_id: run,
        config_id: null,
        metrics: ['exact_match'],
        dimensions: ['topic'],
        has_baseline: true,
      }),
    );
    expect(q.sections.map((s: { key: string }) => s.key)).toEqual([
      'summary',
      'metrics_overview',
      'results_by_dimension',
      'regressions',
      'failure_examples',
      'recommendations',
    ]);
    const texts = (key: string) =>
      q.sections.find((s: { key: string }) => s.key === key).questions.map((x: { text: string }) => x.text);
    expect(texts('metrics_overview')).toContain('What are the mean score and pass rate of exact_match?');
    expect(texts('results_by_dimension')).toEqual(['Which values of topic have the lowest pass rate?']);
    expect(q.sections[0].questions[0]).toEqual({ id: 'summary.1', text: expect.any(String), source: 'builtin' });
    expectProblem(
      await t.http.get(`/reports/questions/${run}`).query({ config_id: MISSING }).set(r.viewer.auth),
      404,
      'not_found',
    );
    expectProblem(await t.http.get(`/reports/questions/${MISSING}`).set(r.viewer.auth), 404);
  });

  it('reads, edits and deletes content, and regenerates keeping or discarding edits', async () => {
    const content = (await t.http.get(`/reports/${report.id}/content`).set(r.viewer.auth).expect(200)).body;
    expect(content.markdown).toMatch(/^# Report: nightly-2/);
    expect(content.markdown).toContain('## Metrics overview');
    expect(content.sections).toHaveLength(6);
    const one = (await t.http.get(`/reports/${report.id}/content/summary`).set(r.viewer.auth).expect(200)).body;
    expect(one).toEqual(expect.objectContaining({ key: 'summary', title: 'Summary', edited: false }));
    expectProblem(
      await t.http.get(`/reports/${report.id}/content/nope`).set(r.viewer.auth),
      404,
      'report_section_not_found',
    );

    const etag = (await t.http.get(`/reports/${report.id}`).set(r.viewer.auth).expect(200)).headers.etag;
    expectProblem(
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .set('If-Match', '"stale"')
        .send({ sections: [] }),
      412,
      'precondition_failed',
    );
    const edited = (
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .set('If-Match', etag)
        .send({
          title: 'Quiz bot, nightly 2',
          sections: [{ key: 'summary', markdown: '## Summary\n\nHand-written summary.' }],
        })
        .expect(200)
    ).body;
    expect(edited.title).toBe('Quiz bot, nightly 2');
    expect(edited.sections[0]).toEqual(
      expect.objectContaining({
        key: 'summary',
        markdown: '## Summary\n\nHand-written summary.',
        edited: true,
        edited_by: r.member.id,
        edited_at: expect.any(String),
      }),
    );
    expect(edited.version).toBeGreaterThan(report.version);
    expectProblem(
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .send({
          sections: [
            { key: 'summary', markdown: 'x' },
            { key: 'summary', markdown: 'y' },
          ],
        }),
      400,
      'report_content_invalid',
    );
    expectProblem(
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .send({ sections: [{ key: 'summary', markdown: 'x'.repeat(100_001) }] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .send({ sections: [{ key: 'summary', markdown: 'x', edited: false }] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.put(`/reports/${report.id}/content`).set(r.viewer.auth).send({ sections: [] }),
      403,
      'forbidden',
    );

    const afterDelete = (
      await t.http.delete(`/reports/${report.id}/content/failure_examples`).set(r.member.auth).expect(200)
    ).body;
    expect(afterDelete.sections.map((s: Section) => s.key)).toEqual([
      'summary',
      'metrics_overview',
      'results_by_dimension',
      'regressions',
      'recommendations',
    ]);
    expectProblem(
      await t.http.delete(`/reports/${report.id}/content/failure_examples`).set(r.member.auth),
      404,
      'report_section_not_found',
    );
    expectProblem(
      await t.http
        .put(`/reports/${report.id}/content`)
        .set(r.member.auth)
        .send({ sections: [{ key: 'failure_examples', markdown: 'x' }] }),
      400,
      'report_content_invalid',
    );

    const kept = (await t.http.post(`/reports/${report.id}/regenerate`).set(r.member.auth).send({}).expect(200))
      .body as Report;
    expect(kept.section_keys).toEqual([
      'summary',
      'metrics_overview',
      'results_by_dimension',
      'regressions',
      'recommendations',
    ]);
    expect(section(kept, 'summary')).toEqual(
      expect.objectContaining({ markdown: '## Summary\n\nHand-written summary.', edited: true }),
    );
    const restored = (
      await t.http
        .post(`/reports/${report.id}/regenerate`)
        .set(r.member.auth)
        .send({ keep_edits: false, sections: ['summary', 'failure_examples'] })
        .expect(200)
    ).body as Report;
    expect(restored.section_keys).toEqual(['summary', 'failure_examples']);
    expect(section(restored, 'summary')).toEqual(expect.objectContaining({ edited: false, generated_by: 'template' }));
    expect(section(restored, 'summary').data.passed_rows).toBe(4);
    const all = (
      await t.http
        .post(`/reports/${report.id}/regenerate`)
        .set(r.member.auth)
        .send({
          sections: [
            'summary',
            'metrics_overview',
            'results_by_dimension',
            'regressions',
            'failure_examples',
            'recommendations',
          ],
        })
        .expect(200)
    ).body as Report;
    expect(all.sections).toHaveLength(6);
    expectProblem(
      await t.http.post(`/reports/${report.id}/regenerate`).set(r.member.auth).send({ keep_edits: 'yes' }),
      400,
      'validation_failed',
    );
    expectProblem(await t.http.post(`/reports/${report.id}/regenerate`).set(r.viewer.auth).send({}), 403, 'forbidden');
    report = all;
  });

  it('exports and downloads Markdown, HTML with SVG charts and a real PDF behind signed, expiring URLs', async () => {
    const pdf = (
      await t.http.post(`/reports/${report.id}/export`).set(r.member.auth).send({ format: 'pdf' }).expect(200)
    ).body;
    expect(pdf).toEqual(
      expect.objectContaining({
        report_id: report.id,
        format: 'pdf',
        content_type: 'application/pdf',
        filename: `report-${report.id}.pdf`,
        method: 'GET',
        size_bytes: expect.any(Number),
      }),
    );
    const file = await binary(pdf.url);
    expect(file.status).toBe(200);
    expect(file.type).toBe('application/pdf');
    expect(file.body.subarray(0, 5).toString()).toBe('%PDF-');
    expect(file.body.length).toBe(pdf.size_bytes);
    const text = await pdfText(file.body);
    for (const expected of [
      'Quiz bot, nightly 2',
      'Metrics overview',
      'exact_match',
      '66.7%',
      'Pass rate by topic',
      'capital of Peru?',
      'Cusco',
    ])
      expect(text).toContain(expected);

    const html = (
      await t.http.post(`/reports/${report.id}/export`).set(r.member.auth).send({ format: 'html' }).expect(200)
    ).body;
    const page = await binary(html.url);
    expect(page.type).toMatch(/^text\/html/);
    const markup = page.body.toString('utf8');
    expect(markup).toContain('<svg');
    expect(markup).toContain('Pass rate by metric');
    expect(markup).toContain('<table>');
    expect(markup).toContain('66.7%');

    // Download reuses the export of this version; a later edit renders afresh.
    const download = (
      await t.http.get(`/reports/${report.id}/download`).query({ format: 'pdf' }).set(r.viewer.auth).expect(200)
    ).body;
    expect(download.export_id).toBe(pdf.export_id);
    const md = (
      await t.http.get(`/reports/${report.id}/download`).query({ format: 'markdown' }).set(r.viewer.auth).expect(200)
    ).body;
    expect((await binary(md.url)).body.toString('utf8')).toContain('| Pass rate | 66.7% |');
    const byDefault = (await t.http.get(`/reports/${report.id}/download`).set(r.viewer.auth).expect(200)).body;
    expect(byDefault.format).toBe('pdf');

    const link = (await t.http.get(`/reports/${report.id}/content-url`).set(r.viewer.auth).expect(200)).body;
    expect(link).toEqual(
      expect.objectContaining({ report_id: report.id, format: 'markdown', expires_at: expect.any(String) }),
    );
    expect((await binary(link.url)).body.toString('utf8')).toMatch(/^# Quiz bot, nightly 2/);
    const htmlLink = (
      await t.http.get(`/reports/${report.id}/content-url`).query({ format: 'html' }).set(r.viewer.auth).expect(200)
    ).body;
    expect((await binary(htmlLink.url)).body.toString('utf8')).toContain('<svg');

    const tampered = new URL(pdf.url);
    tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 60));
    expectProblem(await t.http.get(tampered.pathname + tampered.search), 403, 'invalid_signature');
    expectProblem(await t.http.get(new URL(link.url).pathname), 403, 'invalid_signature');
    expectProblem(
      await t.http.post(`/reports/${report.id}/export`).set(r.member.auth).send({ format: 'docx' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.get(`/reports/${report.id}/download`).query({ format: 'docx' }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.get(`/reports/${report.id}/content-url`).query({ format: 'pdf' }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(`/reports/${report.id}/export`).set(r.viewer.auth).send({ format: 'pdf' }),
      403,
      'forbidden',
    );
  });

  it('refuses without a token (401), outside the workspace (403), unknown ids (404) and malformed ids (400) on every operation', async () => {
    const rep = report.id;
    const calls: Array<[string, string, Record<string, unknown>?]> = [
      ['get', '/reports?workspace_id=' + ws],
      ['get', `/reports/questions/${run}`],
      ['post', `/reports/${run}`, {}],
      ['get', `/reports/${rep}`],
      ['get', `/reports/${rep}/content`],
      ['put', `/reports/${rep}/content`, { sections: [] }],
      ['get', `/reports/${rep}/content-url`],
      ['get', `/reports/${rep}/content/summary`],
      ['delete', `/reports/${rep}/content/summary`],
      ['get', `/reports/${rep}/download`],
      ['post', `/reports/${rep}/export`, {}],
      ['post', `/reports/${rep}/regenerate`, {}],
      ['get', `/reports/${run}/partitions`],
      ['get', `/reports/${run}/partitions/metrics`],
      ['get', `/report-configs?workspace_id=${ws}`],
      ['post', '/report-configs', { workspace_id: ws, name: 'outsider', sections: [{ key: 'summary' }] }],
      ['get', '/report-settings?workspace_id=' + ws],
      ['put', '/report-settings', { workspace_id: ws }],
      ['get', `/report-settings/prompts?workspace_id=${ws}`],
      ['get', `/report-settings/prompts/summary?workspace_id=${ws}`],
      ['put', '/report-settings/prompts/summary', { workspace_id: ws, prompt: 'x' }],
      ['delete', `/report-settings/prompts/summary?workspace_id=${ws}`],
    ];
    const config = (
      await t.http
        .post('/report-configs')
        .set(r.member.auth)
        .send({ workspace_id: ws, name: 'auth', sections: [{ key: 'summary' }] })
        .expect(201)
    ).body.id;
    calls.push(['get', `/report-configs/${config}`], ['delete', `/report-configs/${config}`]);
    for (const [method, url, body] of calls) {
      const send = (auth?: Record<string, string>) => {
        let req = t.http[method as 'get'](url);
        if (auth) req = req.set(auth);
        return body ? req.send(body) : req;
      };
      expectProblem(await send(), 401, 'unauthenticated');
      expectProblem(await send(r.outsider.auth), 403, 'forbidden');
    }
    for (const [method, url] of [
      ['get', `/reports/${MISSING}`],
      ['get', `/reports/${MISSING}/content`],
      ['post', `/reports/${MISSING}`],
      ['get', `/reports/questions/${MISSING}`],
      ['get', `/reports/${MISSING}/download`],
      ['get', `/report-configs/${MISSING}`],
      ['get', `/reports/${MISSING}/partitions/metrics`],
    ] as const) {
      expectProblem(await t.http[method](url).set(r.member.auth).send({}), 404);
    }
    for (const url of [
      '/reports/nope',
      '/reports/nope/content',
      '/reports/questions/nope',
      '/reports/nope/partitions',
      '/report-configs/nope',
    ])
      expectProblem(await t.http.get(url).set(r.viewer.auth), 400, 'invalid_identifier');
    expectProblem(await t.http.get('/reports').query({ workspace_id: 'nope' }).set(r.viewer.auth), 400);
  });
});
