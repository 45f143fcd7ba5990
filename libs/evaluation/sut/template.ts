import type { AdapterIssue, RowContext } from './sut.types.js';

/** What a placeholder may start with; `row` always takes a dotted path after it. */
export const PLACEHOLDER_ROOTS = [
  'input',
  'expected_output',
  'context',
  'row',
  'row_id',
  'session_id',
  'turn',
  'history',
  'env.model',
] as const;
export type PlaceholderRoot = (typeof PLACEHOLDER_ROOTS)[number];
export type PlaceholderRoots = ReadonlySet<PlaceholderRoot>;

export const ALL_PLACEHOLDER_ROOTS: PlaceholderRoots = new Set(PLACEHOLDER_ROOTS);
/** Without `env.model`: only openai_chat connections have a model. */
export const HTTP_PLACEHOLDER_ROOTS: PlaceholderRoots = new Set(
  PLACEHOLDER_ROOTS.filter((root) => root !== 'env.model'),
);

export interface TemplateEnv {
  model?: string;
}

type Filter = { kind: 'json' } | { kind: 'default'; text: string };

interface Placeholder {
  /** The source text between the braces, trimmed, for messages. */
  source: string;
  root: PlaceholderRoot;
  /** Segments after `row.`; empty for other roots. */
  path: string[];
  filters: Filter[];
}

type Part = { text: string } | { placeholder: Placeholder };

type ParseResult = { parts: Part[] } | { issue: Omit<AdapterIssue, 'pointer'> };

/** RFC 6901: `~` becomes `~0` and `/` becomes `~1` in a reference token. */
export function joinPointer(base: string, key: string | number): string {
  return `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

const DEFAULT_FILTER = /^default\(\s*("(?:[^"\\]|\\.)*")\s*\)$/;

/** Splits on `|` outside double-quoted strings, so `default("a|b")` stays whole. */
function splitFilters(source: string): string[] {
  const pieces: string[] = [];
  let current = '';
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (inString && ch === '\\') {
      current += ch + (source[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '"') inString = !inString;
    if (ch === '|' && !inString) {
      pieces.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  pieces.push(current.trim());
  return pieces;
}

function parseFilter(text: string): Filter | null {
  if (text === 'json') return { kind: 'json' };
  const match = DEFAULT_FILTER.exec(text);
  if (!match) return null;
  try {
    return { kind: 'default', text: JSON.parse(match[1]) as string };
  } catch {
    return null;
  }
}

function parsePlaceholder(source: string, allowed: PlaceholderRoots): Placeholder | Omit<AdapterIssue, 'pointer'> {
  if (source === '') return { code: 'template_syntax', message: 'empty placeholder "{{}}"' };
  const [expression, ...filterTexts] = splitFilters(source);
  const filters: Filter[] = [];
  for (const text of filterTexts) {
    const filter = parseFilter(text);
    if (!filter)
      return {
        code: 'template_syntax',
        message: `unknown filter "${text}" in "{{${source}}}"; use json or default("text")`,
      };
    filters.push(filter);
  }
  const known = `known placeholders: ${[...allowed].map((root) => (root === 'row' ? 'row.<column>' : root)).join(', ')}`;
  if (expression === 'row' || expression.startsWith('row.')) {
    const path = expression.split('.').slice(1);
    if (!allowed.has('row') || path.length === 0 || path.some((segment) => segment === '')) {
      return {
        code: 'unknown_placeholder',
        message: `"{{${source}}}" needs a column after row, e.g. row.question; ${known}`,
      };
    }
    return { source, root: 'row', path, filters };
  }
  const root = PLACEHOLDER_ROOTS.find((candidate) => candidate === expression && candidate !== 'row');
  if (!root || !allowed.has(root))
    return { code: 'unknown_placeholder', message: `unknown placeholder "{{${source}}}"; ${known}` };
  return { source, root, path: [], filters };
}

/** Index of the `}}` closing a placeholder opened before `from`, skipping quoted text; -1 when unterminated. */
function findClose(text: string, from: number): number {
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString && ch === '\\') {
      i++;
      continue;
    }
    if (ch === '"') inString = !inString;
    else if (!inString && ch === '}' && text[i + 1] === '}') return i;
  }
  return -1;
}

function parseTemplate(text: string, allowed: PlaceholderRoots): ParseResult {
  const parts: Part[] = [];
  let cursor = 0;
  while (cursor < text.length) {
    const open = text.indexOf('{{', cursor);
    if (open < 0) break;
    if (open > cursor) parts.push({ text: text.slice(cursor, open) });
    const close = findClose(text, open + 2);
    if (close < 0) return { issue: { code: 'template_syntax', message: `unterminated "{{" at character ${open}` } };
    const parsed = parsePlaceholder(text.slice(open + 2, close).trim(), allowed);
    if ('code' in parsed) return { issue: parsed };
    parts.push({ placeholder: parsed });
    cursor = close + 2;
  }
  if (cursor < text.length) parts.push({ text: text.slice(cursor) });
  return { parts };
}

/** All syntax problems of the templates in `value`, each at the pointer of its string. */
export function checkTemplate(value: unknown, pointer: string, allowed: PlaceholderRoots): AdapterIssue[] {
  if (typeof value === 'string') {
    const parsed = parseTemplate(value, allowed);
    return 'issue' in parsed ? [{ pointer, ...parsed.issue }] : [];
  }
  if (Array.isArray(value))
    return value.flatMap((item, index) => checkTemplate(item, joinPointer(pointer, index), allowed));
  if (isPlainObject(value))
    return Object.entries(value).flatMap(([key, item]) => checkTemplate(item, joinPointer(pointer, key), allowed));
  return [];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walkRow(data: unknown, path: string[]): unknown {
  let current = data;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isPlainObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

function lookup(placeholder: Placeholder, ctx: RowContext, env: TemplateEnv): unknown {
  switch (placeholder.root) {
    case 'row':
      return walkRow(ctx.data, placeholder.path);
    case 'env.model':
      return env.model;
    case 'history':
      // A first turn (or a single-turn row) has no earlier messages, which is not a missing value.
      return ctx.history ?? [];
    default:
      return ctx[placeholder.root];
  }
}

/** The placeholder's value after its filters; undefined when missing. */
function resolve(placeholder: Placeholder, ctx: RowContext, env: TemplateEnv): unknown {
  let value = lookup(placeholder, ctx, env);
  for (const filter of placeholder.filters) {
    if (filter.kind === 'default') value = value === undefined || value === null ? filter.text : value;
    else value = value === undefined ? undefined : JSON.stringify(value);
  }
  return value;
}

function stringify(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function missingIssue(placeholder: Placeholder, ctx: RowContext, pointer: string): AdapterIssue {
  const columns = Object.keys(ctx.data);
  return {
    pointer,
    code: 'missing_value',
    message: `"{{${placeholder.source}}}" has no value for row ${ctx.row_id}; the row's columns are: ${columns.length ? columns.join(', ') : '(none)'}. Add | default("...") to allow a missing value`,
  };
}

