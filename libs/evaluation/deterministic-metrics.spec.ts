import { describe, expect, it } from '@jest/globals';
import {
  DETERMINISTIC_METRICS,
  MetricParamsError,
  scoreDeterministic,
  validateMetricParams,
} from './deterministic-metrics.js';
import { cosine, localEmbed } from './local-embedder.js';
import { BUILTIN_METRICS } from './metric-catalogue.js';
import { bleu, lcsLength, modifiedPrecision, plainTokens, rougeL, tokenF1 } from './text-metrics.js';

const score = (name: string, input: Parameters<typeof scoreDeterministic>[1], params: Record<string, unknown> = {}) =>
  scoreDeterministic(name, input, validateMetricParams(name, params));

describe('text metrics against known values', () => {
  it('token F1 as SQuAD computes it', () => {
    expect(tokenF1('The Eiffel Tower', 'eiffel tower!').f1).toBe(1);
    // prediction "paris france" vs reference "paris": precision 1/2, recall 1 -> F1 2/3
    expect(tokenF1('Paris, France', 'Paris').f1).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('', '').f1).toBe(1);
    expect(tokenF1('x', '').f1).toBe(0);
  });

  it("BLEU: the paper's modified unigram precision, exact matches, the brevity penalty", () => {
    // Papineni et al. 2002, section 2.1: "the the the the the the the" against "the cat is on the mat" has modified precision 2/7.
    expect(
      modifiedPrecision(plainTokens('the the the the the the the'), plainTokens('The cat is on the mat'), 1),
    ).toEqual({ matches: 2, total: 7 });
    expect(bleu('the cat is on the mat', 'the cat is on the mat').bleu).toBeCloseTo(1, 12);
    const short = bleu('the cat', 'the cat is on the mat');
    expect(short.brevity_penalty).toBeCloseTo(Math.exp(1 - 6 / 2), 12);
    // Precisions 1, 1, and 0/0 for 3- and 4-grams of a 2-token candidate: no higher-order n-grams to score.
    expect(short.precisions).toEqual([1, 1, 0, 0]);
    expect(bleu('', 'anything').bleu).toBe(0);
    // One wrong word of six: p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0 -> smoothed to 0.1/3.
    const one = bleu('the cat sat on the mat', 'the cat is on the mat');
    expect(one.precisions).toEqual([5 / 6, 3 / 5, 1 / 4, 0]);
    expect(one.bleu).toBeCloseTo(
      Math.exp((Math.log(5 / 6) + Math.log(3 / 5) + Math.log(1 / 4) + Math.log(0.1 / 3)) / 4),
      12,
    );
  });

  it("ROUGE-L: Lin 2004's example and the LCS", () => {
    // "police killed the gunman" vs "police kill the gunman": LCS 3 of 4 -> P = R = F = 0.75.
    expect(rougeL('police kill the gunman', 'police killed the gunman')).toEqual({
      f1: 0.75,
      precision: 0.75,
      recall: 0.75,
    });
    expect(lcsLength(['a', 'b', 'c', 'b', 'd', 'a', 'b'], ['b', 'd', 'c', 'a', 'b', 'a'])).toBe(4);
    expect(rougeL('x y z', 'a b c').f1).toBe(0);
  });

  it('the local embedder: deterministic, unit length, closer for closer spellings', () => {
    const a = localEmbed('The refund arrived yesterday');
    expect(localEmbed('The refund arrived yesterday')).toEqual(a);
    expect(Math.sqrt(a.reduce((s, v) => s + v * v, 0))).toBeCloseTo(1, 5);
    const near = cosine(a, localEmbed('the refund arrived today'));
    const far = cosine(a, localEmbed('Quantum chromodynamics lecture notes'));
    expect(near).toBeGreaterThan(0.5);
    expect(far).toBeLessThan(0.2);
    expect(cosine(localEmbed(''), a)).toBe(0);
  });
});

