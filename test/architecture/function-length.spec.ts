import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/** Longer than this, a function must say why beside it (in LONG_FUNCTIONS). */
const MAX_LINES = 100;

/** Functions kept longer than MAX_LINES, with the reason. The list may only shrink: a stale entry fails. */
const LONG_FUNCTIONS: Record<string, string> = {
  'src/database/migrations/*: *.up':
    'a migration is the list of statements that make its tables; split, it reads out of order',
};

interface Found {
  key: string;
  lines: number;
}

/** Every function, method and arrow function of `text` longer than `max` lines, as `path: Class.name`. */
export function longFunctions(path: string, text: string, max = MAX_LINES): Found[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: Found[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isArrowFunction(node) ||
        ts.isFunctionExpression(node)) &&
      node.body
    ) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > max) {
        const name =
          node.name?.getText(source) ??
          (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
        let owner: ts.Node | undefined = node.parent;
        while (owner && !ts.isClassDeclaration(owner)) owner = owner.parent;
        const cls = owner && ts.isClassDeclaration(owner) && owner.name ? `${owner.name.getText(source)}.` : '';
        found.push({ key: `${path}: ${cls}${name}`, lines: last - first + 1 });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The allowlist key a found function matches: itself, or a `*` pattern over its path and name. */
function allowedBy(key: string): string | undefined {
  return Object.keys(LONG_FUNCTIONS).find((pattern) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^:]*')}$`).test(key),
  );
}

describe('functions fit a screen (at most 100 lines, or a reason beside them)', () => {
  const sources = execFileSync('git', ['ls-files', 'src/**/*.ts', 'libs/**/*.ts'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.endsWith('.spec.ts'));
  const found = sources.flatMap((path) => longFunctions(path, readFileSync(join(root, path), 'utf8')));

  it('has no function over 100 lines that the list does not give a reason for', () => {
    expect(found.filter((f) => !allowedBy(f.key)).map((f) => `${f.key} (${f.lines} lines)`)).toEqual([]);
  });

  it('lists no function that is no longer long', () => {
    const used = new Set(found.map((f) => allowedBy(f.key)));
    expect(Object.keys(LONG_FUNCTIONS).filter((k) => !used.has(k))).toEqual([]);
  });

  it('sees a long function, method and arrow function, and not a short one', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = `function long() {\n${body(100)}\n}\nfunction short() {\n${body(10)}\n}\nclass C {\n  m() {\n${body(100)}\n  }\n}\nconst a = () => {\n${body(100)}\n};\n`;
    expect(longFunctions('x.ts', text).map((f) => f.key)).toEqual(['x.ts: long', 'x.ts: C.m', 'x.ts: a']);
  });
});
