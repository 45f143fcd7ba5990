import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Xoshiro128 } from '#libs/evaluation/statistics/bootstrap.js';
import { wilsonInterval } from '#libs/evaluation/statistics/judge-validity.js';
import {
  chooseDropTest,
  evaluateDrop,
  fisherExactOneSided,
  INITIAL_ALERT_STATE,
  newcombeInterval,
  nextAlertState,
  twoProportionZLess,
  type AlertState,
  type DropEvaluation,
  type DropRule,
  type WindowCount,
} from './drop-alert.js';

/**
 * One-sided p-values printed by test/statistics/online-statistics-reference.py (SciPy's
 * `fisher_exact(..., alternative='less'/'greater')` on [[x1, n1 - x1], [x0, n0 - x0]], and the
 * pooled z-test written from its formula). `table` is [x1, n1, x0, n0]: recent, then reference.
 * Where Python has NumPy and SciPy, the script is run again and must still print these.
 */
const REFERENCE: Array<{
  table: [number, number, number, number];
  fisher_less: number;
  fisher_greater: number;
  z_less: number | null;
}> = [
  {
    table: [3, 10, 9, 10],
    fisher_less: 0.009883305548940223,
    fisher_greater: 0.9996427720885925,
    z_less: 0.0030849496602720753,
  },
  { table: [0, 5, 5, 5], fisher_less: 0.003968253968253969, fisher_greater: 1, z_less: 0.000782701129001274 },
  { table: [0, 12, 0, 15], fisher_less: 1, fisher_greater: 1, z_less: null },
  { table: [10, 10, 7, 10], fisher_less: 1, fisher_greater: 0.10526315789473684, z_less: 0.9698554130046989 },
  {
    table: [1, 20, 4, 20],
    fisher_less: 0.17082467082467084,
    fisher_greater: 0.9764379764379765,
    z_less: 0.07574699620211006,
  },
  {
    table: [48, 80, 56, 70],
    fisher_less: 0.006324711129898369,
    fisher_greater: 0.9978752684504457,
    z_less: 0.00402254068409828,
  },
  {
    table: [280, 400, 320, 400],
    fisher_less: 0.0007076746740741428,
    fisher_greater: 0.9996046952652637,
    z_less: 0.0005454175880626423,
  },
  {
    table: [310, 400, 320, 400],
    fisher_less: 0.21835927644924194,
    fisher_greater: 0.8291132901512893,
    z_less: 0.19371934515605244,
  },
  { table: [5, 50, 0, 40], fisher_less: 1, fisher_greater: 0.048209221596136706, z_less: 0.9802041183816548 },
  {
    table: [700, 1000, 820, 1000],
    fisher_less: 1.9827898361786318e-10,
    fisher_greater: 0.9999999999000458,
    z_less: 1.6625514454605014e-10,
  },
];

const script = join(import.meta.dirname, '..', '..', '..', 'test', 'statistics', 'online-statistics-reference.py');

const RULE: DropRule = {
  min_samples: 100,
  min_drop: 0.03,
  alpha: 0.05,
  alpha_resolve: 0.2,
  fire_after: 3,
  resolve_after: 3,
};

function windows(table: readonly number[]): [WindowCount, WindowCount] {
  return [
    { passes: table[0], trials: table[1] },
    { passes: table[2], trials: table[3] },
  ];
}

function expectClose(actual: number | null, expected: number | null, what: string): void {
  const close =
    actual === expected ||
    (actual !== null &&
      expected !== null &&
      Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(expected), 1e-300));
  expect({ what, actual, close }).toEqual({ what, actual, close: true });
}

/** Passes among n draws at rate p. */
function binomial(random: Xoshiro128, n: number, p: number): number {
  let passes = 0;
  for (let i = 0; i < n; i++) if (random.nextFloat() < p) passes++;
  return passes;
}

function evaluateAt(random: Xoshiro128, n: number, reference: number, recent: number, rule: DropRule): DropEvaluation {
  return evaluateDrop(
    { passes: binomial(random, n, recent), trials: n },
    { passes: binomial(random, n, reference), trials: n },
    rule,
  );
}

