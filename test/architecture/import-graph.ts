import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** A source file as the layering rules see it: its path from the repository root, and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** One import of one file: who imports, the repository path it names (extension dropped), and how it was written. */
export interface ImportEdge {
  from: string;
  to: string;
  specifier: string;
}

/** A subpath import of package.json "imports" (`#libs/*` → `./libs/*`): the prefix and the folder it names. */
interface Subpath {
  prefix: string;
  folder: string;
}

/**
 * The package's subpath imports as the type checker reads them: the "types" target, the sources
 * (docs/decisions/0015-subpath-imports.md). `#libs/database/db.js` is the file libs/database/db.ts.
 */
function subpathsOf(packageJson: { imports?: Record<string, string | Record<string, string>> }): Subpath[] {
  return Object.entries(packageJson.imports ?? {}).map(([key, target]) => {
    const source = typeof target === 'string' ? target : (target.types ?? target.default);
    if (!key.endsWith('/*') || !source?.startsWith('./') || !source.endsWith('/*'))
      throw new Error(`package.json imports: ${key} is not "#name/*" naming "./folder/*"`);
    return { prefix: key.slice(0, -1), folder: source.slice(2, -1) };
  });
}

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const SUBPATHS = subpathsOf(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));

/**
 * The repository's modules a file imports or re-exports, statically or with `import()`, type-only
 * imports included (they still tie one folder to another), and the modules a `declare module`
 * augments or a `jest.mock` replaces: written relatively (`../x.js`) or as a subpath import
 * (`#libs/database/db.js`), which names the same file as the relative climb it replaces.
 */
export function localImports(file: SourceFile): ImportEdge[] {
  const specifiers = [
    ...file.text.matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+|\bdeclare\s+module\s+|\bjest\.(?:unstable_mockModule|mock)\(\s*)(['"])((?:\.{1,2}\/|#)[^'"]+)\1/gm,
    ),
  ].map((m) => m[2]);
  return specifiers.flatMap((specifier) => {
    const subpath = SUBPATHS.find((s) => specifier.startsWith(s.prefix));
    if (specifier.startsWith('#') && !subpath) return [];
    const path = subpath
      ? subpath.folder + specifier.slice(subpath.prefix.length)
      : posix.normalize(posix.join(posix.dirname(file.path), specifier));
    return [{ from: file.path, to: path.replace(/\.(js|ts)$/, ''), specifier }];
  });
}

/**
 * Relative imports that climb into a library from outside it: `../libs/…` (or deeper, or
 * `../dist/libs/…`) from anywhere, `../database/…` from another library. A library is reached
 * as `#libs/<library>/…`; only files of one library import each other relatively.
 */
export function climbsIntoLibs(files: SourceFile[]): string[] {
  return files
    .flatMap(localImports)
    .filter((edge) => edge.specifier.startsWith('../'))
    .filter((edge) => {
      const library = /^(dist\/)?libs\/([^/]+)\//.exec(edge.to);
      return library !== null && (library[1] !== undefined || !edge.from.startsWith(`libs/${library[2]}/`));
    })
    .map((edge) => `${edge.from} imports ${edge.specifier}`);
}

/**
 * The repository's package.json files imported by a module: the compiler would write the file into
 * dist/ beside the code, a package of its own for everything built, whose subpath imports
 * (`#libs/*` → `./dist/libs/*`) would resolve against dist/ (docs/decisions/0015-subpath-imports.md).
 */
export function packageJsonImports(files: SourceFile[]): string[] {
  return files
    .flatMap(localImports)
    .filter((edge) => posix.basename(edge.to) === 'package.json')
    .map((edge) => `${edge.from} imports ${edge.specifier}`);
}

/** Imports from libs/ into src/: libraries serve the application, never the other way round. */
export function libsImportingSrc(files: SourceFile[]): string[] {
  return files
    .filter((f) => f.path.startsWith('libs/'))
    .flatMap(localImports)
    .filter((edge) => edge.to.startsWith('src/'))
    .map((edge) => `${edge.from} imports ${edge.to}`);
}

/** The family folder (src/modules/<family>/…) a path lies in, if any. */
export function familyOf(path: string): string | undefined {
  return /^src\/modules\/([^/]+)\//.exec(path)?.[1];
}

/** Family → the families it imports → one import that shows it (the first met). */
export type FamilyGraph = Map<string, Map<string, ImportEdge>>;

export function familyGraph(files: SourceFile[]): FamilyGraph {
  const graph: FamilyGraph = new Map();
  for (const edge of files.flatMap(localImports)) {
    const from = familyOf(edge.from);
    const to = familyOf(edge.to);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    if (to && to !== from && !graph.get(from)!.has(to)) graph.get(from)!.set(to, edge);
  }
  return graph;
}

/**
 * The import cycles between families: each strongly connected component of more than one
 * family (Tarjan), reported as one cycle through it with the import that makes each step.
 */
export function familyCycles(graph: FamilyGraph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const neighbours = (node: string) => [...(graph.get(node)?.keys() ?? [])].sort();
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of neighbours(node)) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => describeCycle(graph, component));
}

/** A shortest way round the component from its first family, each step named by its import. */
function describeCycle(graph: FamilyGraph, component: string[]): string {
  const members = new Set(component);
  const start = component[0];
  // Breadth-first from start's neighbours back to start, inside the component.
  const previous = new Map<string, string>();
  const queue = [...(graph.get(start)?.keys() ?? [])].filter((n) => members.has(n));
  for (const n of queue) previous.set(n, start);
  while (queue.length && !previous.has(start)) {
    const node = queue.shift()!;
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!members.has(to) || previous.has(to)) continue;
      previous.set(to, node);
      queue.push(to);
    }
  }
  const path = [start];
  for (let node = previous.get(start)!; node !== start; node = previous.get(node)!) path.unshift(node);
  path.unshift(start);
  const steps = path.slice(1).map((to, i) => {
    const edge = graph.get(path[i])!.get(to)!;
    return `${path[i]} → ${to} (${edge.from} imports ${edge.to})`;
  });
  return `${path.join(' → ')}: ${steps.join('; ')}`;
}

/**
 * Imports of another family's repository (type-only ones included): a family owns its tables,
 * so only its own files reach its repositories; other families call its services.
 */
export function repositoryImportsAcrossFamilies(files: SourceFile[]): string[] {
  return files
    .flatMap(localImports)
    .filter((edge) => edge.to.endsWith('.repository'))
    .filter((edge) => {
      const from = familyOf(edge.from);
      const to = familyOf(edge.to);
      return from !== undefined && to !== undefined && from !== to;
    })
    .map((edge) => `${edge.from} imports ${edge.to}`);
}

/** The repositories a family's Nest modules export (`exports: [...]` of a `*.module.ts`), as `<file>: <Class>`. */
export function exportedRepositories(files: SourceFile[]): string[] {
  return files
    .filter((f) => familyOf(f.path) !== undefined && f.path.endsWith('.module.ts'))
    .flatMap((f) =>
      [...f.text.matchAll(/\bexports:\s*\[([^\]]*)\]/g)]
        .flatMap((m) =>
          m[1]
            .replace(/\/\/.*$/gm, '')
            .split(',')
            .map((name) => name.trim()),
        )
        .filter((name) => /Repository$/.test(name))
        .map((name) => `${f.path}: ${name}`),
    );
}
