/**
 * Deterministic metrics of what an agent did: which tools it called, with which arguments, in
 * which order, how many steps it took and whether it repeated itself. They read the item's
 * trajectory and, where they compare against expectations, the row's expected calls.
 */
import { canonicalJson } from '#libs/traces/enrichment.js';
import type { DeterministicMetric, MetricInput, MetricResult } from '../deterministic-metrics.js';
import { compiledSchema } from '../json-schema.js';
import { valueAt } from '../row-context.js';
import {
  callMatcher,
  matchCalls,
  parseExpectedCalls,
  shownCall,
  type ArgsMode,
  type ExpectedCall,
} from './tool-calls.js';
import { toolCalls, type Trajectory, type TrajectoryStep } from './trajectory.types.js';

export const NO_TRAJECTORY = "the SUT's answer and trace gave no trajectory";
export const DEFAULT_EXPECTED_COLUMN = 'expected_tool_calls';

const threshold = { type: 'number', description: 'Pass when the score is at least this (at most, for counts)' };
const expectedColumn = {
  type: 'string',
  minLength: 1,
  maxLength: 500,
  default: DEFAULT_EXPECTED_COLUMN,
  description: "Dotted path of the row's column holding the expected tool calls",
};
const argumentOptions = {
  compare_arguments: {
    type: 'boolean',
    default: false,
    description: 'Compare arguments too (false: tool names only)',
  },
  args_mode: { enum: ['exact', 'subset'], default: 'exact', description: 'How arguments compare when they are' },
};

function needTrajectory(input: MetricInput): Trajectory | MetricResult {
  return input.trajectory ? input.trajectory : { score: null, error: NO_TRAJECTORY };
}

/** The row's expected calls from its column, or why there are none (an error, never a zero). */
function expectedCalls(input: MetricInput, params: Record<string, unknown>): ExpectedCall[] | MetricResult {
  const column = (params.expected_column as string | undefined) ?? DEFAULT_EXPECTED_COLUMN;
  const value = input.data ? valueAt(input.data, column) : undefined;
  if (value === undefined || value === null)
    return { score: null, error: `the row has no expected tool calls (column ${column})` };
  const parsed = parseExpectedCalls(value);
  return 'error' in parsed ? { score: null, error: `column ${column} ${parsed.error}` } : parsed.calls;
}

function argsModeOf(params: Record<string, unknown>): ArgsMode | null {
  return params.compare_arguments === true ? ((params.args_mode as ArgsMode | undefined) ?? 'exact') : null;
}

/** Trajectory and expected calls, or the first reason either is missing. */
function needBoth(
  input: MetricInput,
  params: Record<string, unknown>,
): { actual: TrajectoryStep[]; expected: ExpectedCall[] } | MetricResult {
  const trajectory = needTrajectory(input);
  if (!('steps' in trajectory)) return trajectory;
  const expected = expectedCalls(input, params);
  return Array.isArray(expected) ? { actual: toolCalls(trajectory), expected } : expected;
}

const names = (calls: Array<{ name: string }>) => calls.map((c) => c.name);

/** `trajectory_match`: agentevals' four modes over the flattened sequence of tool calls. */
function sequenceMatches(
  mode: string,
  expected: ExpectedCall[],
  actual: TrajectoryStep[],
  matcher: ReturnType<typeof callMatcher>,
): { matched: boolean; unmatched_expected: number; unmatched_actual: number } {
  if (mode === 'strict') {
    const same = expected.length === actual.length && expected.every((e, i) => matcher(e, actual[i]));
    return {
      matched: same,
      unmatched_expected: same ? 0 : expected.length,
      unmatched_actual: same ? 0 : actual.length,
    };
  }
  const paired = matchCalls(expected, actual, matcher);
  const pairs = paired.filter((j) => j !== -1).length;
  const unmatchedExpected = expected.length - pairs;
  const unmatchedActual = actual.length - pairs;
  const matched =
    mode === 'unordered'
      ? unmatchedExpected === 0 && unmatchedActual === 0
      : mode === 'superset'
        ? unmatchedExpected === 0
        : unmatchedActual === 0;
  return { matched, unmatched_expected: unmatchedExpected, unmatched_actual: unmatchedActual };
}

