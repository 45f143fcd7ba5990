import { describe, expect, it } from '@jest/globals';
import { comparePairs, correctedFigure, validationResult, type JudgePair } from './judge-validation.js';
import { evaluateGate, type GateJudge, type GatePlan } from './runs/gate.js';
import type { RunSummary } from './runs/run.types.js';

const pair = (item: string, judge: boolean | null, human: boolean | null, topic = 'a'): JudgePair => ({
  item,
  judge_passed: judge,
  judge_score: null,
  judge_label: null,
  human_passed: human,
  human_score: null,
  dimensions: { topic },
});

// Wikipedia's Cohen example read as judge against humans: 20 both pass, 5 judge fails a human pass, 10 the reverse, 15 both fail.
const WIKIPEDIA = [
  ...Array.from({ length: 20 }, (_, i) => pair(`tp${i}`, true, true, 'x')),
  ...Array.from({ length: 5 }, (_, i) => pair(`fn${i}`, false, true, 'y')),
  ...Array.from({ length: 10 }, (_, i) => pair(`fp${i}`, true, false, 'x')),
  ...Array.from({ length: 15 }, (_, i) => pair(`tn${i}`, false, false, 'y')),
];

describe('validationResult', () => {
  it("gives the library's figures for the pairs: confusion matrix, Wilson rates, kappa and groups", () => {
    const r = validationResult(WIKIPEDIA, { level: 0.95, seed: 42, dimension: 'topic' });
    expect(r.confusion).toEqual({
      true_positive: 20,
      false_positive: 10,
      true_negative: 15,
      false_negative: 5,
      items: 50,
    });
    expect(r.true_positive_rate).toEqual(expect.objectContaining({ value: 0.8, successes: 20, trials: 25 }));
    expect(r.true_positive_rate.interval!.low).toBeCloseTo(0.609, 3);
    expect(r.true_negative_rate.value).toBe(0.6);
    expect(r.kappa.value).toBeCloseTo(0.4, 12);
    expect(r.kappa.interval).not.toBeNull();
    expect(r.by_dimension!.groups.map((g) => [g.value, g.confusion.items])).toEqual([
      ['x', 30],
      ['y', 20],
    ]);
    expect(r.scores).toBeNull();
    expect(r.human_agreement).toBeNull();
    expect(validationResult(WIKIPEDIA, { level: 0.95, seed: 42 })).toEqual({ ...r, by_dimension: null });
  });

  it("measures the reviewers' agreement when items carry several reviews", () => {
    const reviewed = WIKIPEDIA.map((p, i) => ({
      ...p,
      reviews: [p.human_passed, i % 10 === 0 ? !p.human_passed : p.human_passed],
    }));
    const r = validationResult(reviewed, { level: 0.95, seed: 1 });
    expect(r.human_agreement).toEqual(expect.objectContaining({ reviewers: 2, items: 50 }));
    expect(r.human_agreement!.percent_agreement.value).toBeCloseTo(45 / 50, 12);
  });
});

describe('comparePairs', () => {
  it('tests two judges on the shared items with the same human label (exact McNemar)', () => {
    const base = [
      pair('1', true, true),
      pair('2', false, true),
      pair('3', true, false),
      pair('4', true, true),
      pair('5', true, true),
    ];
    const candidate = [
      pair('1', true, true),
      pair('2', true, true),
      pair('3', false, false),
      pair('4', true, false),
      pair('9', true, true),
    ];
    const c = comparePairs(base, candidate);
    expect(c).toEqual(
      expect.objectContaining({
        shared_items: 4,
        human_label_conflicts: 1,
        items: 3,
        only_a_correct: 0,
        only_b_correct: 2,
      }),
    );
    expect(c.mcnemar.p_value).toBeCloseTo(0.5, 12);
  });
});

describe('correctedFigure', () => {
  it('is Rogan-Gladen with the Lang-Reiczigel interval (review-statistics.md: Se 90/100, Sp 80/100, 340 of 1,000)', () => {
    const c = correctedFigure(340, 1000, {
      id: 'v',
      confusion: { true_positive: 90, false_negative: 10, true_negative: 80, false_positive: 20, items: 200 },
    });
    expect(c.pass_rate).toBeCloseTo(0.2, 12);
    expect(c.interval!.low).toBeCloseTo(0.085, 3);
    expect(c.interval!.high).toBeCloseTo(0.291, 3);
    const coin = correctedFigure(5, 10, {
      id: 'v',
      confusion: { true_positive: 5, false_negative: 5, true_negative: 5, false_positive: 5, items: 20 },
    });
    expect(coin).toEqual(
      expect.objectContaining({ pass_rate: null, reason: expect.stringMatching(/does not tell passes from fails/) }),
    );
  });
});

describe('the gate and judge validity', () => {
  const summary = { metrics: [], by_dimension: [], pass_rate: 1 } as unknown as RunSummary;
  const plan = (on_failure: 'fail' | 'warn'): GatePlan => ({
    metrics: [
      {
        name: 'grader',
        threshold: { operator: '>=', value: -1 },
        per_dimension: [],
        gating: false,
        validation: { min_kappa_lower: 0.6, min_rates_lower: null, on_failure },
      },
    ],
    release_rule: {
      mode: 'all_metrics',
      min_metrics_passing: null,
      include_dimension_thresholds: true,
      min_row_pass_rate: null,
    },
  });
  const judge = (kappaLow: number | null): GateJudge => ({
    metric: 'grader',
    config: { name: 'grader', version: 3 },
    validation:
      kappaLow === null
        ? null
        : { id: 'v1', kappa_low: kappaLow, true_positive_rate_low: 0.9, true_negative_rate_low: 0.9 },
    corrected: null,
  });
  const gate = (on: 'fail' | 'warn', j: GateJudge) =>
    evaluateGate({
      run: { state: 'succeeded', pass_rule: { row: 'all', min_pass_rate: 0, errors_fail: true }, metrics: [] },
      summary,
      plan: plan(on),
      baseline: null,
      judges: [j],
    });
  const check = (r: ReturnType<typeof gate>) => r.checks.find((c) => c.kind === 'judge_validity')!;

  it('refuses an unvalidated judge (fail), warns under warn, and passes a judge whose kappa bound clears the plan', () => {
    expect(gate('fail', judge(null)).verdict).toBe('fail');
    expect(check(gate('fail', judge(null))).message).toMatch(/grader v3\) is unvalidated/);
    expect(gate('warn', judge(null)).verdict).toBe('pass');
    expect(check(gate('warn', judge(null)))).toEqual(expect.objectContaining({ status: 'fail', blocking: false }));
    expect(check(gate('fail', judge(0.55)))).toEqual(expect.objectContaining({ status: 'fail', observed: 0.55 }));
    expect(check(gate('fail', judge(0.65)))).toEqual(expect.objectContaining({ status: 'pass', observed: 0.65 }));
    expect(
      gate('fail', { ...judge(null), config: null }).checks.find((c) => c.kind === 'judge_validity')!.message,
    ).toMatch(/built-in defaults/);
  });
});
