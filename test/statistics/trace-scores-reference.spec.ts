import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { wilsonInterval } from '#libs/evaluation/statistics/judge-validity.js';
import { tMeanInterval } from '#libs/evaluation/statistics/mean-interval.js';
import { TRACE_SCORES_REFERENCE } from './trace-scores-reference.js';

const script = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'trace-scores-reference.py');
const TOLERANCE = 1e-9;

/**
 * The intervals of GET /traces/scores:aggregate against SciPy's (trace-scores-reference.py: Wilson
 * by binomtest's proportion_ci, Student's t by stats.t.interval) on every bucket the reference
 * computes; the counts, means and SDs the database computes are checked end to end by
 * test/e2e/traces/scores.e2e-spec.ts against the same file. Wilson's coverage is proven by
 * libs/evaluation/statistics/judge-validity.spec.ts, the t interval's by mean-interval.spec.ts.
 */
describe('trace score aggregates against the Python reference', () => {
  const buckets = TRACE_SCORES_REFERENCE.aggregates.flatMap((a) => a.buckets);

  it('holds buckets of every kind: with and without verdicts, one score, errors', () => {
    expect(buckets.length).toBeGreaterThan(30);
    expect(buckets.some((b) => b.scored === 1 && b.mean_interval === null && b.sd === null)).toBe(true);
    expect(buckets.some((b) => b.errored > 0)).toBe(true);
    expect(buckets.some((b) => b.failed > 0 && b.passed > 0)).toBe(true);
  });

  it("gives SciPy's Wilson and t intervals for each bucket", () => {
    for (const b of buckets) {
      const wilson = wilsonInterval(b.passed, b.passed + b.failed);
      const t = b.mean === null ? null : tMeanInterval(b.mean, b.sd, b.scored);
      for (const [what, got, want] of [
        ['wilson', wilson, b.pass_rate_interval],
        ['t', t, b.mean_interval],
      ] as const) {
        if (want === null) expect({ what, got }).toEqual({ what, got: null });
        else {
          expect(Math.abs(got!.low - want.low)).toBeLessThan(TOLERANCE);
          expect(Math.abs(got!.high - want.high)).toBeLessThan(TOLERANCE);
        }
      }
    }
  });

  const python = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
  (python.status === 0 ? it : it.skip)(
    'the kept reference is what the script prints (run where Python has NumPy and SciPy)',
    () => {
      const run = spawnSync('python3', [script], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      expect(run.status).toBe(0);
      // SciPy's last bits may differ between versions: the numbers agree within the tolerance.
      const flat = (r: unknown) => JSON.stringify(r, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v));
      expect(flat(JSON.parse(run.stdout))).toBe(flat(TRACE_SCORES_REFERENCE));
    },
    60_000,
  );
});
