import { compile, search, type JSONValue } from '@jmespath-community/jmespath';
import { JSONPath } from 'jsonpath-plus';
import type { Trajectory } from '../trajectory/trajectory.types.js';
import { boundTrajectory } from '../trajectory/trajectory.types.js';
import { chatCompletionTrajectory, stepsTrajectory, toolCallsText } from './response-trajectory.js';
import { joinPointer } from './template.js';
import type { AdapterIssue, AdapterSpec, ConnectionKind, ExtractedOutput, PathLanguage } from './sut.types.js';

/** jsonpath-plus reports failures inside filter scripts at run time with this prefix; anything else is a parse error. */
const JSONPATH_RUNTIME_ERROR = 'jsonPath:';

/** Scans a bracket segment from `[` to its matching `]`, honouring quotes and parentheses; -1 when unbalanced. */
function closeBracket(expr: string, open: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < expr.length; i++) {
    const ch = expr[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '(') depth++;
    else if (ch === ']' || ch === ')') {
      depth--;
      if (depth === 0) return ch === ']' ? i : -1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

const NAME = /^[^.[\]()'"\s]+/;

/** The bracket contents of `expr`, or a message saying why it is not a well-formed path. */
function scanJsonPath(expr: string): { brackets: string[] } | { error: string } {
  if (!expr.startsWith('$')) return { error: 'a JSONPath must start with $' };
  const brackets: string[] = [];
  let i = 1;
  while (i < expr.length) {
    if (expr[i] === '[') {
      const close = closeBracket(expr, i);
      if (close < 0) return { error: `unbalanced bracket or quote from character ${i}` };
      const inner = expr.slice(i + 1, close).trim();
      if (inner === '') return { error: `empty brackets at character ${i}` };
      brackets.push(inner);
      i = close + 1;
      continue;
    }
    if (expr[i] !== '.') return { error: `unexpected "${expr[i]}" at character ${i}` };
    const recursive = expr[i + 1] === '.';
    i += recursive ? 2 : 1;
    if (expr[i] === '*') {
      i++;
      continue;
    }
    if (recursive && expr[i] === '[') continue;
    const name = NAME.exec(expr.slice(i));
    if (!name) return { error: `a name is missing after "." at character ${i}` };
    i += name[0].length;
  }
  return { brackets };
}

function runJsonPath(path: string, json: unknown): unknown[] {
  const result: unknown = JSONPath({ path, json: json as object | null, wrap: true, eval: 'safe' });
  return Array.isArray(result) ? result : [];
}

/** A script that fails to parse throws only when run, so each one is run once on an empty object. */
function checkScript(inner: string): string | null {
  try {
    runJsonPath(`$[${inner}]`, [{}]);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.startsWith(JSONPATH_RUNTIME_ERROR) ? null : message;
  }
}

function jsonPathError(expr: string): string | null {
  const scanned = scanJsonPath(expr);
  if ('error' in scanned) return scanned.error;
  for (const inner of scanned.brackets) {
    if (inner.startsWith('?(') || inner.startsWith('(')) {
      const error = checkScript(inner);
      if (error) return `invalid script [${inner}]: ${error}`;
    }
  }
  try {
    runJsonPath(expr, {});
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A syntax error in a response path, or null when it parses. */
export function checkPath(language: PathLanguage, expr: string, pointer: string): AdapterIssue | null {
  if (expr.trim() === '') return { pointer, code: 'path_syntax', message: 'the path is empty' };
  let error: string | null;
  if (language === 'jsonpath') error = jsonPathError(expr.trim());
  else {
    try {
      compile(expr);
      error = null;
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
    }
  }
  return error === null ? null : { pointer, code: 'path_syntax', message: `invalid ${language} "${expr}": ${error}` };
}

/** True when a JSONPath can match several values (wildcards, filters, recursion, unions, slices). */
function matchesMany(expr: string): boolean {
  return JSONPath.toPathArray(expr).some(
    (segment) =>
      segment === '*' || segment === '..' || segment.startsWith('?(') || segment.includes(',') || segment.includes(':'),
  );
}

type Evaluated = { first: unknown; raw: unknown } | { issue: AdapterIssue };

/** `first` is the value an output or a number comes from; `raw` what extras keep. Undefined means no match. */
function evaluate(language: PathLanguage, expr: string, body: unknown, pointer: string): Evaluated {
  const syntax = checkPath(language, expr, pointer);
  if (syntax) return { issue: syntax };
  try {
    if (language === 'jmespath') {
      const result = search(body as JSONValue, expr);
      return { first: result ?? undefined, raw: result ?? undefined };
    }
    const matches = runJsonPath(expr.trim(), body);
    return { first: matches[0], raw: matchesMany(expr.trim()) ? matches : matches[0] };
  } catch (error) {
    return {
      issue: {
        pointer,
        code: 'path_no_match',
        message: `"${expr}" failed on this response: ${error instanceof Error ? error.message : String(error)}`,
      },
    };
  }
}

function noMatch(expr: string, pointer: string): AdapterIssue {
  return { pointer, code: 'path_no_match', message: `"${expr}" matches nothing in the response` };
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

function extractNumber(
  language: PathLanguage,
  expr: string | undefined,
  body: unknown,
  pointer: string,
  issues: AdapterIssue[],
): number | null {
  if (expr === undefined) return null;
  const evaluated = evaluate(language, expr, body, pointer);
  if ('issue' in evaluated) {
    issues.push(evaluated.issue);
    return null;
  }
  if (evaluated.first === undefined || evaluated.first === null) {
    issues.push(noMatch(expr, pointer));
    return null;
  }
  const number = toNumber(evaluated.first);
  if (number === null)
    issues.push({
      pointer,
      code: 'not_a_number',
      message: `"${expr}" is ${JSON.stringify(evaluated.first)}, not a number`,
    });
  return number;
}

/** The trajectory at the adapter's path; an openai_chat completion's tool calls without one; else null. */
function extractTrajectory(
  spec: AdapterSpec['response'],
  body: unknown,
  kind: ConnectionKind,
  issues: AdapterIssue[],
): Trajectory | null {
  if (spec.trajectory === undefined) return kind === 'openai_chat' ? chatCompletionTrajectory(body) : null;
  const pointer = '/response/trajectory';
  const evaluated = evaluate(spec.language, spec.trajectory, body, pointer);
  if ('issue' in evaluated) {
    issues.push(evaluated.issue);
    return null;
  }
  if (evaluated.raw === undefined || evaluated.raw === null) {
    issues.push(noMatch(spec.trajectory, pointer));
    return null;
  }
  const read = stepsTrajectory(evaluated.raw);
  if ('error' in read) {
    issues.push({ pointer, code: 'path_no_match', message: `"${spec.trajectory}" ${read.error}` });
    return null;
  }
  return read.trajectory;
}

/**
 * Reads the output, usage, cost, extras and trajectory out of a parsed response body. A chat
 * completion that answered with tool calls only (content null) has their JSON text as output.
 */
export function extractResponse(
  spec: AdapterSpec['response'],
  body: unknown,
  kind: ConnectionKind = 'http',
): { extracted: ExtractedOutput; issues: AdapterIssue[] } {
  const issues: AdapterIssue[] = [];
  const { language } = spec;

  let output: string | null = null;
  const evaluated = evaluate(language, spec.output, body, '/response/output');
  const outputIssue: AdapterIssue | null =
    'issue' in evaluated
      ? evaluated.issue
      : evaluated.first === undefined || evaluated.first === null
        ? noMatch(spec.output, '/response/output')
        : null;
  if (!('issue' in evaluated) && !outputIssue)
    output = typeof evaluated.first === 'string' ? evaluated.first : JSON.stringify(evaluated.first);

  const read = extractTrajectory(spec, body, kind, issues);
  const trajectory = read ? boundTrajectory(read) : null;
  const called = kind === 'openai_chat' && trajectory && !('issue' in evaluated) ? toolCallsText(trajectory) : null;
  if (output === null && called !== null) output = called;
  else if (outputIssue) issues.unshift(outputIssue);

  const usage = {
    prompt_tokens: extractNumber(language, spec.usage?.prompt_tokens, body, '/response/usage/prompt_tokens', issues),
    completion_tokens: extractNumber(
      language,
      spec.usage?.completion_tokens,
      body,
      '/response/usage/completion_tokens',
      issues,
    ),
    total_tokens: extractNumber(language, spec.usage?.total_tokens, body, '/response/usage/total_tokens', issues),
  };
  const cost_usd = extractNumber(language, spec.cost_usd, body, '/response/cost_usd', issues);

  const extras: Record<string, unknown> = {};
  for (const [name, expr] of Object.entries(spec.extras ?? {})) {
    const pointer = joinPointer('/response/extras', name);
    const extra = evaluate(language, expr, body, pointer);
    if ('issue' in extra) {
      issues.push(extra.issue);
      extras[name] = null;
    } else {
      if (extra.raw === undefined) issues.push(noMatch(expr, pointer));
      extras[name] = extra.raw ?? null;
    }
  }
  return { extracted: { output, usage, cost_usd, extras, trajectory }, issues };
}
