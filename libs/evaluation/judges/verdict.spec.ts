import { describe, expect, it } from '@jest/globals';
import type { VerdictScale } from './judge.types.js';
import { parseVerdict, type VerdictParse } from './verdict.js';

const oneToFive: VerdictScale = { type: 'numeric', min: 1, max: 5 };
const passFail: VerdictScale = { type: 'labels', labels: ['pass', 'fail'] };

function verdictOf(result: VerdictParse) {
  if (!('verdict' in result)) throw new Error(`expected a verdict, got ${JSON.stringify(result.error)}`);
  return result.verdict;
}

function errorOf(result: VerdictParse) {
  if (!('error' in result)) throw new Error(`expected an error, got ${JSON.stringify(result.verdict)}`);
  return result.error;
}

describe('parseVerdict on a numeric scale', () => {
  it('reads clean JSON with its reason and normalizes min..max to 0..1', () => {
    expect(verdictOf(parseVerdict('{"score": 4, "reason": "mostly right"}', oneToFive))).toEqual({
      score: 4,
      label: null,
      reason: 'mostly right',
      normalized: 0.75,
    });
    expect(verdictOf(parseVerdict('{"score": 1}', oneToFive)).normalized).toBe(0);
    expect(verdictOf(parseVerdict('{"score": 5}', oneToFive)).normalized).toBe(1);
    expect(verdictOf(parseVerdict('{"score": 0.25}', { type: 'numeric', min: 0, max: 1 }))).toMatchObject({
      score: 0.25,
      normalized: 0.25,
    });
  });

  it('reads a ```json fenced block', () => {
    const text = 'Here is my grade:\n```json\n{"score": 3, "reasoning": "partially correct"}\n```\nThanks.';
    expect(verdictOf(parseVerdict(text, oneToFive))).toMatchObject({ score: 3, reason: 'partially correct' });
    expect(verdictOf(parseVerdict('```\n{"score": 2}\n```', oneToFive)).score).toBe(2);
  });

  it('finds the JSON object in prose around it, braces in strings included', () => {
    const text =
      'After careful thought, my verdict is {"score": 5, "reason": "uses {curly} braces"} and that is final.';
    expect(verdictOf(parseVerdict(text, oneToFive))).toMatchObject({ score: 5, reason: 'uses {curly} braces' });
  });

  it('skips objects without a score key and takes the first one with it', () => {
    const text = 'The input was {"question": "x"}. Grade: {"rating": 2, "explanation": "weak"}';
    expect(verdictOf(parseVerdict(text, oneToFive))).toMatchObject({ score: 2, reason: 'weak' });
  });

  it('repairs trailing commas, single quotes, unquoted keys and a truncated object', () => {
    expect(verdictOf(parseVerdict('{"score": 4, "reason": "ok",}', oneToFive)).score).toBe(4);
    expect(verdictOf(parseVerdict("{'score': 3, 'reason': 'fine'}", oneToFive))).toMatchObject({
      score: 3,
      reason: 'fine',
    });
    expect(verdictOf(parseVerdict('{score: 2, rationale: "meh"}', oneToFive))).toMatchObject({
      score: 2,
      reason: 'meh',
    });
    expect(verdictOf(parseVerdict('{"score": 4, "reason": "the answer is corr', oneToFive)).score).toBe(4);
  });

  it('reads a doubled opening brace (a prefilled "{" the model repeated)', () => {
    expect(verdictOf(parseVerdict('{{"score": 4, "reason": "ok"}', oneToFive)).score).toBe(4);
  });

  it('accepts keys in any case and numeric strings such as "4" and "4/5"', () => {
    expect(verdictOf(parseVerdict('{"Score": "4", "Reason": "r"}', oneToFive))).toMatchObject({
      score: 4,
      reason: 'r',
    });
    expect(verdictOf(parseVerdict('{"GRADE": "4/5"}', oneToFive)).score).toBe(4);
    expect(verdictOf(parseVerdict('{"rating": "3.5 out of 5"}', oneToFive)).score).toBe(3.5);
  });

  it('falls back to a lone "Score: 4" line or a bare number', () => {
    expect(verdictOf(parseVerdict('The answer is accurate but terse.\nScore: 4', oneToFive))).toMatchObject({
      score: 4,
      reason: 'The answer is accurate but terse.\nScore: 4',
    });
    expect(verdictOf(parseVerdict('**Rating:** 4/5\nGood answer.', oneToFive)).score).toBe(4);
    expect(verdictOf(parseVerdict('Final score = 2', oneToFive)).score).toBe(2);
    expect(verdictOf(parseVerdict(' 3 ', oneToFive)).score).toBe(3);
    expect(verdictOf(parseVerdict('5/5', oneToFive)).score).toBe(5);
  });

  it('reports a score outside the scale as off_scale', () => {
    expect(errorOf(parseVerdict('{"score": 7}', oneToFive))).toMatchObject({ code: 'off_scale' });
    expect(errorOf(parseVerdict('{"score": 0}', oneToFive)).message).toContain('outside the scale 1 to 5');
    expect(errorOf(parseVerdict('Score: 10', oneToFive)).code).toBe('off_scale');
  });

  it('never takes a number from unrelated text', () => {
    for (const text of [
      'I cannot grade this (error 500)',
      'The answer mentions 3 cities and 2 rivers.',
      'Score: excellent',
      'I would give it a 4 maybe, hard to say.',
      '',
      '{"reason": "no score given"}',
      '[4]',
    ]) {
      expect(errorOf(parseVerdict(text, oneToFive)).code).toBe('unparseable_verdict');
    }
  });

  it('rejects a score key whose value is not a number, and conflicting score lines', () => {
    expect(errorOf(parseVerdict('{"score": "good"}', oneToFive))).toMatchObject({ code: 'unparseable_verdict' });
    expect(errorOf(parseVerdict('{"score": null}', oneToFive)).code).toBe('unparseable_verdict');
    expect(errorOf(parseVerdict('Score: 2\nScore: 4', oneToFive)).message).toContain('several different scores');
  });
});

