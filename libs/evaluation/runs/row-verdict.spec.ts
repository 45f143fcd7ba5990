import { describe, expect, it } from '@jest/globals';
import { rowVerdict } from './row-verdict.js';
import type { MetricScore, PassRule, RunMetricSpec } from './run.types.js';

const metrics: RunMetricSpec[] = [
  { name: 'exact', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'f1', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'length', better: 'lower', gating: false, min_pass_rate: null },
];
const all: PassRule = { row: 'all', min_pass_rate: 0.8, errors_fail: true };
const any: PassRule = { ...all, row: 'any' };
const s = (score: number | null, passed: boolean | null): MetricScore => ({ score, passed });

describe('rowVerdict', () => {
  it("'all' passes only when every gating verdict passes", () => {
    expect(rowVerdict({ exact: s(1, true), f1: s(0.9, true) }, metrics, all)).toBe(true);
    expect(rowVerdict({ exact: s(1, true), f1: s(0.2, false) }, metrics, all)).toBe(false);
  });

  it("'any' passes when one gating verdict passes and fails when all fail", () => {
    expect(rowVerdict({ exact: s(1, true), f1: s(0.2, false) }, metrics, any)).toBe(true);
    expect(rowVerdict({ exact: s(0, false), f1: s(0.2, false) }, metrics, any)).toBe(false);
  });

  it('ignores non-gating metrics and gating metrics without a verdict', () => {
    // The failing length verdict is not gating; f1 has no threshold: only exact counts.
    expect(rowVerdict({ exact: s(1, true), f1: s(0.3, null), length: s(900, false) }, metrics, all)).toBe(true);
    expect(rowVerdict({ exact: s(0, false), f1: s(null, null) }, metrics, any)).toBe(false);
  });

  it('is null when no gating metric gave a verdict', () => {
    expect(rowVerdict({ exact: s(null, null), length: s(3, true) }, metrics, all)).toBeNull();
    expect(rowVerdict({}, metrics, any)).toBeNull();
    expect(rowVerdict({ exact: s(1, true) }, [], all)).toBeNull();
  });
});