function renderString(
  text: string,
  ctx: RowContext,
  env: TemplateEnv,
  pointer: string,
): { value: unknown; issues: AdapterIssue[] } {
  const parsed = parseTemplate(text, ALL_PLACEHOLDER_ROOTS);
  if ('issue' in parsed) return { value: text, issues: [{ pointer, ...parsed.issue }] };
  const [only] = parsed.parts;
  if (parsed.parts.length === 1 && 'placeholder' in only) {
    const value = resolve(only.placeholder, ctx, env);
    return value === undefined
      ? { value: null, issues: [missingIssue(only.placeholder, ctx, pointer)] }
      : { value, issues: [] };
  }
  const issues: AdapterIssue[] = [];
  const rendered = parsed.parts
    .map((part) => {
      if ('text' in part) return part.text;
      const value = resolve(part.placeholder, ctx, env);
      if (value === undefined) issues.push(missingIssue(part.placeholder, ctx, pointer));
      return value === undefined ? '' : stringify(value);
    })
    .join('');
  return { value: rendered, issues };
}

/** True for an array element that is exactly `{{history}}`, which is spread in place. */
function isHistorySpread(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const parsed = parseTemplate(value, ALL_PLACEHOLDER_ROOTS);
  if ('issue' in parsed || parsed.parts.length !== 1) return false;
  const [only] = parsed.parts;
  return 'placeholder' in only && only.placeholder.root === 'history' && only.placeholder.filters.length === 0;
}

/** Fills every placeholder in `value` from the row; problems come back as issues at their pointers. */
export function renderTemplate(
  value: unknown,
  ctx: RowContext,
  env: TemplateEnv,
  pointer: string,
): { value: unknown; issues: AdapterIssue[] } {
  if (typeof value === 'string') return renderString(value, ctx, env, pointer);
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    const issues: AdapterIssue[] = [];
    value.forEach((item, index) => {
      if (isHistorySpread(item)) {
        items.push(...(ctx.history ?? []));
        return;
      }
      const rendered = renderTemplate(item, ctx, env, joinPointer(pointer, index));
      items.push(rendered.value);
      issues.push(...rendered.issues);
    });
    return { value: items, issues };
  }
  if (isPlainObject(value)) {
    const result: Record<string, unknown> = {};
    const issues: AdapterIssue[] = [];
    for (const [key, item] of Object.entries(value)) {
      const rendered = renderTemplate(item, ctx, env, joinPointer(pointer, key));
      result[key] = rendered.value;
      issues.push(...rendered.issues);
    }
    return { value: result, issues };
  }
  return { value, issues: [] };
}
