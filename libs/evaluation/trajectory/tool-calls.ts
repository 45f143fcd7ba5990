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
  if (expected === actual) return true;
  // Leaves of different types may still be equal as JSON text ("3" against 3 is not; '{"a":1}' against {a: 1} is).
  return typeof expected === 'string' || typeof actual === 'string'
    ? canonicalJson(expected) === canonicalJson(actual)
    : false;
}

/** Canonical JSON of a call's arguments, computed once per call (matching compares every pair of calls of a tool). */
const canonicalArgs = new WeakMap<object, string>();
function argsKey(call: ExpectedCall | TrajectoryStep): string {
  let key = canonicalArgs.get(call);
  if (key === undefined) {
    key = canonicalJson(parseArguments(call.arguments ?? null));
    canonicalArgs.set(call, key);
  }
  return key;
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
  return (expected, actual) => {
    if (expected.name !== actual.name) return false;
    if (argsMode === null || expected.arguments === undefined) return true;
    if (argsMode === 'exact') return argsKey(expected) === argsKey(actual);
    return argumentsMatch(argsMode, expected.arguments, actual.arguments);
  };
}

/**
 * The most expected calls that can each be paired with a different actual call (a maximum
 * bipartite matching: a greedy pass, then Kuhn's augmenting paths for the calls it left):
 * calls are a multiset, and a call matched once cannot stand for a second expected one.
 * Answers, per expected call, the index of its actual call or -1.
 */
export function matchCalls(expected: ExpectedCall[], actual: TrajectoryStep[], matches: CallMatcher): number[] {
  const byName = new Map<string, number[]>();
  actual.forEach((a, j) => {
    const same = byName.get(a.name);
    if (same) same.push(j);
    else byName.set(a.name, [j]);
  });
  const candidates = expected.map((e) => (byName.get(e.name) ?? []).filter((j) => matches(e, actual[j])));
  const ownerOf = new Array<number>(actual.length).fill(-1);
  const pairedWith = new Array<number>(expected.length).fill(-1);
  candidates.forEach((list, i) => {
    const free = list.find((j) => ownerOf[j] === -1);
    if (free !== undefined) [ownerOf[free], pairedWith[i]] = [i, free];
  });
  const augment = (i: number, seen: Uint8Array): boolean => {
    for (const j of candidates[i]) {
      if (seen[j]) continue;
      seen[j] = 1;
      if (ownerOf[j] === -1 || augment(ownerOf[j], seen)) {
        [ownerOf[j], pairedWith[i]] = [i, j];
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < expected.length; i++) if (pairedWith[i] === -1) augment(i, new Uint8Array(actual.length));
  return pairedWith;
}

/** A call as details show it: its name and arguments. */
export function shownCall(call: ExpectedCall | TrajectoryStep): { name: string; arguments?: unknown } {
  return call.arguments === undefined ? { name: call.name } : { name: call.name, arguments: call.arguments };
}
