/**
 * Rubric templates: `{{input}}`, `{{output}}`, `{{expected_output}}`, `{{context}}`,
 * `{{trajectory}}` (what the agent did, rendered within a token budget) and
 * `{{row.<dotted path>}}` are filled from the row being graded, and the judge is told the
 * exact answer format for the scale.
 */
import type { GradingContext, VerdictScale } from './judge.types.js';
import type { JudgeMessage } from './providers.js';

const ROOTS = ['input', 'output', 'expected_output', 'context', 'trajectory'] as const;
type Root = (typeof ROOTS)[number];

type Token =
  | { kind: 'text'; text: string }
  | { kind: 'placeholder'; name: string; raw: string; offset: number }
  | { kind: 'unterminated'; raw: string; offset: number };

/** Splits a template into literal text, `{{...}}` placeholders and unterminated `{{`. */
function tokenize(template: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{{', pos);
    if (open === -1) break;
    if (open > pos) tokens.push({ kind: 'text', text: template.slice(pos, open) });
    const close = template.indexOf('}}', open + 2);
    const reopen = template.indexOf('{{', open + 2);
    if (close === -1 || (reopen !== -1 && reopen < close)) {
      const end = close === -1 ? template.length : reopen;
      tokens.push({ kind: 'unterminated', raw: template.slice(open, end), offset: open });
      pos = end;
      continue;
    }
    tokens.push({
      kind: 'placeholder',
      name: template.slice(open + 2, close).trim(),
      raw: template.slice(open, close + 2),
      offset: open,
    });
    pos = close + 2;
  }
  if (pos < template.length) tokens.push({ kind: 'text', text: template.slice(pos) });
  return tokens;
}

/** Why a placeholder name cannot be filled, or null when it is well formed. */
function placeholderProblem(name: string): string | null {
  if ((ROOTS as readonly string[]).includes(name)) return null;
  if (name.startsWith('row.')) {
    return name
      .slice(4)
      .split('.')
      .some((segment) => segment.trim() === '')
      ? 'has an empty segment in its row path'
      : null;
  }
  return `is not a known placeholder (use ${ROOTS.map((r) => `{{${r}}}`).join(', ')} or {{row.<column>}})`;
}

export function checkRubric(template: string): string[] {
  const errors: string[] = [];
  for (const token of tokenize(template)) {
    if (token.kind === 'unterminated')
      errors.push(
        `unterminated "{{" at ${position(template, token.offset)}: ${JSON.stringify(token.raw.slice(0, 40))}`,
      );
    if (token.kind === 'placeholder') {
      const problem = placeholderProblem(token.name);
      if (problem) errors.push(`placeholder ${token.raw} at ${position(template, token.offset)} ${problem}`);
    }
  }
  return errors;
}

/** The rubric shows the judge the trajectory: it must be read and rendered before grading. */
export function namesTrajectory(template: string): boolean {
  return tokenize(template).some((t) => t.kind === 'placeholder' && t.name === 'trajectory');
}

export function renderRubric(template: string, ctx: GradingContext): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const parts = tokenize(template).map((token) => {
    if (token.kind === 'text') return token.text;
    if (token.kind === 'unterminated') return token.raw;
    const value = placeholderProblem(token.name) === null ? lookup(token.name, ctx) : undefined;
    if (value === undefined || value === null) {
      missing.add(token.name);
      return '';
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
  return { text: parts.join(''), missing: [...missing] };
}

function lookup(name: string, ctx: GradingContext): unknown {
  if (!name.startsWith('row.')) return ctx[name as Root];
  const row = ctx.row;
  const path = name.slice(4);
  if (!row) return undefined;
  // A column whose own name contains dots wins over walking the path.
  if (Object.hasOwn(row, path)) return row[path];
  let current: unknown = row;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment.trim())) return undefined;
    current = (current as Record<string, unknown>)[segment.trim()];
  }
  return current;
}

function position(template: string, offset: number): string {
  const before = template.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

/** The judge's instructions: the answer must be one JSON object in the scale's format. */
export function answerFormat(scale: VerdictScale): string {
  if (scale.type === 'numeric') {
    return `Reply with only a JSON object and no other text, in exactly this format: {"score": <number between ${scale.min} and ${scale.max}>, "reason": "<one or two sentences>"}. The score must be a number from ${scale.min} to ${scale.max} inclusive.`;
  }
  const labels = scale.labels.map((l) => JSON.stringify(l)).join(', ');
  return `Reply with only a JSON object and no other text, in exactly this format: {"label": "<one of ${labels}>", "reason": "<one or two sentences>"}. The label must be exactly one of ${labels}.`;
}

export function gradingMessages(rubric: string, scale: VerdictScale, ctx: GradingContext): JudgeMessage[] {
  return [
    {
      role: 'system',
      content: `You are an impartial evaluation judge. Grade according to the user's instructions. ${answerFormat(scale)}`,
    },
    { role: 'user', content: renderRubric(rubric, ctx).text },
  ];
}
