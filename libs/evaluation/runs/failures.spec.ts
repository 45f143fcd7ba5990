import { describe, expect, it } from '@jest/globals';
import { FailureAnalysis } from './failures.js';
import { answeredItem } from '../../../test/factories/item-result.js';
import type { RunMetricSpec } from './run.types.js';

const item = answeredItem;

const metrics: RunMetricSpec[] = [
  { name: 'acc', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'judge', better: 'higher', gating: false, min_pass_rate: null },
];

describe('FailureAnalysis', () => {
  it('counts failed rows by metric and dimension value, worst first, and the errors with their first examples', () => {
    const analysis = new FailureAnalysis(metrics);
    const boom = { code: 'sut_error', message: 'boom' };
    [
      item('r1', {
        scores: { acc: { score: 0, passed: false }, judge: { score: null, passed: null, error: 'timeout' } },
        passed: false,
        dimensions: { lang: 'en' },
      }),
      item('r2', { scores: { acc: { score: 1, passed: true } }, passed: true, dimensions: { lang: 'fr' } }),
      item('r3', { status: 'error', output: null, error: boom, dimensions: { lang: 'fr' } }),
      ...Array.from({ length: 6 }, (_, i) => item(`e${i}`, { status: 'error', output: null, error: boom })),
    ].forEach((i) => analysis.add(i));
    const report = analysis.result();
    expect(report).toMatchObject({ rows: 9, failed_rows: 8, fail_rate: 0.8889 });
    expect(report.by_metric).toEqual([
      { metric: 'acc', failed: 1, errors: 0, fail_rate: 0.5, example_row_ids: ['r1'] },
      { metric: 'judge', failed: 0, errors: 1, fail_rate: null, example_row_ids: [] },
    ]);
    expect(report.by_dimension).toEqual([
      { dimension: 'lang', value: 'en', rows: 1, failed: 1, fail_rate: 1 },
      { dimension: 'lang', value: 'fr', rows: 2, failed: 1, fail_rate: 0.5 },
    ]);
    expect(report.errors).toEqual([
      { code: 'sut_error', count: 7, message: 'boom', example_row_ids: ['r3', 'e0', 'e1', 'e2', 'e3'] },
    ]);
  });

  it('reports nothing over no rows', () => {
    expect(new FailureAnalysis(metrics).result()).toMatchObject({
      rows: 0,
      failed_rows: 0,
      fail_rate: null,
      by_dimension: [],
      errors: [],
    });
  });
});
