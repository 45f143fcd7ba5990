import { describe, expect, it } from '@jest/globals';
import { answeredItem } from '../../../test/factories/item-result.js';
import type { ItemResult, MetricScore, PassRule, RunMetricSpec } from './run.types.js';
import { histogram, nearestRank } from './stats.js';
import { summarize, SummaryAccumulator } from './summary.js';

const s = (score: number | null, passed: boolean | null, error?: string): MetricScore => ({
  score,
  passed,
  ...(error ? { error } : {}),
});

const item = answeredItem;

const metrics: RunMetricSpec[] = [
  { name: 'acc', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'bleu', better: 'higher', gating: false, min_pass_rate: 0.9 },
  { name: 'judge', better: 'higher', gating: false, min_pass_rate: 0.5 },
];

// acc scores 2, 4, 4, 5, 5, 10: mean 5, squared deviations 9+1+1+0+0+25 = 36 -> std sqrt(36/6) = sqrt(6).
const items: ItemResult[] = [
  item('r1', {
    scores: { acc: s(2, false), bleu: s(0.2, false) },
    passed: false,
    latency_ms: 100,
    cost_usd: 0.1,
    dimensions: { lang: 'en', topic: 'a' },
  }),
  item('r2', {
    scores: { acc: s(4, false), bleu: s(0.9, true) },
    passed: false,
    latency_ms: 200,
    cost_usd: 0.2,
    dimensions: { lang: 'en' },
  }),
  item('r3', {
    scores: { acc: s(4, false), bleu: s(0.8, true) },
    passed: false,
    latency_ms: 300,
    cost_usd: 0.3,
    dimensions: { lang: 'fr' },
  }),
  item('r4', {
    scores: { acc: s(5, true), bleu: s(0.1, false) },
    passed: true,
    latency_ms: 400,
    dimensions: { lang: 'fr' },
  }),
  item('r5', { scores: { acc: s(5, true), bleu: s(null, null, 'timeout') }, passed: true, dimensions: {} }),
  item('r6', { scores: { acc: s(10, true) }, passed: true, latency_ms: 600, dimensions: { lang: 'de' } }),
  item('r7', {
    status: 'error',
    output: null,
    error: { code: 'sut_error', message: 'boom' },
    latency_ms: 50,
    dimensions: { lang: 'en' },
  }),
];

const strict: PassRule = { row: 'all', min_pass_rate: 0.8, errors_fail: true };

