import { describe, expect, it } from '@jest/globals';
import { chartSvg, reportHtml, reportMarkdown, reportPdf } from './render.js';
import type { ReportSection } from './report.types.js';
import { draftSections, plannedSections, renderPrompt, sectionMarkdown, type ReportInput } from './sections.js';

const input: ReportInput = {
  run: {
    id: 'run-1',
    name: 'nightly',
    state: 'succeeded',
    sut_name: 'bot',
    dataset_name: 'quiz',
    version_number: 2,
    created_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:01:00.000Z',
    pass_rule: { row: 'all', min_pass_rate: 0.5, errors_fail: true },
    metrics: [{ name: 'exact_match', better: 'higher', gating: true, min_pass_rate: null }],
  },
  items: [
    {
      row_id: 'a',
      repetition: 1,
      status: 'done',
      output: '4',
      latency_ms: 10,
      cost_usd: 0.001,
      error: null,
      scores: { exact_match: { score: 1, passed: true } },
      passed: true,
      dimensions: { topic: 'math' },
      input: '2+2?',
      expected_output: '4',
    },
    {
      row_id: 'b',
      repetition: 1,
      status: 'done',
      output: '5',
      latency_ms: 30,
      cost_usd: 0.001,
      error: null,
      scores: { exact_match: { score: 0, passed: false } },
      passed: false,
      dimensions: { topic: 'math' },
      input: '2+3?',
      expected_output: '6',
    },
    {
      row_id: 'c',
      repetition: 1,
      status: 'error',
      output: null,
      latency_ms: null,
      cost_usd: null,
      error: { code: 'timeout', message: 'took too long' },
      scores: {},
      passed: null,
      dimensions: { topic: 'geo' },
      input: 'capital?',
      expected_output: 'Paris',
    },
  ],
  baseline: null,
};

describe('report sections and rendering', () => {
  const drafts = draftSections(input, plannedSections(null, undefined));
  const sections: ReportSection[] = drafts.map((d) => ({
    key: d.key,
    title: d.title,
    questions: d.questions,
    markdown: sectionMarkdown(d.title, d.narrative, d.figures, null),
    data: d.data,
    generated_by: 'template',
    judge_error: null,
    edited: false,
    edited_at: null,
    edited_by: null,
  }));
  const doc = {
    id: 'rep',
    title: 'Quiz <report>',
    run_id: 'run-1',
    generated_at: '2026-01-01T00:02:00.000Z',
    sections,
  };

  it('computes the figures: an errored row fails under errors_fail', () => {
    expect(drafts.find((d) => d.key === 'summary')!.data).toEqual(
      expect.objectContaining({
        rows: 3,
        passed_rows: 1,
        failed_rows: 2,
        errored: 1,
        pass_rate: 0.3333,
        passed: false,
        cost_usd_total: 0.002,
      }),
    );
    expect(drafts.find((d) => d.key === 'failure_examples')!.data).toEqual(
      expect.objectContaining({ failed_rows: 2, errors: [{ code: 'timeout', count: 1, message: 'took too long' }] }),
    );
    expect(drafts.find((d) => d.key === 'regressions')!.narrative).toContain('No earlier run');
  });

  it('fills prompt placeholders and leaves unknown ones', () => {
    const summary = drafts[0];
    expect(renderPrompt('{{run_name}} / {{sut_name}} / {{nope}}', input, summary)).toBe('nightly / bot / {{nope}}');
  });

  it('renders Markdown, escaped HTML with SVG charts, and a PDF', async () => {
    expect(reportMarkdown(doc)).toMatch(/^# Quiz <report>\n/);
    const html = reportHtml(doc);
    expect(html).toContain('<title>Quiz &lt;report&gt;</title>');
    expect(html).toContain('<svg');
    expect(chartSvg({ title: 'T', bars: [{ label: '<b>', value: 0.5 }] })).toContain('&lt;b&gt;');
    const pdf = await reportPdf(doc);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });
});
