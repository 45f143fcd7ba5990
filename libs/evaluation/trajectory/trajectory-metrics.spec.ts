import { describe, expect, it } from '@jest/globals';
import { scoreDeterministic, validateMetricParams, type MetricInput } from '../deterministic-metrics.js';
import { jsonSubset, matchCalls, callMatcher, parseExpectedCalls } from './tool-calls.js';
import type { Trajectory, TrajectoryStep } from './trajectory.types.js';

const call = (name: string, args: unknown = {}): TrajectoryStep => ({ type: 'tool_call', name, arguments: args });
const trajectoryOf = (...steps: TrajectoryStep[]): Trajectory => ({ source: 'response', steps });
const input = (trajectory: Trajectory | null, expected?: unknown): MetricInput => ({
  output: 'done',
  trajectory,
  data: expected === undefined ? {} : { expected_tool_calls: expected },
});
const score = (name: string, given: MetricInput, params: Record<string, unknown> = {}) =>
  scoreDeterministic(name, given, validateMetricParams(name, params));

const weather = call('get_weather', { city: 'Paris', unit: 'c' });
const search = call('search', { q: 'flights', limit: 5 });
const book = call('book', { flight: 'AF1' });

describe('expected tool calls', () => {
  it('reads every accepted shape, as values or JSON text', () => {
    const named = [{ name: 'search', arguments: { q: 'x' } }, { name: 'book' }];
    expect(parseExpectedCalls(named)).toEqual({ calls: named });
    expect(parseExpectedCalls(['search', 'book'])).toEqual({ calls: [{ name: 'search' }, { name: 'book' }] });
    const openai = [{ type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }];
    expect(parseExpectedCalls(openai)).toEqual({ calls: [{ name: 'search', arguments: { q: 'x' } }] });
    expect(parseExpectedCalls(JSON.stringify(openai))).toEqual({ calls: [{ name: 'search', arguments: { q: 'x' } }] });
    expect(parseExpectedCalls('[]')).toEqual({ calls: [] });
  });

  it('names what is wrong with anything else', () => {
    expect(parseExpectedCalls('search, book')).toEqual({ error: expect.stringMatching(/not JSON/) });
    expect(parseExpectedCalls({ name: 'search' })).toEqual({ error: expect.stringMatching(/not an array/) });
    expect(parseExpectedCalls([{ arguments: {} }])).toEqual({ error: expect.stringMatching(/call 0 has no name/) });
    expect(parseExpectedCalls([3])).toEqual({ error: expect.stringMatching(/call 0 is 3/) });
  });

  it('JSON subset: keys recursively, arrays element by element, key order and JSON text ignored', () => {
    expect(jsonSubset({ a: { b: 1 } }, { a: { b: 1, c: 2 }, d: 3 })).toBe(true);
    expect(jsonSubset({ a: { b: 1, c: 2 } }, { a: { b: 1 } })).toBe(false);
    expect(jsonSubset([{ x: 1 }], [{ x: 1, y: 2 }])).toBe(true);
    expect(jsonSubset([1], [1, 2])).toBe(false);
    expect(jsonSubset({ n: null }, {})).toBe(false);
  });

  it('matching is one to one: a call stands for one expected call, and the best pairing is found', () => {
    // Greedy pairing would give the first expected {} call the only {q:'a'} call and leave the second unmatched.
    const actual = [call('s', { q: 'a' }), call('s', { q: 'b' })];
    const paired = matchCalls(
      [
        { name: 's', arguments: {} },
        { name: 's', arguments: { q: 'a' } },
      ],
      actual,
      callMatcher('subset'),
    );
    expect(paired).toEqual([1, 0]);
    expect(matchCalls([{ name: 's' }, { name: 's' }], [call('s')], callMatcher(null))).toEqual([0, -1]);
  });
});

