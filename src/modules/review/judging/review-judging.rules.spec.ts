import { describe, expect, it } from '@jest/globals';
import { DomainError } from '#libs/common/domain-error.js';
import type { JudgedSpec } from '../../catalogues/entities/metric-config.entity.js';
import type { RubricField } from '../review.rules.js';
import { checkField, humanVerdict, pairOf, textOf } from './review-judging.rules.js';

const CORRECT: RubricField = { name: 'correct', type: 'pass_fail', required: true };
const TONE: RubricField = { name: 'tone', type: 'categorical', required: false, options: ['Curt', 'neutral', 'warm'] };
const SCORE: RubricField = { name: 'score', type: 'numeric', required: false, min: 1, max: 5 };
const NOTE: RubricField = { name: 'note', type: 'free_text', required: false };
const FIVE_POINT: JudgedSpec = {
  rubric: 'Is {{output}} right?',
  scale: { type: 'numeric', min: 1, max: 5 },
  pass_threshold: 0.75,
  pass_labels: null,
};

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return (err as DomainError).code;
  }
  throw new Error('not refused');
}

describe('review judge runs: fields, verdicts and pairs', () => {
  it('takes a pass/fail field as it is, a categorical one with its passing options, a numeric one with or without', () => {
    expect(checkField(CORRECT, 'correct', 1, undefined)).toBeNull();
    expect(checkField(TONE, 'tone', 1, [' curt', 'WARM'])).toEqual(['curt', 'warm']);
    expect(checkField(SCORE, 'score', 1, undefined)).toBeNull();
    expect(checkField(SCORE, 'score', 1, ['4', '5'])).toEqual(['4', '5']);
    for (const refused of [
      () => checkField(undefined, 'missing', 2, undefined),
      () => checkField(NOTE, 'note', 1, undefined),
      () => checkField(CORRECT, 'correct', 1, ['true']),
      () => checkField(TONE, 'tone', 1, undefined),
      () => checkField(TONE, 'tone', 1, ['loud']),
      () => checkField(SCORE, 'score', 1, ['6']),
      () => checkField(SCORE, 'score', 1, ['4.5']),
    ])
      expect(refusal(refused)).toBe('judge_run_field_invalid');
  });

  it('reads a label as a verdict: positive as text, a pass/fail value, a score against the threshold', () => {
    expect(humanVerdict(true, CORRECT, null, FIVE_POINT)).toBe(true);
    expect(humanVerdict(false, CORRECT, null, FIVE_POINT)).toBe(false);
    expect(humanVerdict(undefined, CORRECT, null, FIVE_POINT)).toBeNull();
    expect(humanVerdict('warm', TONE, ['warm'], FIVE_POINT)).toBe(true);
    expect(humanVerdict('Curt', TONE, ['warm'], FIVE_POINT)).toBe(false);
    expect(humanVerdict('warm', TONE, null, FIVE_POINT)).toBeNull();
    // 1..5: (4 - 1) / 4 = 0.75 reaches 0.75; (3 - 1) / 4 = 0.5 does not.
    expect(humanVerdict(4, SCORE, null, FIVE_POINT)).toBe(true);
    expect(humanVerdict(3, SCORE, null, FIVE_POINT)).toBe(false);
    expect(humanVerdict(3, SCORE, null, { pass_threshold: 0.5 })).toBe(true);
    expect(humanVerdict(3, SCORE, ['3'], FIVE_POINT)).toBe(true);
    expect(humanVerdict(4, SCORE, ['3'], FIVE_POINT)).toBe(false);
  });

  it("pairs the judge's verdict with the human one, keeping a score on the judge's own scale", () => {
    const verdict = { score: 4, label: null, reason: 'close', normalized: 0.75 };
    const labelled = { ref: 'row-1', value: 2, human: false, reviews: [false, true] };
    expect(pairOf(labelled, verdict, FIVE_POINT, SCORE)).toEqual({
      item: 'row-1',
      judge_passed: true,
      judge_score: 4,
      judge_label: null,
      human_passed: false,
      human_score: 2,
      dimensions: {},
      reviews: [false, true],
    });
    // Another scale: the human score is not comparable and is left out.
    expect(pairOf(labelled, verdict, FIVE_POINT, { ...SCORE, max: 10 }).human_score).toBeNull();
    const labels: JudgedSpec = {
      ...FIVE_POINT,
      scale: { type: 'labels', labels: ['good', 'bad'] },
      pass_labels: ['good'],
    };
    const bad = pairOf(
      { ref: 'row-2', value: true, human: true, reviews: [] },
      { score: 0, label: 'bad', reason: null, normalized: 0 },
      labels,
      CORRECT,
    );
    expect(bad).toEqual(expect.objectContaining({ judge_passed: false, judge_label: 'bad', human_score: null }));
  });

  it('shows the judge an output as text', () => {
    expect(textOf('an answer')).toBe('an answer');
    expect(textOf({ answer: 42 })).toBe('{"answer":42}');
    expect(textOf(null)).toBeNull();
  });
});
