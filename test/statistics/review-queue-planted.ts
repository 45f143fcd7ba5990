/** The planted labels of test/e2e/review/review-flow.e2e-spec.ts and their expected agreement. */

/**
 * The planted labels of two reviewers on 60 items, from a linear congruential generator that
 * test/statistics/review-queue-planted.py writes out the same way; that script computes the
 * expected figures below by the independent definitions of review-statistics-reference.py.
 */
export function planted(items = 60, seed = 20251129) {
  let state = BigInt(seed);
  const uniform = () => {
    state = (1103515245n * state + 12345n) % 2n ** 31n;
    return Number(state) / 2 ** 31;
  };
  return Array.from({ length: items }, () => {
    const truth = uniform() < 0.6;
    const flip = uniform() < 0.15;
    const base = 1 + Math.floor(uniform() * 5);
    const nudge = uniform() < 0.25;
    return {
      a: { correct: truth, score: base },
      b: { correct: truth !== flip, score: base + (nudge ? (base < 5 ? 1 : -1) : 0) },
    };
  });
}

/** python3 test/statistics/review-queue-planted.py */
export const EXPECTED = {
  disagreements: 8,
  correct: { cohens_kappa: 0.7250859106529209, alpha_nominal: 0.724537037037037 },
  score: { cohens_kappa: 0.7624190064794816, alpha_interval: 0.964226175835588, alpha_ordinal: 0.9534435482385872 },
};
