import { describe, expect, it } from '@jest/globals';
import type { JudgedSpec } from '../../catalogues/entities/metric-config.entity.js';
import { humanVerdict } from './judge-validity.service.js';

const numeric: JudgedSpec = {
  rubric: 'r',
  scale: { type: 'numeric', min: 1, max: 5 },
  pass_threshold: 0.75,
  pass_labels: null,
};
const labels: JudgedSpec = {
  rubric: 'r',
  scale: { type: 'labels', labels: ['polite', 'neutral', 'rude'] },
  pass_threshold: null,
  pass_labels: ['polite', 'neutral'],
};

describe('a human label as a verdict', () => {
  it('reads true/false and the usual words, case-insensitively; anything else is no label', () => {
    expect([true, false, 'PASS', 'passed', 'Yes', '1', 0].map((v) => humanVerdict(v, null, null))).toEqual([
      true,
      false,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect([null, undefined, '', 'maybe'].map((v) => humanVerdict(v, null, null))).toEqual([null, null, null, null]);
  });

  it("passes a number on the judge's numeric scale as the judge's threshold would, and a label by its pass labels", () => {
    // 0.75 of 1..5 is 4: 4 and 5 pass, 3 fails.
    expect([5, 4, 3, 1].map((v) => humanVerdict(v, null, numeric))).toEqual([true, true, false, false]);
    expect(['Polite', 'neutral', 'rude'].map((v) => humanVerdict(v, null, labels))).toEqual([true, true, false]);
  });

  it('with `positive`, passes exactly those values (as text) and fails every other', () => {
    const positive = new Set(['good', '5']);
    expect(['GOOD', 5, 'pass', true].map((v) => humanVerdict(v, positive, numeric))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
