/**
 * Tool calls as trajectory metrics compare them: the expected calls a dataset row holds (in
 * the shapes people write them), argument matching (exact, JSON subset, JSON Schema) and the
 * one-to-one matching of expected calls to actual ones.
 */
import { canonicalJson } from '#libs/traces/enrichment.js';
import { compiledSchema } from '../json-schema.js';
import type { TrajectoryStep } from './trajectory.types.js';

/** A call a row expects; without `arguments` any arguments match it. */
export interface ExpectedCall {
  name: string;
  arguments?: unknown;
}

/** Expected calls of one row at most: matching is quadratic in the calls of one tool. */
export const MAX_EXPECTED_CALLS = 1000;

/** How arguments are compared: `exact` (canonical JSON equal), `subset` (expected ⊆ actual, recursively), `schema` (the expected value is a JSON Schema the actual arguments satisfy). */
export type ArgsMode = 'exact' | 'subset' | 'schema';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Arguments as a value: JSON text (OpenAI's `function.arguments`) parsed, anything else as it is. */
export function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function expectedCallOf(item: unknown, index: number): ExpectedCall | string {
  if (typeof item === 'string') return item.trim() ? { name: item } : `call ${index} is an empty tool name`;
  if (!isRecord(item)) return `call ${index} is ${JSON.stringify(item)}, not a tool name or a {name, arguments} object`;
  const fn = isRecord(item.function) ? item.function : null;
  const name = fn ? fn.name : item.name;
  if (typeof name !== 'string' || !name.trim()) return `call ${index} has no name (nor function.name)`;
  const args = fn ? fn.arguments : item.arguments;
  return args === undefined ? { name } : { name, arguments: parseArguments(args) };
}

/**
 * The expected calls of a column's value: an array of `{name, arguments?}`, of tool names, of
 * OpenAI `{type: 'function', function: {name, arguments}}` (arguments as JSON text), or JSON
 * text of any of these. An empty array expects no call.
 */
export function parseExpectedCalls(value: unknown): { calls: ExpectedCall[] } | { error: string } {
  let list = value;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return { error: 'is text that is not JSON (expected a JSON array of calls)' };
    }
  }
  if (!Array.isArray(list)) return { error: `is ${list === null ? 'null' : typeof list}, not an array of calls` };
  if (list.length > MAX_EXPECTED_CALLS)
    return { error: `holds ${list.length} calls; at most ${MAX_EXPECTED_CALLS} are compared` };
  const calls: ExpectedCall[] = [];
  for (const [index, item] of list.entries()) {
    const call = expectedCallOf(item, index);
    if (typeof call === 'string') return { error: call };
    calls.push(call);
  }
  return { calls };
}

/** `expected` is contained in `actual`: objects by their keys (recursively), arrays element by element, the rest equal. */
export function jsonSubset(expected: unknown, actual: unknown): boolean {
  if (isRecord(expected))
    return (
      isRecord(actual) &&
      Object.entries(expected).every(([k, v]) => Object.hasOwn(actual, k) && jsonSubset(v, actual[k]))
    );
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => jsonSubset(v, actual[i]))
    );
  return canonicalJson(expected) === canonicalJson(actual);
}

/** The actual arguments satisfy the expected ones under `mode`; expected `undefined` accepts any. */
export function argumentsMatch(mode: ArgsMode, expected: unknown, actual: unknown): boolean {
  if (expected === undefined) return true;
  const value = parseArguments(actual ?? null);
  if (mode === 'exact') return canonicalJson(expected) === canonicalJson(value);
  if (mode === 'subset') return jsonSubset(parseArguments(expected), value);
  return isRecord(expected) && compiledSchema(expected)(value);
}

/** Whether an actual call stands for an expected one: same name, and arguments under `mode` when they are compared. */
export type CallMatcher = (expected: ExpectedCall, actual: TrajectoryStep) => boolean;

export function callMatcher(argsMode: ArgsMode | null): CallMatcher {
  return (expected, actual) =>
    expected.name === actual.name &&
    (argsMode === null || argumentsMatch(argsMode, expected.arguments, actual.arguments));
}

/**
 * The most expected calls that can each be paired with a different actual call (a maximum
 * bipartite matching, Kuhn's augmenting paths): calls are a multiset, and a call matched once
 * cannot stand for a second expected one. Answers, per expected call, the index of its actual call or -1.
 */
export function matchCalls(expected: ExpectedCall[], actual: TrajectoryStep[], matches: CallMatcher): number[] {
  const candidates = expected.map((e) => actual.flatMap((a, j) => (a.name === e.name && matches(e, a) ? [j] : [])));
  const ownerOf = new Array<number>(actual.length).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (const j of candidates[i]) {
      if (seen[j]) continue;
      seen[j] = true;
      if (ownerOf[j] === -1 || augment(ownerOf[j], seen)) {
        ownerOf[j] = i;
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < expected.length; i++) augment(i, new Array<boolean>(actual.length).fill(false));
  const pairedWith = new Array<number>(expected.length).fill(-1);
  ownerOf.forEach((i, j) => {
    if (i !== -1) pairedWith[i] = j;
  });
  return pairedWith;
}

/** A call as details show it: its name and arguments. */
export function shownCall(call: ExpectedCall | TrajectoryStep): { name: string; arguments?: unknown } {
  return call.arguments === undefined ? { name: call.name } : { name: call.name, arguments: call.arguments };
}