/** Identical calls (name + canonical JSON arguments) beyond `max` times, over all calls or runs of consecutive ones. */
function repeatedCalls(
  calls: TrajectoryStep[],
  max: number,
  consecutiveOnly: boolean,
): Array<{ name: string; arguments: unknown; times: number }> {
  const groups: Array<{ key: string; step: TrajectoryStep; times: number }> = [];
  const byKey = new Map<string, { key: string; step: TrajectoryStep; times: number }>();
  for (const step of calls) {
    const key = `${step.name}\u0000${canonicalJson(step.arguments ?? null)}`;
    const last = groups[groups.length - 1];
    const group = consecutiveOnly ? (last?.key === key ? last : undefined) : byKey.get(key);
    if (group) group.times++;
    else {
      const created = { key, step, times: 1 };
      groups.push(created);
      if (!consecutiveOnly) byKey.set(key, created);
    }
  }
  return groups
    .filter((g) => g.times > max)
    .map((g) => ({ name: g.step.name, arguments: g.step.arguments ?? null, times: g.times }));
}

/** Why an expected call's arguments cannot serve as a JSON Schema, or null when all can. */
function invalidSchema(expected: ExpectedCall[]): string | null {
  for (const call of expected) {
    if (call.arguments === undefined) continue;
    if (typeof call.arguments !== 'object' || call.arguments === null || Array.isArray(call.arguments))
      return `the expected arguments of ${call.name} are not a JSON Schema object`;
    try {
      compiledSchema(call.arguments);
    } catch (err) {
      return `the expected arguments of ${call.name} are not a valid JSON Schema: ${(err as Error).message}`;
    }
  }
  return null;
}

