import { describe, expect, it } from '@jest/globals';
import { answeredItem } from '../../../test/factories/item-result.js';
import { passAtK, passHatK, summarizeTrials } from './trials.js';
import type { ItemResult, PassRule, RunMetricSpec } from './run.types.js';

/** The numerically stable form printed in Chen et al. 2021 (Codex), Figure 3: 1 - prod(1 - k / arange(n - c + 1, n + 1)). */
function codexPassAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let product = 1;
  for (let i = n - c + 1; i <= n; i++) product *= 1 - k / i;
  return 1 - product;
}

const binomial = (n: number, k: number): number =>
  k < 0 || k > n ? 0 : k === 0 ? 1 : (binomial(n - 1, k - 1) * n) / k;

describe('pass@k and pass^k', () => {
  it('agree with the Codex paper estimator and the binomial definitions', () => {
    for (let n = 1; n <= 10; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++) {
          expect(passAtK(n, c, k)).toBeCloseTo(codexPassAtK(n, c, k), 12);
          expect(passAtK(n, c, k)).toBeCloseTo(1 - binomial(n - c, k) / binomial(n, k), 12);
          // tau-bench (Yao et al. 2024, eq. 1): pass^k = C(c, k) / C(n, k).
          expect(passHatK(n, c, k)).toBeCloseTo(binomial(c, k) / binomial(n, k), 12);
        }
      }
    }
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 12);
    // k = 1 is the plain pass rate either way.
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(passHatK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(() => passAtK(2, 1, 3)).toThrow(RangeError);
  });
});

describe('summarizeTrials', () => {
  const rule: PassRule = { row: 'all', min_pass_rate: 0.5, errors_fail: true };
  const metrics: RunMetricSpec[] = [{ name: 'judge', better: 'higher', gating: true, min_pass_rate: null }];
  const item = (row: string, repetition: number, score: number | null, status: 'done' | 'error' = 'done'): ItemResult =>
    answeredItem(row, {
      repetition,
      status,
      output: null,
      scores: score === null ? {} : { judge: { score, passed: score >= 0.5 } },
      passed: score === null ? null : score >= 0.5,
    });

  it('computes pass@k, pass^k, flaky rows and each metric spread across three repetitions', () => {
    const items = [
      // a: always passes; b: 2 of 3 (flaky); c: never; d: one error (fails by the rule) and two passes (flaky).
      item('a', 0, 0.9),
      item('a', 1, 0.9),
      item('a', 2, 0.9),
      item('b', 0, 0.8),
      item('b', 1, 0.2),
      item('b', 2, 0.8),
      item('c', 0, 0.1),
      item('c', 1, 0.1),
      item('c', 2, 0.1),
      item('d', 0, null, 'error'),
      item('d', 1, 0.6),
      item('d', 2, 0.6),
    ];
    const trials = summarizeTrials(items, metrics, rule);
    expect(trials).toMatchObject({
      repetitions: 3,
      rows: 4,
      repeated_rows: 4,
      flaky_rows: 2,
      flaky_share: 0.5,
      stability: 'unstable',
    });
    // pass@1 = mean(1, 2/3, 0, 2/3); pass@3 = mean(1, 1, 0, 1); pass^3 = mean(1, 0, 0, 0).
    expect(trials.by_k.map((b) => b.k)).toEqual([1, 2, 3]);
    expect(trials.by_k[0].pass_at_k).toBeCloseTo((1 + 2 / 3 + 0 + 2 / 3) / 4, 12);
    expect(trials.by_k[0].pass_hat_k).toBeCloseTo(trials.by_k[0].pass_at_k!, 12);
    expect(trials.by_k[2]).toEqual({ k: 3, rows: 4, pass_at_k: 0.75, pass_hat_k: 0.25 });
    // pass^2 of a 2-of-3 row: C(2,2)/C(3,2) = 1/3.
    expect(trials.by_k[1].pass_hat_k).toBeCloseTo((1 + 1 / 3 + 0 + 1 / 3) / 4, 12);
    expect(trials.flaky_examples).toEqual([
      {
        row_id: 'b',
        trials: 3,
        passed: 2,
        pass_at_k: [expect.closeTo(2 / 3, 12), 1, 1],
        pass_hat_k: [2 / 3, expect.closeTo(1 / 3, 12), 0],
      },
      {
        row_id: 'd',
        trials: 3,
        passed: 2,
        pass_at_k: [expect.closeTo(2 / 3, 12), 1, 1],
        pass_hat_k: [2 / 3, expect.closeTo(1 / 3, 12), 0],
      },
    ]);
    const judge = trials.metrics[0];
    // Only b varies: sample variance of 0.8, 0.2, 0.8 is 0.12; d's two equal scores add 0.
    expect(judge.rows).toBe(4);
    expect(judge.within_row_variance).toBeCloseTo(0.12 / 4, 12);
    expect(judge.repetition_means).toEqual([
      expect.closeTo(0.6, 12),
      expect.closeTo(0.45, 12),
      expect.closeTo(0.6, 12),
    ]);
    expect(judge.flaky_rows).toBe(1);
    expect(judge.between_repetition_std).toBeCloseTo(Math.sqrt((0.05 ** 2 * 2 + 0.1 ** 2) / 2), 12);
  });

  it('says single_trial for one repetition and leaves errored rows out when errors do not fail', () => {
    const once = summarizeTrials([item('a', 0, 0.9), item('b', 0, 0.1), item('c', 0, null, 'error')], metrics, {
      ...rule,
      errors_fail: false,
    });
    expect(once).toMatchObject({
      repetitions: 1,
      rows: 2,
      repeated_rows: 0,
      flaky_rows: 0,
      flaky_share: null,
      stability: 'single_trial',
      by_k: [{ k: 1, rows: 2, pass_at_k: 0.5, pass_hat_k: 0.5 }],
    });
    expect(once.metrics[0]).toMatchObject({ rows: 0, within_row_variance: null, between_repetition_std: null });
    const steady = summarizeTrials([item('a', 0, 0.9), item('a', 1, 0.9)], metrics, rule);
    expect(steady.stability).toBe('stable');
  });
});
