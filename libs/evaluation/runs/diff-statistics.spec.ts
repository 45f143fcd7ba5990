import { describe, expect, it } from '@jest/globals';
import { diffRows } from './diff.js';
import { diffStatistics } from './diff-statistics.js';
import { answeredItem } from '../../../test/factories/item-result.js';
import type { DiffRow, ItemResult, RunMetricSpec } from './run.types.js';

const metrics: RunMetricSpec[] = [
  { name: 'exact', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'judge', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'latency', better: 'lower', gating: false, min_pass_rate: null },
];

function item(rowId: string, exact: 0 | 1, judge: number, latency: number): ItemResult {
  return answeredItem(rowId, {
    latency_ms: latency,
    scores: {
      exact: { score: exact, passed: exact === 1 },
      judge: { score: judge * 4 + 1, normalized: judge, passed: judge >= 0.5 },
      latency: { score: latency, passed: null },
    },
    passed: exact === 1 && judge >= 0.5,
  });
}

/** 40 rows: billing (24) regresses on exact match and gets slower in the candidate, shipping (12) is unchanged, returns (4) improves. */
function runs() {
  const base: ItemResult[] = [];
  const candidate: ItemResult[] = [];
  const topics = new Map<string, Record<string, string>>();
  for (let i = 0; i < 40; i++) {
    const id = `row-${String(i).padStart(2, '0')}`;
    const topic = i < 24 ? 'billing' : i < 36 ? 'shipping' : 'returns';
    topics.set(id, { topic });
    const judge = 0.5 + (i % 5) / 10;
    base.push(item(id, topic === 'returns' ? 0 : 1, judge, 100 + i));
    if (topic === 'billing') candidate.push(item(id, 0, judge - 0.05 * (1 + (i % 3)), 180 + i));
    else if (topic === 'returns') candidate.push(item(id, 1, judge, 100 + i));
    else candidate.push(item(id, 1, judge, 100 + i));
  }
  candidate.push(item('row-new', 1, 1, 100));
  return { base, candidate, topics };
}

describe('diffStatistics', () => {
  const { base, candidate, topics } = runs();
  const diff = diffRows(base, candidate, metrics);
  const stats = diffStatistics(diff.rows, metrics, { seedKey: 'b:c', dimensionsOf: (id) => topics.get(id) });
  const metric = (name: string) => stats.metrics.find((m) => m.name === name)!;

  it('compares binary metrics on verdicts with exact McNemar and the others on scores with Wilcoxon, over matched rows only', () => {
    expect(stats).toMatchObject({ alpha: 0.05, confidence: 0.95, correction: 'holm', min_rows: 10, matched_rows: 40 });
    // 24 pass -> fail, 4 fail -> pass: two-sided exact binomial tail of 4 of 28.
    expect(metric('exact')).toMatchObject({
      measure: 'verdict',
      test: 'mcnemar_exact',
      method: 'exact',
      n: 40,
      statistic: 4,
      status: 'tested',
      direction: 'worse',
      significant: true,
    });
    expect(metric('exact').mean_delta).toBeCloseTo(-20 / 40, 12);
    expect(metric('exact').effect_size).toEqual({ name: 'risk_difference', value: -0.5 });
    // Every billing judge score dropped (24 negative differences, tied in size): normal approximation.
    expect(metric('judge')).toMatchObject({
      measure: 'score',
      test: 'wilcoxon_signed_rank',
      method: 'normal_approximation',
      n: 40,
      direction: 'worse',
      significant: true,
    });
    expect(metric('judge').effect_size).toEqual({ name: 'rank_biserial', value: -1 });
    // Latency rose by 80 on billing: a rise of a lower-is-better metric is worse.
    expect(metric('latency')).toMatchObject({ direction: 'worse', significant: true });
    expect(metric('latency').mean_delta).toBeCloseTo((24 * 80) / 40, 9);
    expect(metric('latency').ci_low).toBeGreaterThan(0);
    expect(metric('latency').ci_high).toBeLessThanOrEqual(80);
    // The row verdict fell on billing (24) and rose on returns (4).
    expect(stats.row_verdict).toMatchObject({ measure: 'verdict', n: 40, direction: 'worse', significant: true });
  });

  it('corrects across the family with Holm: adjusted p at least the raw one, significance on the adjusted', () => {
    for (const c of [stats.row_verdict, ...stats.metrics]) {
      expect(c.p_adjusted!).toBeGreaterThanOrEqual(c.p_value!);
      expect(c.significant).toBe(c.p_adjusted! <= 0.05);
    }
    const raw = [stats.row_verdict, ...stats.metrics].map((c) => c.p_value!).sort((a, b) => a - b);
    expect(Math.min(...[stats.row_verdict, ...stats.metrics].map((c) => c.p_adjusted!))).toBeCloseTo(
      Math.min(1, raw[0] * 4),
      12,
    );
  });

  it('breaks down per dimension value, with too_few_rows under the minimum (a reason, not a verdict)', () => {
    const topic = stats.by_dimension.find((d) => d.dimension === 'topic')!;
    expect(topic.values.map((v) => [v.value, v.rows])).toEqual([
      ['billing', 24],
      ['returns', 4],
      ['shipping', 12],
    ]);
    const billing = topic.values[0];
    expect(billing.metrics.find((m) => m.name === 'exact')).toMatchObject({
      status: 'tested',
      direction: 'worse',
      significant: true,
      mean_delta: -1,
    });
    const returns = topic.values[1];
    expect(returns.metrics.find((m) => m.name === 'exact')).toMatchObject({
      status: 'too_few_rows',
      n: 4,
      mean_delta: 1,
      p_value: null,
      p_adjusted: null,
      significant: null,
      ci_low: null,
    });
    const shipping = topic.values[2];
    expect(shipping.metrics.find((m) => m.name === 'judge')).toMatchObject({
      status: 'tested',
      p_value: 1,
      direction: 'none',
      significant: false,
      ci_low: 0,
      ci_high: 0,
    });
  });

  it('is deterministic for the same runs and honours alpha and min_rows', () => {
    expect(diffStatistics(diff.rows, metrics, { seedKey: 'b:c', dimensionsOf: (id) => topics.get(id) })).toEqual(stats);
    const strict = diffStatistics(diff.rows, metrics, { seedKey: 'b:c', alpha: 1e-12, minRows: 41 });
    expect(strict.metrics.every((m) => m.status === 'too_few_rows')).toBe(true);
    expect(strict.by_dimension).toEqual([]);
    const tiny = diffStatistics(diff.rows, metrics, { seedKey: 'b:c', alpha: 1e-12 });
    expect(tiny.metrics.find((m) => m.name === 'exact')!.significant).toBe(false);
  });
});

