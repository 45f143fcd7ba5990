import { describe, expect, it } from '@jest/globals';
import { evaluateDrop, INITIAL_ALERT_STATE } from '#libs/evaluation/online/drop-alert.js';
import { checkWindows, evaluationOf, settingsProblem, transitionOf, type CheckSettings } from './alerts.rules.js';

const SETTINGS: CheckSettings = {
  recent_seconds: 3600,
  reference: { kind: 'trailing', seconds: 86400 },
  alpha: 0.05,
  alpha_resolve: 0.2,
  min_samples: 100,
  min_drop: 0.03,
  fire_after: 3,
  resolve_after: 3,
};
const NOW = new Date('2026-11-29T10:00:00.000Z');

describe('alert checks: windows', () => {
  it('takes the recent hour and the trailing day right before it', () => {
    const { recent, reference } = checkWindows(SETTINGS, NOW);
    expect([recent.from.toISOString(), recent.to.toISOString()]).toEqual([
      '2026-11-29T09:00:00.000Z',
      '2026-11-29T10:00:00.000Z',
    ]);
    expect([reference.from.toISOString(), reference.to.toISOString()]).toEqual([
      '2026-11-28T09:00:00.000Z',
      '2026-11-29T09:00:00.000Z',
    ]);
  });

  it('keeps a fixed baseline where it is, whenever the check runs', () => {
    const from = new Date('2026-11-01T00:00:00.000Z');
    const to = new Date('2026-11-08T00:00:00.000Z');
    const { recent, reference } = checkWindows({ ...SETTINGS, reference: { kind: 'fixed', from, to } }, NOW);
    expect(recent.from.toISOString()).toBe('2026-11-29T09:00:00.000Z');
    expect(reference).toEqual({ from, to });
  });
});

describe('alert checks: settings', () => {
  it('accepts a rule that holds together', () => {
    expect(settingsProblem(SETTINGS)).toBeNull();
  });

  it('names the member at fault', () => {
    expect(settingsProblem({ ...SETTINGS, alpha: 0.2, alpha_resolve: 0.2 })?.field).toBe('alpha_resolve');
    const day = new Date('2026-11-01T00:00:00.000Z');
    expect(settingsProblem({ ...SETTINGS, reference: { kind: 'fixed', from: day, to: day } })).toEqual({
      field: 'reference.to',
      detail: 'a fixed reference window needs `from` before `to`',
    });
    const later = new Date(day.getTime() + 367 * 86400_000);
    expect(settingsProblem({ ...SETTINGS, reference: { kind: 'fixed', from: day, to: later } })?.detail).toMatch(
      /366 days/,
    );
  });
});

describe('alert checks: evidence', () => {
  const windows = checkWindows(SETTINGS, NOW);

  it("carries the worked example's figures (docs/review-statistics.md): 280/400 against 320/400", () => {
    const recent = { passes: 280, trials: 400, errored: 3 };
    const reference = { passes: 320, trials: 400, errored: 0 };
    const drop = evaluateDrop(recent, reference, SETTINGS);
    const state = { status: 'ok' as const, breaches: 1, calms: 0 };
    const evaluation = evaluationOf(drop, windows, { recent, reference }, state, NOW);
    expect(evaluation).toMatchObject({
      checked_at: '2026-11-29T10:00:00.000Z',
      verdict: 'breach',
      reason: null,
      test: 'two_proportion_z',
      state,
      recent: { from: '2026-11-29T09:00:00.000Z', passes: 280, trials: 400, errored: 3, rate: 0.7 },
      reference: { to: '2026-11-29T09:00:00.000Z', passes: 320, trials: 400, errored: 0, rate: 0.8 },
    });
    expect(evaluation.p_value).toBeCloseTo(0.000545, 5);
    expect(evaluation.difference!.value).toBeCloseTo(-0.1, 12);
    expect(evaluation.difference!.interval.low).toBeCloseTo(-0.159, 3);
    expect(evaluation.difference!.interval.high).toBeCloseTo(-0.04, 3);
    expect(evaluation.recent.interval!.low).toBeCloseTo(0.653, 3);
    expect(JSON.parse(JSON.stringify(evaluation))).toEqual(evaluation);
  });

  it('says why there is no verdict, with the counts it had', () => {
    const recent = { passes: 20, trials: 40, errored: 1 };
    const reference = { passes: 0, trials: 0, errored: 0 };
    const drop = evaluateDrop(recent, reference, SETTINGS);
    const evaluation = evaluationOf(drop, windows, { recent, reference }, INITIAL_ALERT_STATE, NOW);
    expect(evaluation).toMatchObject({
      verdict: 'no_verdict',
      reason: 'the recent and reference windows have fewer than 100 scored traces (recent 40, reference 0)',
      test: null,
      p_value: null,
      difference: null,
      recent: { passes: 20, trials: 40, errored: 1, rate: 0.5, interval: null },
      reference: { trials: 0, rate: null, interval: null },
    });
  });
});

describe('alert checks: transitions', () => {
  it('names a firing and a resolution, and nothing else', () => {
    const ok = INITIAL_ALERT_STATE;
    const firing = { status: 'firing' as const, breaches: 0, calms: 0 };
    expect(transitionOf(ok, firing)).toBe('firing');
    expect(transitionOf(firing, ok)).toBe('resolved');
    expect(transitionOf(ok, { ...ok, breaches: 2 })).toBeNull();
    expect(transitionOf(firing, { ...firing, calms: 1 })).toBeNull();
  });
});
