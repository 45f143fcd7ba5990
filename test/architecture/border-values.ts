import { posix } from 'node:path';
import { familyOf, type SourceFile } from './import-graph.js';

/** A member name that says it holds SQL text (a statement, a clause, the name of a relation in one). */
const SQL_MEMBER =
  /^(sql|ctes?|relation|statement|query|select|from|joins?|where|wheres|clauses?|predicates?|conditions?|order|orderBy|fragments?)$/i;

/** A member typed as text: `name: string`, `name?: string[]`, `readonly name: readonly string[]`. */
const TEXT_MEMBER = /(?:^|[\s{;,(])(?:readonly\s+)?(\w+)\??\s*:\s*(?:readonly\s+)?string(?:\[\])?\s*(?=[;,}\n)|])/g;

/** The names a file imports from each relative module (`import { A, type B as C } from './x.js'`). */
function namedImports(file: SourceFile): Array<{ target: string; names: string[] }> {
  return [...file.text.matchAll(/^(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(\.{1,2}\/[^']+)';/gms)].map(
    (m) => ({
      target: posix.normalize(posix.join(posix.dirname(file.path), m[2])).replace(/\.(js|ts)$/, ''),
      names: m[1]
        .split(',')
        .map(
          (s) =>
            s
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0],
        )
        .filter(Boolean),
    }),
  );
}

/** The text from `open` (an opening bracket) to its closing one. */
function bracketed(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if ('{(['.includes(text[i])) depth++;
    else if ('})]'.includes(text[i]) && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** The body of `name`'s exported interface or type alias in `text`, if the file declares it. */
function declaration(text: string, name: string): string | undefined {
  const iface = new RegExp(`^export\\s+interface\\s+${name}\\b[^{]*\\{`, 'm').exec(text);
  if (iface) return bracketed(text, iface.index + iface[0].length - 1);
  const alias = new RegExp(`^export\\s+type\\s+${name}\\b[^=]*=`, 'm').exec(text);
  if (!alias) return undefined;
  const rest = text.slice(alias.index + alias[0].length);
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    if ('{(['.includes(rest[i])) depth++;
    else if ('})]'.includes(rest[i])) depth--;
    else if (rest[i] === ';' && depth === 0) return rest.slice(0, i);
  }
  return rest;
}

/**
 * Types and interfaces one family hands another (imported across families, directly or through a
 * re-export of the owning family) with a member that holds SQL text: between families only typed
 * values and typed query builders cross (docs/architecture.md#what-families-offer-each-other).
 */
export function sqlTextAcrossFamilies(files: SourceFile[]): string[] {
  const byModule = new Map(files.map((f) => [f.path.replace(/\.ts$/, ''), f]));
  const problems: string[] = [];
  const find = (module: string, name: string, depth: number): { body: string; module: string } | undefined => {
    const file = byModule.get(module);
    if (!file || depth > 3) return undefined;
    const body = declaration(file.text, name);
    if (body !== undefined) return { body, module };
    const onward = namedImports(file).find((i) => i.names.includes(name));
    return onward ? find(onward.target, name, depth + 1) : undefined;
  };
  for (const file of files) {
    const from = familyOf(file.path);
    if (!from) continue;
    for (const { target, names } of namedImports(file)) {
      const to = familyOf(target);
      if (!to || to === from) continue;
      for (const name of names) {
        const found = find(target, name, 0);
        if (!found) continue;
        for (const [, member] of found.body.matchAll(TEXT_MEMBER))
          if (SQL_MEMBER.test(member))
            problems.push(`${file.path} takes ${name} from ${found.module}: its ${member} holds SQL text`);
      }
    }
  }
  return problems;
}