describe('diffStatistics of averaged trials', () => {
  const exactMatch: RunMetricSpec[] = [{ name: 'exact_match', better: 'higher', gating: true, min_pass_rate: null }];

  /** Three trials a row, scored by their mean: `down` rows lose one trial of three, `up` rows gain one, `same` keep theirs. */
  function flakyRows(down: number, up: number, same: number): DiffRow[] {
    const row = (i: number, base: number, candidate: number): DiffRow => ({
      row_id: `row-${i}`,
      status: 'changed',
      base_passed: base > 0.5,
      candidate_passed: candidate > 0.5,
      output_changed: true,
      metrics: {
        exact_match: {
          base,
          candidate,
          delta: candidate - base,
          base_passed: base > 0.5,
          candidate_passed: candidate > 0.5,
        },
      },
    });
    return [
      ...Array.from({ length: down }, (_, i) => row(i, 1, 2 / 3)),
      ...Array.from({ length: up }, (_, i) => row(down + i, 0, 1 / 3)),
      ...Array.from({ length: same }, (_, i) => row(down + up + i, 2 / 3, 2 / 3)),
    ];
  }

  it('ranks a lost trial and a gained trial as the same change: 8 down and 6 up is not a regression', () => {
    const stats = diffStatistics(flakyRows(8, 6, 10), exactMatch, { seedKey: 'b:c' });
    const [metric] = stats.metrics;
    expect(metric).toMatchObject({ measure: 'score', test: 'wilcoxon_signed_rank', method: 'normal_approximation' });
    expect(metric.p_value!.toFixed(3)).toBe('0.618');
    expect(metric.effect_size).toEqual({
      name: 'rank_biserial',
      value: expect.closeTo(-1 / 7, 12) as unknown as number,
    });
    expect(metric.significant).toBe(false);
    expect(metric.mean_delta).toBeCloseTo((8 * (-1 / 3) + 6 * (1 / 3)) / 24, 12);
  });

  it('keeps 40 down and 25 up, every row keeping its majority verdict, from failing the gate', () => {
    const stats = diffStatistics(flakyRows(40, 25, 35), exactMatch, { seedKey: 'b:c' });
    expect(stats.metrics[0].p_value!.toFixed(3)).toBe('0.063');
    expect(stats.metrics[0].significant).toBe(false);
    // The row verdict did not move at all.
    expect(stats.row_verdict).toMatchObject({ p_value: 1, significant: false });
  });
});