describe('parseVerdict on a label scale', () => {
  it('matches labels case-insensitively and trimmed, returning the declared spelling', () => {
    expect(verdictOf(parseVerdict('{"label": " PASS ", "reason": "correct"}', passFail))).toEqual({
      score: 1,
      label: 'pass',
      reason: 'correct',
      normalized: 1,
    });
    expect(verdictOf(parseVerdict('{"Verdict": "Fail."}', passFail))).toMatchObject({
      label: 'fail',
      score: 0,
      normalized: 0,
    });
    expect(verdictOf(parseVerdict('```json\n{"answer": "pass"}\n```', passFail)).label).toBe('pass');
  });

  it('spaces default scores evenly from 1 to 0 in list order', () => {
    const three: VerdictScale = { type: 'labels', labels: ['good', 'ok', 'bad'] };
    expect(verdictOf(parseVerdict('{"label": "ok"}', three))).toMatchObject({ score: 0.5, normalized: 0.5 });
    expect(verdictOf(parseVerdict('{"label": "bad"}', three))).toMatchObject({ score: 0, normalized: 0 });
  });

  it('uses configured scores, min-max normalized when they leave 0..1', () => {
    const stars: VerdictScale = { type: 'labels', labels: ['low', 'mid', 'high'], scores: { low: 1, mid: 3, high: 5 } };
    expect(verdictOf(parseVerdict('{"label": "mid"}', stars))).toMatchObject({ score: 3, normalized: 0.5 });
    const inUnit: VerdictScale = {
      type: 'labels',
      labels: ['yes', 'partly', 'no'],
      scores: { yes: 1, partly: 0.3, no: 0 },
    };
    expect(verdictOf(parseVerdict('{"label": "partly"}', inUnit))).toMatchObject({ score: 0.3, normalized: 0.3 });
  });

  it('reports an unknown label as off_scale', () => {
    expect(errorOf(parseVerdict('{"label": "maybe"}', passFail))).toMatchObject({ code: 'off_scale' });
  });

  it('falls back to prose naming exactly one label as a whole word', () => {
    expect(verdictOf(parseVerdict('The response is correct, so it is a Pass.', passFail)).label).toBe('pass');
    expect(verdictOf(parseVerdict('FAIL', passFail)).label).toBe('fail');
    expect(errorOf(parseVerdict('It could pass or fail.', passFail)).code).toBe('unparseable_verdict');
    expect(errorOf(parseVerdict('The password is wrong; failure.', passFail)).code).toBe('unparseable_verdict');
    expect(errorOf(parseVerdict('I cannot grade this (error 500)', passFail)).code).toBe('unparseable_verdict');
  });
});
