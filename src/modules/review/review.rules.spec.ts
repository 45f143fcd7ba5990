import { describe, expect, it } from '@jest/globals';
import { cohensKappa } from '#libs/evaluation/statistics/agreement.js';
import { sample } from './review-items.service.js';
import { consensus, fieldAgreement, labelProblems, rubricProblems, type RubricField } from './review.rules.js';

const FIELDS: RubricField[] = [
  { name: 'correct', type: 'pass_fail', required: true },
  { name: 'tone', type: 'categorical', required: true, options: ['curt', 'neutral', 'warm'] },
  { name: 'score', type: 'numeric', required: false, min: 1, max: 5 },
  { name: 'note', type: 'free_text', required: false },
];

describe('review rules', () => {
  it('finds what does not hold in a rubric', () => {
    expect(rubricProblems(FIELDS)).toEqual([]);
    expect(
      rubricProblems([
        { name: 'a', type: 'categorical', required: false, options: ['x', 'x'] },
        { name: 'a', type: 'numeric', required: false, min: 5, max: 5 },
        { name: 'b', type: 'pass_fail', required: false, options: ['y', 'z'] },
      ]).map((e) => e.field),
    ).toEqual([
      'rubric.fields[0].options',
      'rubric.fields[1].name',
      'rubric.fields[1].max',
      'rubric.fields[2].options',
      'rubric.fields',
    ]);
  });

  it('checks a label against its rubric: required, type, options, integer range, unknown fields', () => {
    expect(labelProblems(FIELDS, { correct: true, tone: 'warm', score: 5, note: 'fine' })).toEqual([]);
    expect(labelProblems(FIELDS, { correct: 'yes', tone: 'loud', score: 0, extra: 1 })).toEqual([
      { field: 'values.extra', message: 'the rubric has no such field' },
      { field: 'values.correct', message: 'must be true (pass) or false (fail)' },
      { field: 'values.tone', message: 'must be one of curt, neutral, warm' },
      { field: 'values.score', message: 'must be an integer from 1 to 5' },
    ]);
    expect(labelProblems(FIELDS, { correct: true, score: 2.5, tone: null })).toEqual([
      { field: 'values.tone', message: 'required' },
      { field: 'values.score', message: 'must be an integer from 1 to 5' },
    ]);
  });

  it('agrees on the required fields, keeps the optional ones all labels share', () => {
    const a = { correct: true, tone: 'warm', score: 4, note: 'x' };
    expect(consensus(FIELDS, [a, { ...a, score: 3, note: 'y' }])).toEqual({ correct: true, tone: 'warm' });
    expect(consensus(FIELDS, [a, a])).toEqual(a);
    expect(consensus(FIELDS, [a, { ...a, tone: 'curt' }])).toBeNull();
  });

  it('computes the agreement of each rated field with the statistics library, pass/fail as categories', () => {
    // Wikipedia's Cohen example: yes/yes 20, yes/no 5, no/yes 10, no/no 15: kappa 0.4.
    const pairs = [
      ...Array(20).fill([true, true]),
      ...Array(5).fill([true, false]),
      ...Array(10).fill([false, true]),
      ...Array(15).fill([false, false]),
    ] as Array<[boolean, boolean]>;
    const labels = pairs.flatMap(([x, y], item) => [
      { item, reviewer: 'r1', values: { correct: x, tone: 'warm' } },
      { item, reviewer: 'r2', values: { correct: y, tone: 'warm' } },
    ]);
    const finals = pairs.map(([x, y]) => (x === y ? { correct: x, tone: 'warm' } : null));
    const [correct, tone, score] = fieldAgreement(FIELDS, 50, ['r1', 'r2'], labels, finals, {});
    expect(correct.cohens_kappa.value).toBeCloseTo(0.4, 12);
    expect(correct.cohens_kappa.value).toBe(
      cohensKappa(
        pairs.map(([x]) => (x ? 'pass' : 'fail')),
        pairs.map(([, y]) => (y ? 'pass' : 'fail')),
      ).value,
    );
    expect(correct.percent_agreement.value).toBeCloseTo(0.7, 12);
    expect(correct.disagreements).toBe(15);
    expect(correct.per_reviewer.map((p) => p.with_final.value)).toEqual([1, 1]);
    // One category only: chance agreement is total, and kappa says why it is not defined.
    expect(tone.cohens_kappa).toEqual(expect.objectContaining({ value: null, reason: expect.any(String) }));
    expect(Object.keys(score.krippendorff_alpha)).toEqual(['interval', 'ordinal']);
    expect(fieldAgreement(FIELDS, 50, ['r1', 'r2'], labels, finals, {}).map((f) => f.field)).toEqual([
      'correct',
      'tone',
      'score',
    ]);
  });

  it("gives docs/review.md's worked example: agreement 0.8, kappa 0.583, alpha 0.604", () => {
    const ana = [true, true, true, true, true, true, false, false, false, false];
    const ben = [true, true, true, true, true, false, false, false, false, true];
    const labels = ana.flatMap((a, item) => [
      { item, reviewer: 'ana', values: { correct: a } },
      { item, reviewer: 'ben', values: { correct: ben[item] } },
    ]);
    const [correct] = fieldAgreement([FIELDS[0]], 10, ['ana', 'ben'], labels, Array(10).fill(null), {});
    expect(correct.percent_agreement.value).toBeCloseTo(0.8, 12);
    expect(correct.cohens_kappa.value).toBeCloseTo(0.28 / 0.48, 12);
    expect(correct.krippendorff_alpha.nominal!.value).toBeCloseTo(1 - 76 / 192, 12);
    expect(correct.disagreements).toBe(2);
  });

  it('samples reproducibly, in the rows own order', () => {
    const rows = Array.from({ length: 100 }, (_, i) => i);
    const drawn = sample(rows, 10, 42);
    expect(drawn).toEqual(sample(rows, 10, 42));
    expect(drawn).toHaveLength(10);
    expect([...drawn].sort((a, b) => a - b)).toEqual(drawn);
    expect(sample(rows, 10, 43)).not.toEqual(drawn);
    expect(sample(rows, 200, 1)).toBe(rows);
  });
});
