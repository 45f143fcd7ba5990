import { posix } from 'node:path';

/** A source file as the layering rules see it: its path from the repository root, and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** One import of one file: who imports, and the repository path it names (extension dropped). */
export interface ImportEdge {
  from: string;
  to: string;
}

/**
 * The relative modules a file imports or re-exports, statically or with `import()`, type-only
 * imports included (they still tie one folder to another).
 */
export function relativeImports(file: SourceFile): ImportEdge[] {
  const specifiers = [
    ...file.text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm),
  ].map((m) => m[2]);
  return specifiers.map((spec) => ({
    from: file.path,
    to: posix.normalize(posix.join(posix.dirname(file.path), spec)).replace(/\.(js|ts)$/, ''),
  }));
}

/** Imports from libs/ into src/: libraries serve the application, never the other way round. */
export function libsImportingSrc(files: SourceFile[]): string[] {
  return files
    .filter((f) => f.path.startsWith('libs/'))
    .flatMap(relativeImports)
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
  for (const edge of files.flatMap(relativeImports)) {
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
    .flatMap(relativeImports)
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