describe('deterministic metrics', () => {
  it('exact_match and contains fold case and whitespace unless asked not to', () => {
    expect(score('exact_match', { output: '  Paris ', expected_output: 'paris' }).score).toBe(1);
    expect(score('exact_match', { output: 'Paris', expected_output: 'paris' }, { case_sensitive: true }).score).toBe(0);
    expect(score('contains', { output: 'It is Paris, France.', expected_output: 'paris' }).score).toBe(1);
    expect(score('contains', { output: 'It is Lyon', expected_output: null }, { substring: 'lyon' }).score).toBe(1);
    expect(score('exact_match', { output: null, expected_output: 'x' })).toEqual({
      score: null,
      error: expect.stringMatching(/output is missing/),
    });
    expect(score('exact_match', { output: 'x' })).toEqual({
      score: null,
      error: expect.stringMatching(/no expected output/),
    });
  });

  it('regex runs in RE2 (linear time), refuses what RE2 cannot do', () => {
    expect(score('regex', { output: 'Order #12345 shipped' }, { pattern: '#\\d{5}\\b' }).score).toBe(1);
    expect(score('regex', { output: 'order' }, { pattern: '^ORDER$', case_sensitive: false }).score).toBe(1);
    // A catastrophic pattern for a backtracking engine answers at once.
    const started = Date.now();
    expect(score('regex', { output: `${'a'.repeat(100_000)}b` }, { pattern: '^(a+)+$' }).score).toBe(0);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(() => validateMetricParams('regex', { pattern: '(?<=x)a' })).toThrow(MetricParamsError);
    expect(() => validateMetricParams('regex', {})).toThrow(/params must have required property 'pattern'/);
  });

  it('json_valid and json_schema, with fenced blocks and the violations listed', () => {
    expect(score('json_valid', { output: '{"a": 1}' }).score).toBe(1);
    expect(score('json_valid', { output: '{"a": ' })).toEqual({
      score: 0,
      detail: { parse_error: expect.any(String) },
    });
    expect(
      score('json_valid', { output: 'Here:\n```json\n{"a": [1, 2]}\n```' }, { extract_code_block: true }).score,
    ).toBe(1);
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
      required: ['answer'],
    };
    expect(score('json_schema', { output: '{"answer": "yes", "confidence": 0.8}' }, { schema }).score).toBe(1);
    const bad = score('json_schema', { output: '{"confidence": 3}' }, { schema });
    expect(bad.score).toBe(0);
    expect(bad.detail?.violations).toEqual(
      expect.arrayContaining(["/ must have required property 'answer'", '/confidence must be <= 1']),
    );
    expect(() => validateMetricParams('json_schema', { schema: { type: 'nonsense' } })).toThrow(MetricParamsError);
  });

  it('levenshtein, token_f1, bleu, rouge_l and embedding_similarity score pairs in [0, 1]', () => {
    expect(score('levenshtein', { output: 'kitten', expected_output: 'sitting' })).toEqual({
      score: 1 - 3 / 7,
      detail: { distance: 3 },
    });
    expect(score('token_f1', { output: 'Paris, France', expected_output: 'Paris' }).score).toBeCloseTo(2 / 3, 10);
    expect(
      score('bleu', { output: 'the cat is on the mat', expected_output: 'the cat is on the mat' }).score,
    ).toBeCloseTo(1, 12);
    expect(
      score('rouge_l', { output: 'police kill the gunman', expected_output: 'police killed the gunman' }).score,
    ).toBe(0.75);
    const sim = score('embedding_similarity', {
      output: 'The refund arrived',
      expected_output: 'the refund arrived!',
    }).score!;
    expect(sim).toBeGreaterThan(0.95);
    expect(sim).toBeLessThanOrEqual(1);
  });

  it('latency, cost and length, with thresholds in their better direction', () => {
    expect(score('latency', { output: 'x', latency_ms: 850 }, { threshold: 1000 })).toEqual({
      score: 850,
      passed: true,
    });
    expect(score('latency', { output: 'x', latency_ms: 1850 }, { threshold: 1000 }).passed).toBe(false);
    expect(score('latency', { output: 'x' }).error).toMatch(/no latency/);
    expect(
      score(
        'cost',
        { output: 'x', usage: { prompt_tokens: 1000, completion_tokens: 500 } },
        { prompt_price_per_1k: 0.5, completion_price_per_1k: 1.5 },
      ).score,
    ).toBeCloseTo(1.25, 12);
    expect(
      score('cost', { output: 'x', cost_usd: 0.02, usage: { prompt_tokens: 10 } }, { prompt_price_per_1k: 1 }).score,
    ).toBe(0.02);
    expect(score('length', { output: 'two words 😀' }).score).toBe(11);
    expect(score('length', { output: 'two words 😀' }, { unit: 'words', threshold: 2 })).toEqual(
      expect.objectContaining({ score: 3, passed: false }),
    );
    expect(score('exact_match', { output: 'a', expected_output: 'a' }, { threshold: 1 }).passed).toBe(true);
  });

  it("validates parameters against each metric's schema", () => {
    expect(() => validateMetricParams('bleu', { max_n: 7 })).toThrow(/params.max_n must be <= 4/);
    expect(() => validateMetricParams('length', { unit: 'pages' })).toThrow(MetricParamsError);
    expect(() => validateMetricParams('exact_match', { threshold: 'high' })).toThrow(/params.threshold must be number/);
    expect(() => validateMetricParams('exact_match', { extra: 1 })).toThrow(/must NOT have additional properties/);
    expect(() => validateMetricParams('perplexity', {})).toThrow(/is not a deterministic metric/);
    // The catalogue datasets use (what each metric needs) names exactly these.
    expect(BUILTIN_METRICS.filter((m) => m.kind === 'deterministic').map((m) => m.name)).toEqual(
      DETERMINISTIC_METRICS.map((m) => m.name),
    );
    expect(DETERMINISTIC_METRICS.map((m) => m.name)).toEqual([
      'exact_match',
      'contains',
      'regex',
      'json_valid',
      'json_schema',
      'levenshtein',
      'token_f1',
      'bleu',
      'rouge_l',
      'embedding_similarity',
      'latency',
      'cost',
      'length',
      'tool_called',
      'tool_args_match',
      'trajectory_match',
      'tool_call_f1',
      'step_budget',
      'no_repeated_calls',
    ]);
  });
});