describe('summarize', () => {
  const summary = summarize(items, metrics, strict);

  it('counts rows, errors counted as failures under errors_fail', () => {
    expect(summary).toMatchObject({ rows: 7, completed: 6, errored: 1, passed_rows: 3, failed_rows: 4 });
    expect(summary.pass_rate).toBeCloseTo(3 / 7, 12);
  });

  it('leaves errored rows out of the rate without errors_fail', () => {
    const lenient = summarize(items, metrics, { ...strict, errors_fail: false });
    expect(lenient).toMatchObject({ passed_rows: 3, failed_rows: 3, pass_rate: 0.5, passed: false });
    expect(lenient.reasons[0]).toBe('row pass rate 0.50 is below 0.80');
  });

  it('computes the metric statistics and histogram by hand', () => {
    const acc = summary.metrics[0];
    expect(acc).toMatchObject({
      name: 'acc',
      scored: 6,
      errors: 1,
      mean: 5,
      median: 4.5,
      p90: 10,
      min: 2,
      max: 10,
      passed: 3,
      failed: 3,
      pass_rate: 0.5,
      meets_min_pass_rate: null,
    });
    expect(acc.std).toBeCloseTo(Math.sqrt(6), 12);
    // Width 0.8 from 2: 2 -> bin 0, 4 -> [3.6, 4.4) bin 2, 5 -> [4.4, 5.2) bin 3, 10 -> last bin, inclusive.
    expect(acc.histogram.counts).toEqual([1, 0, 2, 2, 0, 0, 0, 0, 0, 1]);
    expect(acc.histogram.edges).toHaveLength(11);
    expect(acc.histogram.edges[0]).toBe(2);
    expect(acc.histogram.edges[3]).toBeCloseTo(4.4, 12);
    expect(acc.histogram.edges[10]).toBe(10);
  });

  it('counts metric errors: an error entry without a score, and an errored row without an entry', () => {
    const bleu = summary.metrics[1];
    expect(bleu).toMatchObject({
      scored: 4,
      errors: 2,
      passed: 2,
      failed: 2,
      pass_rate: 0.5,
      meets_min_pass_rate: false,
    });
    expect(bleu.mean).toBeCloseTo(0.5, 12);
    expect(bleu.median).toBeCloseTo(0.5, 12);
    const judge = summary.metrics[2];
    expect(judge).toMatchObject({
      scored: 0,
      errors: 1,
      mean: null,
      median: null,
      p90: null,
      std: null,
      pass_rate: null,
      meets_min_pass_rate: false,
    });
    expect(judge.histogram).toEqual({ edges: [], counts: [] });
  });

  it('fails the run with a reason per failing condition', () => {
    expect(summary.passed).toBe(false);
    expect(summary.reasons).toEqual([
      'row pass rate 0.43 is below 0.80',
      'metric bleu passes on 0.50 of rows, below its 0.90',
      'metric judge has no verdicts to meet its 0.50',
    ]);
  });

  it('passes when the row rate and every metric minimum are met', () => {
    const loose = summarize(items, [metrics[0], { ...metrics[1], min_pass_rate: 0.5 }], {
      ...strict,
      min_pass_rate: 0.4,
    });
    expect(loose.passed).toBe(true);
    expect(loose.reasons).toEqual([]);
  });

  it('prints more digits when two would hide the shortfall', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => item(`r${i}`, { passed: i < 799 }));
    expect(summarize(rows, [], { ...strict, min_pass_rate: 0.8 }).reasons).toEqual([
      'row pass rate 0.799 is below 0.800',
    ]);
  });

  it('has no verdict when no row has one', () => {
    const none = summarize([item('a', {}), item('b', { status: 'error' })], metrics, { ...strict, errors_fail: false });
    expect(none).toMatchObject({ pass_rate: null, passed: null, reasons: [] });
  });

  it('summarises latency by nearest rank and sums cost without float noise', () => {
    // Sorted latencies 50, 100, 200, 300, 400, 600: ranks ceil(3) = 3, ceil(5.4) = 6, ceil(5.94) = 6.
    expect(summary.latency_ms).toEqual({ mean: 275, p50: 200, p90: 600, p99: 600 });
    expect(summary.cost_usd_total).toBe(0.6);
  });

  it('breaks down by every dimension seen, null group last', () => {
    expect(summary.by_dimension.map((d) => d.dimension)).toEqual(['lang', 'topic']);
    const lang = summary.by_dimension[0].values;
    expect(lang.map((v) => [v.value, v.rows, v.pass_rate])).toEqual([
      ['de', 1, 1],
      ['en', 3, 0],
      ['fr', 2, 0.5],
      [null, 1, 1],
    ]);
    expect(lang[1].metrics.acc).toEqual({ mean: 3, pass_rate: 0 });
    expect(lang[1].metrics.bleu.mean).toBeCloseTo(0.55, 12);
    expect(lang[1].metrics.bleu.pass_rate).toBe(0.5);
    expect(lang[0].metrics.bleu).toEqual({ mean: null, pass_rate: null });
    expect(summary.by_dimension[1].values.map((v) => [v.value, v.rows])).toEqual([
      ['a', 1],
      [null, 6],
    ]);
  });

  it('breaks down by the named dimensions only', () => {
    const only = summarize(items, metrics, strict, ['topic', 'absent']);
    expect(only.by_dimension.map((d) => d.dimension)).toEqual(['topic', 'absent']);
    expect(only.by_dimension[1].values).toHaveLength(1);
    expect(only.by_dimension[1].values[0]).toMatchObject({ value: null, rows: 7 });
  });
});

