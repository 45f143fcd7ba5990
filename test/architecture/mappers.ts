import { familyOf, type SourceFile } from './import-graph.js';

/** Names a file imports from a `dto/` module (the response and request shapes of its family or another). */
function dtoNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)';/gms)) {
    if (!/\/dto\//.test(m[2])) continue;
    for (const spec of m[1].split(',')) {
      const name = spec
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  return names;
}

/** The text between the parenthesis at `open` and its match, and the offset after the match. */
function balanced(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i + 1;
  }
  return text.length;
}

/**
 * Top-level functions outside a family's `<family>.mapper.ts` that build a DTO: declared to return
 * a type imported from a `dto/` module; and class methods named as mappers are (`to…`, as
 * `toResponse`) that do. Entity → response mapping lives in the family's one mapper.
 */
export function dtoBuildersOutsideMappers(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const f of files) {
    const family = familyOf(f.path);
    if (!family || f.path.endsWith('.mapper.ts') || /\/dto\//.test(f.path)) continue;
    const dtos = dtoNames(f.text);
    if (!dtos.size) continue;
    const functions = f.text.matchAll(/^(?:export\s+)?(?:async\s+)?function\s+(\w+)\s*(?:<[^>]*>)?\(/gm);
    const methods = f.text.matchAll(
      /^[ \t]+(?:(?:private|protected|public|static|async)\s+)*(to[A-Z]\w*)\s*(?:<[^>]*>)?\(/gm,
    );
    for (const m of [...functions, ...methods]) {
      const after = f.text.slice(balanced(f.text, m.index + m[0].length - 1));
      const returned = /^\s*:\s*([^{]+?)\s*\{/.exec(after)?.[1] ?? '';
      if ((returned.match(/\w+/g) ?? []).some((name) => dtos.has(name))) found.push(`${f.path}: ${m[1]}`);
    }
  }
  return found;
}