describe('trajectory metrics', () => {
  it('every metric errs without a trajectory, never scores zero', () => {
    for (const [name, params] of [
      ['tool_called', { tool: 'x' }],
      ['tool_args_match', {}],
      ['trajectory_match', {}],
      ['tool_call_f1', {}],
      ['step_budget', { max_steps: 3 }],
      ['no_repeated_calls', {}],
    ] as const)
      expect(score(name, input(null, ['x']), params)).toEqual({
        score: null,
        error: "the SUT's answer and trace gave no trajectory",
      });
  });

  it('metrics against expected calls err when the row has none, and name the column', () => {
    const t = trajectoryOf(search);
    expect(score('trajectory_match', input(t)).error).toBe(
      'the row has no expected tool calls (column expected_tool_calls)',
    );
    expect(score('tool_call_f1', input(t), { expected_column: 'gold.calls' }).error).toMatch(/column gold.calls/);
    expect(score('tool_args_match', input(t, 'not json')).error).toMatch(/column expected_tool_calls is text/);
    const nested: MetricInput = { output: 'x', trajectory: t, data: { gold: { calls: ['search'] } } };
    expect(score('trajectory_match', nested, { expected_column: 'gold.calls' }).score).toBe(1);
  });

  it('tool_called counts calls of the tool against min_times, max_times, and negate', () => {
    const t = trajectoryOf(search, search, book, { type: 'llm', name: 'search' });
    expect(score('tool_called', input(t), { tool: 'search' })).toEqual({
      score: 1,
      passed: true,
      detail: { tool: 'search', count: 2 },
    });
    expect(score('tool_called', input(t), { tool: 'search', min_times: 3 }).score).toBe(0);
    expect(score('tool_called', input(t), { tool: 'search', max_times: 1 }).score).toBe(0);
    expect(score('tool_called', input(t), { tool: 'delete_account', negate: true }).score).toBe(1);
    expect(score('tool_called', input(t), { tool: 'book', negate: true })).toMatchObject({ score: 0, passed: false });
    expect(score('tool_called', input(trajectoryOf()), { tool: 'x', min_times: 0 }).score).toBe(1);
    expect(() => validateMetricParams('tool_called', {})).toThrow(/required property 'tool'/);
  });

  it('tool_args_match: exact, subset and schema modes; the fraction of expected calls matched', () => {
    const t = trajectoryOf(weather, call('get_weather', { city: 'Oslo', unit: 'c' }), search);
    const expected = [
      { name: 'get_weather', arguments: { unit: 'c', city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Rome', unit: 'c' } },
      { name: 'search', arguments: { q: 'flights' } },
    ];
    // exact: Paris matches (key order aside), Rome has no call, search's arguments differ (limit) -> 1/3.
    expect(score('tool_args_match', input(t, expected))).toMatchObject({
      score: 1 / 3,
      passed: false,
      detail: { mode: 'exact', matched: 1, expected: 3 },
    });
    // subset: search {q} ⊆ {q, limit} now matches too -> 2/3.
    expect(score('tool_args_match', input(t, expected), { mode: 'subset' }).score).toBeCloseTo(2 / 3, 12);
    // one tool only: get_weather's 2 expected calls, 1 matched.
    expect(score('tool_args_match', input(t, expected), { tool: 'get_weather' }).score).toBe(0.5);
    // expected arguments from the parameters, not the row.
    expect(score('tool_args_match', input(t), { tool: 'search', mode: 'subset', arguments: { limit: 5 } }).score).toBe(
      1,
    );
    const schema = {
      type: 'object',
      properties: { city: { enum: ['Paris', 'Oslo'] } },
      required: ['city', 'unit'],
    };
    expect(score('tool_args_match', input(t), { tool: 'get_weather', mode: 'schema', schema }).score).toBe(1);
    // schemas from the row: each expected call's arguments are its schema; the second wants a city no call has.
    const schemas = [
      { name: 'get_weather', arguments: { type: 'object', properties: { city: { const: 'Oslo' } } } },
      {
        name: 'get_weather',
        arguments: { type: 'object', properties: { city: { const: 'Rome' } }, required: ['city'] },
      },
    ];
    expect(score('tool_args_match', input(t, schemas), { mode: 'schema' }).score).toBe(0.5);
    expect(
      score('tool_args_match', input(t, [{ name: 'x', arguments: { type: 12 } }]), { mode: 'schema' }).error,
    ).toMatch(/not a valid JSON Schema/);
    expect(score('tool_args_match', input(t, ['search']), { tool: 'book' }).error).toMatch(
      /no call of book is expected/,
    );
    expect(() => validateMetricParams('tool_args_match', { schema: { type: 'object' } })).toThrow(/property tool/);
    expect(() => validateMetricParams('tool_args_match', { tool: 'x', schema: { type: 'nope' } })).toThrow(
      /params.schema/,
    );
  });

  describe('trajectory_match, as agentevals defines its modes', () => {
    const t = trajectoryOf(search, weather, search);
    const cases: Array<[string, unknown[], Record<string, number>]> = [
      // [why, expected, score per mode]
      [
        'the same calls in the same order',
        ['search', 'get_weather', 'search'],
        { strict: 1, unordered: 1, subset: 1, superset: 1 },
      ],
      [
        'the same multiset in another order',
        ['search', 'search', 'get_weather'],
        { strict: 0, unordered: 1, subset: 1, superset: 1 },
      ],
      [
        'fewer expected: the agent called more',
        ['search', 'get_weather'],
        { strict: 0, unordered: 0, subset: 0, superset: 1 },
      ],
      [
        'more expected: the agent called less',
        ['search', 'get_weather', 'search', 'book'],
        { strict: 0, unordered: 0, subset: 1, superset: 0 },
      ],
      // One expected search cannot stand for both actual searches: multisets, not sets.
      [
        'a duplicate counted once',
        ['search', 'get_weather', 'book'],
        { strict: 0, unordered: 0, subset: 0, superset: 0 },
      ],
      ['nothing expected', [], { strict: 0, unordered: 0, subset: 0, superset: 1 }],
    ];
    it.each(cases)('%s', (_why, expected, byMode) => {
      for (const [mode, value] of Object.entries(byMode))
        expect([mode, score('trajectory_match', input(t, expected), { mode }).score]).toEqual([mode, value]);
    });

    it('an empty trajectory matches an empty expectation in every mode', () => {
      for (const mode of ['strict', 'unordered', 'subset', 'superset'])
        expect(score('trajectory_match', input(trajectoryOf(), []), { mode }).score).toBe(1);
    });

    it('compares arguments when asked, exactly or as a subset', () => {
      const expected = [
        { name: 'search', arguments: { q: 'flights' } },
        { name: 'get_weather', arguments: weather.arguments },
        { name: 'search', arguments: { q: 'flights', limit: 5 } },
      ];
      expect(score('trajectory_match', input(t, expected)).score).toBe(1);
      expect(score('trajectory_match', input(t, expected), { compare_arguments: true }).score).toBe(0);
      expect(
        score('trajectory_match', input(t, expected), { compare_arguments: true, args_mode: 'subset' }).score,
      ).toBe(1);
    });
  });

  it('tool_call_f1: precision, recall and F1 over the multiset of calls', () => {
    // actual: search, search, get_weather; expected: search, book -> matched 1 (one search), P 1/3, R 1/2, F1 0.4.
    const t = trajectoryOf(search, search, weather);
    const r = score('tool_call_f1', input(t, ['search', 'book']));
    expect(r.score).toBeCloseTo(0.4, 12);
    expect(r.detail).toEqual({ precision: 1 / 3, recall: 0.5, matched: 1, expected: 2, actual: 3 });
    // with arguments: the {q:'x'} search matches none of the actual ones.
    expect(
      score('tool_call_f1', input(t, [{ name: 'search', arguments: { q: 'x' } }]), { compare_arguments: true }).score,
    ).toBe(0);
    expect(score('tool_call_f1', input(trajectoryOf(), [])).score).toBe(1);
    expect(score('tool_call_f1', input(trajectoryOf(), ['search'])).detail).toMatchObject({ precision: 1, recall: 0 });
    expect(score('tool_call_f1', input(trajectoryOf(), ['search'])).score).toBe(0);
    expect(score('tool_call_f1', input(t, [])).score).toBe(0);
    expect(score('tool_call_f1', input(t, ['search', 'search', 'get_weather'])).score).toBe(1);
    expect(score('tool_call_f1', input(t, ['search']), { threshold: 0.5 })).toMatchObject({ score: 0.5, passed: true });
  });

  it('step_budget counts tool calls or every step; lower is better, passes within the budget', () => {
    const t = trajectoryOf({ type: 'llm', name: 'gpt' }, search, { type: 'llm', name: 'gpt' }, book);
    expect(score('step_budget', input(t), { max_steps: 2 })).toEqual({
      score: 2,
      passed: true,
      detail: { counted: 'tool_calls', max_steps: 2 },
    });
    expect(score('step_budget', input(t), { max_steps: 3, count: 'all' })).toMatchObject({ score: 4, passed: false });
    const stored = { ...t, truncated: 996 };
    expect(score('step_budget', input(stored), { max_steps: 100, count: 'all' })).toMatchObject({
      score: 1000,
      passed: false,
    });
    expect(score('step_budget', input(stored), { max_steps: 5 }).error).toMatch(/dropped 996 steps/);
    expect(score('step_budget', input(stored), { max_steps: 1 })).toMatchObject({ score: 2, passed: false });
  });

  it('no_repeated_calls: identical calls (name and canonical arguments) beyond max_repeats', () => {
    const sameSearch = call('search', '{"limit":5,"q":"flights"}'); // the same call, its arguments as JSON text
    const t = trajectoryOf(search, sameSearch, book, search, call('search', { q: 'other' }));
    // search{q,limit} three times: 2 repeats beyond 1.
    expect(score('no_repeated_calls', input(t))).toMatchObject({
      score: 2,
      passed: false,
      detail: { max_repeats: 1, repeated: [{ name: 'search', times: 3 }] },
    });
    expect(score('no_repeated_calls', input(t), { max_repeats: 3 })).toMatchObject({ score: 0, passed: true });
    // consecutive only: the first two are a run of 2 (1 repeat); the third comes after book.
    expect(score('no_repeated_calls', input(t), { consecutive_only: true }).score).toBe(1);
    expect(score('no_repeated_calls', input(trajectoryOf())).score).toBe(0);
  });
});