export const TRAJECTORY_METRICS: readonly DeterministicMetric[] = [
  {
    name: 'tool_called',
    description: 'A named tool was called between min_times and max_times times (1 or 0); with negate, that it was not',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: {
        tool: { type: 'string', minLength: 1, maxLength: 500 },
        min_times: { type: 'integer', minimum: 0, default: 1 },
        max_times: { type: 'integer', minimum: 0 },
        negate: { type: 'boolean', default: false, description: 'Score 1 when the count is outside the range' },
        threshold,
      },
      required: ['tool'],
      additionalProperties: false,
    },
    compute(input, params) {
      const trajectory = needTrajectory(input);
      if (!('steps' in trajectory)) return trajectory;
      const count = toolCalls(trajectory).filter((s) => s.name === params.tool).length;
      const min = (params.min_times as number | undefined) ?? 1;
      const max = params.max_times as number | undefined;
      const inRange = count >= min && (max === undefined || count <= max);
      const score = inRange !== (params.negate === true) ? 1 : 0;
      return { score, passed: score === 1, detail: { tool: params.tool, count } };
    },
  },
  {
    name: 'tool_args_match',
    description:
      'Fraction of the expected calls (of `tool`, or of every tool) matched by a distinct actual call with matching arguments (exact, JSON subset, or JSON Schema)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: {
        tool: { type: 'string', minLength: 1, maxLength: 500 },
        mode: { enum: ['exact', 'subset', 'schema'], default: 'exact' },
        arguments: { description: "The expected arguments (instead of the row's expected calls); needs tool" },
        schema: { type: 'object', description: 'schema mode: the JSON Schema the arguments must satisfy; needs tool' },
        expected_column: expectedColumn,
        threshold,
      },
      dependencies: { arguments: ['tool'], schema: ['tool'] },
      additionalProperties: false,
    },
    compute(input, params) {
      const trajectory = needTrajectory(input);
      if (!('steps' in trajectory)) return trajectory;
      const mode = (params.mode as ArgsMode | undefined) ?? 'exact';
      const tool = params.tool as string | undefined;
      const fromParams = mode === 'schema' ? params.schema : params.arguments;
      let expected: ExpectedCall[];
      if (tool !== undefined && fromParams !== undefined) expected = [{ name: tool, arguments: fromParams }];
      else {
        const fromRow = expectedCalls(input, params);
        if (!Array.isArray(fromRow)) return fromRow;
        expected = fromRow.filter((c) => tool === undefined || c.name === tool);
      }
      if (!expected.length)
        return {
          score: null,
          error: `no call${tool ? ` of ${tool}` : ''} is expected: there are no arguments to check`,
        };
      if (mode === 'schema') {
        const invalid = invalidSchema(expected);
        if (invalid) return { score: null, error: invalid };
      }
      const actual = toolCalls(trajectory).filter((s) => tool === undefined || s.name === tool);
      const paired = matchCalls(expected, actual, callMatcher(mode));
      const matched = paired.filter((j) => j !== -1).length;
      const score = matched / expected.length;
      return {
        score,
        passed: score === 1,
        detail: {
          mode,
          matched,
          expected: expected.length,
          unmatched: expected
            .filter((_, i) => paired[i] === -1)
            .slice(0, 20)
            .map(shownCall),
        },
      };
    },
  },
  {
    name: 'trajectory_match',
    description:
      'The sequence of tool calls against the expected one: strict (same calls, same order), unordered (same multiset), subset (actual ⊆ expected), superset (actual ⊇ expected)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: {
        mode: { enum: ['strict', 'unordered', 'subset', 'superset'], default: 'strict' },
        ...argumentOptions,
        expected_column: expectedColumn,
        threshold,
      },
      additionalProperties: false,
    },
    compute(input, params) {
      const both = needBoth(input, params);
      if (!('actual' in both)) return both;
      const mode = (params.mode as string | undefined) ?? 'strict';
      const result = sequenceMatches(mode, both.expected, both.actual, callMatcher(argsModeOf(params)));
      return {
        score: result.matched ? 1 : 0,
        passed: result.matched,
        detail: {
          mode,
          compare_arguments: argsModeOf(params) !== null,
          expected: names(both.expected).slice(0, 100),
          actual: names(both.actual).slice(0, 100),
          unmatched_expected: result.unmatched_expected,
          unmatched_actual: result.unmatched_actual,
        },
      };
    },
  },
  {
    name: 'tool_call_f1',
    description:
      'F1 of the actual tool calls against the expected ones, each expected call matched by at most one actual call (multiset)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { ...argumentOptions, expected_column: expectedColumn, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const both = needBoth(input, params);
      if (!('actual' in both)) return both;
      const { expected, actual } = both;
      const matched = matchCalls(expected, actual, callMatcher(argsModeOf(params))).filter((j) => j !== -1).length;
      // No calls on a side: nothing there can be wrong (precision) or missed (recall).
      const precision = actual.length ? matched / actual.length : 1;
      const recall = expected.length ? matched / expected.length : 1;
      const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
      return {
        score: f1,
        detail: { precision, recall, matched, expected: expected.length, actual: actual.length },
      };
    },
  },
  {
    name: 'step_budget',
    description: 'How many tool calls (or steps) the agent took; passes within max_steps',
    better: 'lower',
    paramsSchema: {
      type: 'object',
      properties: {
        max_steps: { type: 'integer', minimum: 0 },
        count: { enum: ['tool_calls', 'all'], default: 'tool_calls' },
        threshold,
      },
      required: ['max_steps'],
      additionalProperties: false,
    },
    compute(input, params) {
      const trajectory = needTrajectory(input);
      if (!('steps' in trajectory)) return trajectory;
      const max = params.max_steps as number;
      const all = params.count === 'all';
      const dropped = trajectory.truncated ?? 0;
      const count = all ? trajectory.steps.length + dropped : toolCalls(trajectory).length;
      // Dropped steps are of unknown type: a tool-call count within the budget is only a lower bound then.
      if (!all && dropped && count <= max)
        return {
          score: null,
          error: `the stored trajectory dropped ${dropped} steps, so its tool calls (${count} or more) cannot be held to ${max}`,
        };
      return { score: count, passed: count <= max, detail: { counted: all ? 'all' : 'tool_calls', max_steps: max } };
    },
  },
  {
    name: 'no_repeated_calls',
    description:
      'Calls beyond max_repeats of an identical call (same tool, same canonical JSON arguments); passes at 0',
    better: 'lower',
    paramsSchema: {
      type: 'object',
      properties: {
        max_repeats: { type: 'integer', minimum: 1, default: 1, description: 'Times an identical call may occur' },
        consecutive_only: {
          type: 'boolean',
          default: false,
          description: 'Count only identical calls made one right after another',
        },
        threshold,
      },
      additionalProperties: false,
    },
    compute(input, params) {
      const trajectory = needTrajectory(input);
      if (!('steps' in trajectory)) return trajectory;
      const max = (params.max_repeats as number | undefined) ?? 1;
      const repeated = repeatedCalls(toolCalls(trajectory), max, params.consecutive_only === true);
      const score = repeated.reduce((sum, r) => sum + r.times - max, 0);
      return { score, passed: score === 0, detail: { max_repeats: max, repeated: repeated.slice(0, 20) } };
    },
  },
];
