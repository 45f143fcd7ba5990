import { valueAt } from '#libs/evaluation/row-context.js';

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;

/** Problems of a template: unknown placeholder roots or an unterminated `{{`. */
export function checkSdgTemplate(template: string, pointer: string, dimensions: string[]): string[] {
  const errors: string[] = [];
  const open = template.split('{{').length - 1;
  if (open !== template.split('}}').length - 1) errors.push(`${pointer}: unbalanced {{ }}`);
  for (const [, expr] of template.matchAll(PLACEHOLDER)) {
    if (expr === 'index' || /^seed\.[^\s.][^\s]*$/.test(expr)) continue;
    const dim = /^dim\.(.+)$/.exec(expr);
    if (dim && dimensions.includes(dim[1])) continue;
    errors.push(
      dim
        ? `${pointer}: {{${expr}}} names no dimension of the adapter (${dimensions.join(', ') || 'none'})`
        : `${pointer}: unknown placeholder {{${expr}}}; use {{seed.<column>}}, {{dim.<name>}} or {{index}}`,
    );
  }
  return errors;
}

export interface SdgContext {
  seed: Record<string, unknown>;
  dim: Record<string, string>;
  index: number;
}

/** The template with its placeholders replaced; a seed column the row lacks is an error naming it. */
export function renderSdgTemplate(template: string, ctx: SdgContext): { text: string; missing: string[] } {
  const missing: string[] = [];
  const text = template.replace(PLACEHOLDER, (_, expr: string) => {
    if (expr === 'index') return String(ctx.index);
    if (expr.startsWith('dim.')) return ctx.dim[expr.slice(4)] ?? '';
    const value = valueAt(ctx.seed, expr.slice(5));
    if (value === undefined || value === null) {
      missing.push(expr);
      return '';
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
  return { text, missing };
}

/** Every combination of the dimension values (one empty combination without dimensions). */
export function combinations(dimensions: Record<string, string[]>): Array<Record<string, string>> {
  return Object.entries(dimensions).reduce<Array<Record<string, string>>>(
    (acc, [name, values]) => acc.flatMap((combo) => values.map((v) => ({ ...combo, [name]: v }))),
    [{}],
  );
}