describe('drop alert: the tests', () => {
  it.each(REFERENCE)(
    'Fisher and z p-values equal SciPy on $table',
    ({ table, fisher_less, fisher_greater, z_less }) => {
      const [recent, reference] = windows(table);
      expectClose(fisherExactOneSided(recent, reference, 'less'), fisher_less, 'fisher less');
      expectClose(fisherExactOneSided(recent, reference, 'greater'), fisher_greater, 'fisher greater');
      expectClose(twoProportionZLess(recent, reference), z_less, 'z less');
    },
  );

  const python = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
  (python.status === 0 ? it : it.skip)(
    'the kept p-values are what the script prints (run where Python has NumPy and SciPy)',
    () => {
      const run = spawnSync('python3', [script], { encoding: 'utf8' });
      expect(run.status).toBe(0);
      // SciPy's last bits may differ between versions: the numbers agree to 10 significant digits.
      const flat = (rows: unknown) =>
        JSON.stringify(rows, (_, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v));
      expect(flat(JSON.parse(run.stdout))).toBe(flat(REFERENCE));
    },
    60_000,
  );

  it('uses Fisher when an expected cell count is under 5 and the z-test otherwise', () => {
    // 3 and 9 passes of 10 each: 4 failures expected in each window.
    expect(chooseDropTest(...windows([3, 10, 9, 10]))).toBe('fisher_exact');
    expect(chooseDropTest(...windows([5, 50, 0, 40]))).toBe('fisher_exact');
    // 104 passes, 46 failures of 150: the fewest expected is 46 * 70 / 150 = 21.5.
    expect(chooseDropTest(...windows([48, 80, 56, 70]))).toBe('two_proportion_z');
    expect(chooseDropTest(...windows([280, 400, 320, 400]))).toBe('two_proportion_z');
  });

  // Newcombe (1998), Table II, method 10 (hybrid score, no continuity correction): p1 - p0.
  it.each([
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [6, 7, 2, 7, 0.0582, 0.8062],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ])("Newcombe's interval for %d/%d - %d/%d is his published %d..%d", (x1, n1, x0, n0, low, high) => {
    const interval = newcombeInterval({ passes: x1, trials: n1 }, { passes: x0, trials: n0 })!;
    expect([Number(interval.low.toFixed(4)), Number(interval.high.toFixed(4))]).toEqual([low, high]);
  });
});

describe('drop alert: one evaluation', () => {
  it('carries its evidence: counts, both shares with Wilson intervals, the difference with its interval, p and the test', () => {
    const evaluation = evaluateDrop({ passes: 280, trials: 400 }, { passes: 320, trials: 400 }, RULE);
    expect(evaluation).toEqual({
      verdict: 'breach',
      reason: null,
      recent: { value: 0.7, successes: 280, trials: 400, interval: wilsonInterval(280, 400), reason: null },
      reference: { value: 0.8, successes: 320, trials: 400, interval: wilsonInterval(320, 400), reason: null },
      difference: {
        value: 0.7 - 0.8,
        interval: newcombeInterval({ passes: 280, trials: 400 }, { passes: 320, trials: 400 }),
      },
      p_value: twoProportionZLess({ passes: 280, trials: 400 }, { passes: 320, trials: 400 }),
      test: 'two_proportion_z',
    });
    // The same p as SciPy's (the kept reference), and a difference whose interval lies below 0.
    expectClose(evaluation.verdict === 'breach' ? evaluation.p_value : null, REFERENCE[6].z_less, 'p');
    expect(evaluation.verdict === 'breach' && evaluation.difference.interval.high < 0).toBe(true);
  });

  it('gives no verdict below min_samples in either window, and says which', () => {
    const evaluation = evaluateDrop({ passes: 0, trials: 99 }, { passes: 320, trials: 400 }, RULE);
    expect(evaluation).toEqual({
      verdict: 'no_verdict',
      reason: 'the recent window has fewer than 100 scored traces (recent 99, reference 400)',
      recent: { passes: 0, trials: 99 },
      reference: { passes: 320, trials: 400 },
    });
    const both = evaluateDrop({ passes: 0, trials: 0 }, { passes: 5, trials: 10 }, RULE);
    expect(both.reason).toBe(
      'the recent and reference windows have fewer than 100 scored traces (recent 0, reference 10)',
    );
  });

  it('refuses impossible counts and a rule whose alpha_resolve is not above alpha', () => {
    const good = { passes: 320, trials: 400 };
    for (const bad of [
      { passes: 401, trials: 400 },
      { passes: -1, trials: 400 },
      { passes: 1.5, trials: 400 },
    ]) {
      expect(() => evaluateDrop(bad, good, RULE)).toThrow(RangeError);
      expect(() => evaluateDrop(good, bad, RULE)).toThrow(RangeError);
    }
    expect(() => evaluateDrop(good, good, { ...RULE, alpha_resolve: 0.05 })).toThrow(RangeError);
  });

  it('never breaches on a drop smaller than min_drop, however significant', () => {
    // 78% against 80% over 100,000 traces each: p is about 1e-28, but the drop is 2 points.
    const evaluation = evaluateDrop({ passes: 78_000, trials: 100_000 }, { passes: 80_000, trials: 100_000 }, RULE);
    expect(evaluation.verdict).toBe('inconclusive');
    if (evaluation.verdict === 'no_verdict') return;
    expect(evaluation.p_value).toBeLessThan(1e-20);
  });

  it('is calm on a rise and inconclusive between alpha and alpha_resolve', () => {
    expect(evaluateDrop({ passes: 330, trials: 400 }, { passes: 320, trials: 400 }, RULE).verdict).toBe('calm');
    // 75% against 78.75%: p = 0.104, between alpha (0.05) and alpha_resolve (0.2).
    const between = evaluateDrop({ passes: 300, trials: 400 }, { passes: 315, trials: 400 }, RULE);
    expect(between.verdict).toBe('inconclusive');
    expectClose(between.verdict === 'inconclusive' ? Number(between.p_value.toFixed(3)) : null, 0.104, 'p');
  });
});

