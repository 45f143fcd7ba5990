import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { SourceFile } from './import-graph.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The service's own TypeScript (src/ and libs/, without specs), each file with its path from `root`. */
export function productionFiles(root: string): SourceFile[] {
  return [...sources(join(root, 'src')), ...sources(join(root, 'libs'))].map((path) => ({
    path: relative(root, path),
    text: readFileSync(path, 'utf8'),
  }));
}