describe('statistics helpers', () => {
  it('puts every value in one bin when min equals max', () => {
    expect(histogram([3, 3, 3])).toEqual({ edges: [3, 3], counts: [3] });
  });

  it('puts values on an inner edge in the upper bin', () => {
    // Edges 0, 0.1, ..., 1: 0.3 sits on an edge even though 0.3 / 0.1 is 2.9999999999999996 in floating point.
    const h = histogram([0, 0.3, 1]);
    expect(h.edges[3]).toBe(0.3);
    expect(h.counts).toEqual([1, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
  });

  it('takes the nearest rank', () => {
    expect(nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9)).toBe(9);
    expect(nearestRank([7], 0.99)).toBe(7);
    expect(nearestRank([], 0.5)).toBeNull();
  });
});

describe('summarize on one scale', () => {
  // A 1..5 rubric (normalised (score - 1) / 4) beside latency in ms (no scale).
  const judged = (score: number, passed: boolean): MetricScore => ({ score, passed, normalized: (score - 1) / 4 });
  const scaled: RunMetricSpec[] = [
    { name: 'correctness', better: 'higher', gating: true, min_pass_rate: null },
    { name: 'latency', better: 'lower', gating: false, min_pass_rate: null },
  ];
  const rows = [
    item('a', { scores: { correctness: judged(5, true), latency: s(200, true) }, passed: true }),
    item('b', { scores: { correctness: judged(3, false), latency: s(400, true) }, passed: false }),
    item('c', { scores: { correctness: judged(4, true), latency: s(600, false) }, passed: true }),
  ];
  const summary = summarize(rows, scaled, strict);
  const of = (name: string) => summary.metrics.find((m) => m.name === name)!;

  it("reports a judged rubric on 0..1 (its pass threshold's scale), the raw 1..5 mean beside it", () => {
    expect(of('correctness')).toMatchObject({ scale: 'normalized', min: 0.5, max: 1, raw_mean: 4 });
    expect(of('correctness').mean).toBeCloseTo(0.75, 12);
  });

  it('calls an unbounded count raw even when it passes its score as normalised', () => {
    const count: RunMetricSpec[] = [{ name: 'length', better: 'higher', gating: false, min_pass_rate: null }];
    const summary = summarize(
      [item('x', { scores: { length: { score: 42, passed: null, normalized: 42 } } })],
      count,
      strict,
    );
    expect(summary.metrics[0]).toMatchObject({ scale: 'raw', mean: 42, raw_mean: 42 });
  });

  it('keeps a metric without a scale raw', () => {
    expect(of('latency')).toMatchObject({ scale: 'raw', mean: 400, raw_mean: 400, min: 200, max: 600 });
  });
});

describe('SummaryAccumulator', () => {
  it('gives, fed an item at a time, what summarize gives over the whole list', () => {
    // Sized for 2 items, grown past it; `topic` first seen on the 1st item, `team` only on the 6th.
    const late = [...items.slice(0, 5), { ...items[5], dimensions: { lang: 'de', team: 'x' } }, items[6]];
    const fed = new SummaryAccumulator(metrics, strict, 2);
    for (const i of late) fed.add(i);
    expect(fed.result()).toEqual(summarize(late, metrics, strict));
    expect(fed.result().by_dimension.map((d) => d.dimension)).toEqual(['lang', 'team', 'topic']);
    expect(fed.result().by_dimension[1].values.map((v) => [v.value, v.rows])).toEqual([
      ['x', 1],
      [null, 6],
    ]);
  });

  it('sums each mean in ascending order, overall and per dimension value, whatever order the items came in', () => {
    // 0.1 + 0.7 + 0.3 is 1.0999999999999999; in ascending order, 0.1 + 0.3 + 0.7 is 1.1.
    expect(0.1 + 0.7 + 0.3).not.toBe(0.1 + 0.3 + 0.7);
    const one = [0.1, 0.7, 0.3].map((v, i) =>
      item(`v${i}`, { scores: { acc: s(v, true) }, dimensions: { lang: 'en' } }),
    );
    const fed = new SummaryAccumulator([metrics[0]], strict);
    for (const i of one) fed.add(i);
    const summary = fed.result();
    expect(summary.metrics[0].mean).toBe((0.1 + 0.3 + 0.7) / 3);
    expect(summary.by_dimension[0].values[0].metrics.acc.mean).toBe((0.1 + 0.3 + 0.7) / 3);
  });

  it('brings the repetitions of a row together for the trials when a list has them apart', () => {
    const apart = [
      item('a', { repetition: 0, passed: true }),
      item('b', { passed: true }),
      item('a', { repetition: 1, passed: false }),
    ];
    expect(summarize(apart, [], strict).trials).toMatchObject({
      repetitions: 2,
      rows: 2,
      repeated_rows: 1,
      flaky_rows: 1,
    });
  });
});