describe('drop alert: hysteresis', () => {
  const breach = evaluateDrop({ passes: 280, trials: 400 }, { passes: 320, trials: 400 }, RULE);
  const calm = evaluateDrop({ passes: 330, trials: 400 }, { passes: 320, trials: 400 }, RULE);
  const between = evaluateDrop({ passes: 300, trials: 400 }, { passes: 315, trials: 400 }, RULE);
  const none = evaluateDrop({ passes: 1, trials: 2 }, { passes: 320, trials: 400 }, RULE);

  function run(evaluations: DropEvaluation[], start: AlertState = INITIAL_ALERT_STATE): string {
    let state = start;
    return evaluations
      .map((evaluation) => {
        state = nextAlertState(state, evaluation, RULE);
        return state.status === 'firing' ? 'F' : '.';
      })
      .join('');
  }

  it('fires on the third breach in a row, not before, and any other evaluation breaks the streak', () => {
    expect([breach.verdict, calm.verdict, between.verdict, none.verdict]).toEqual([
      'breach',
      'calm',
      'inconclusive',
      'no_verdict',
    ]);
    expect(run([breach, breach, breach])).toBe('..F');
    expect(run([breach, breach, between, breach, breach, none, breach, breach, breach])).toBe('........F');
  });

  it('resolves on the third calm evaluation in a row; breaches and inconclusive ones keep it firing', () => {
    const firing: AlertState = { status: 'firing', breaches: 0, calms: 0 };
    expect(run([calm, calm, calm], firing)).toBe('FF.');
    expect(run([calm, calm, between, calm, calm, breach, calm, calm, calm, breach], firing)).toBe('FFFFFFFF..');
  });
});

describe('drop alert: simulated', () => {
  const REPETITIONS = 1000;

  it('under no change (80% in both windows of 400) breaches in 5% ± 2 points of single evaluations', () => {
    const random = new Xoshiro128(1);
    let breaches = 0;
    for (let i = 0; i < REPETITIONS; i++) if (evaluateAt(random, 400, 0.8, 0.8, RULE).verdict === 'breach') breaches++;
    // Seed 1: 56 of 1,000 (the z-test's level is 5%).
    expect(breaches / REPETITIONS).toBeGreaterThanOrEqual(0.03);
    expect(breaches / REPETITIONS).toBeLessThanOrEqual(0.07);
  });

  it('under no change, fire_after = 3 fires in far fewer 50-evaluation streams than firing on one breach', () => {
    const random = new Xoshiro128(2);
    let firedOnOne = 0;
    let firedOnThree = 0;
    for (let i = 0; i < REPETITIONS; i++) {
      let one = INITIAL_ALERT_STATE;
      let three = INITIAL_ALERT_STATE;
      let oneFired = false;
      let threeFired = false;
      for (let k = 0; k < 50; k++) {
        const evaluation = evaluateAt(random, 400, 0.8, 0.8, RULE);
        one = nextAlertState(one, evaluation, { ...RULE, fire_after: 1 });
        three = nextAlertState(three, evaluation, RULE);
        oneFired ||= one.status === 'firing';
        threeFired ||= three.status === 'firing';
      }
      if (oneFired) firedOnOne++;
      if (threeFired) firedOnThree++;
    }
    // About 1 - 0.95^50 = 92% of streams see a breach; three in a row, about 48 * 0.05^3 = 0.6%.
    // Seed 2: 930 and 6 of 1,000.
    expect(firedOnOne / REPETITIONS).toBeGreaterThan(0.85);
    expect(firedOnThree / REPETITIONS).toBeLessThan(0.02);
  }, 60_000);

  it('a planted drop from 80% to 70% fires within fire_after evaluations in at least 95% of repetitions (800 a window)', () => {
    const random = new Xoshiro128(3);
    let fired = 0;
    for (let i = 0; i < REPETITIONS; i++) {
      let state = INITIAL_ALERT_STATE;
      for (let k = 0; k < RULE.fire_after; k++)
        state = nextAlertState(state, evaluateAt(random, 800, 0.8, 0.7, RULE), RULE);
      if (state.status === 'firing') fired++;
    }
    // Seed 3: 996 of 1,000. At 400 a window one evaluation has about 95% power, so three in a row only about 86%.
    expect(fired / REPETITIONS).toBeGreaterThanOrEqual(0.95);
  }, 60_000);
});
