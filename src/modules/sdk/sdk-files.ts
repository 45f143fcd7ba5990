import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root as seen from this file: src/modules/sdk (tests, ts-jest) or
 * dist/src/modules/sdk (npm start). The first ancestor holding both package.json and sdk/.
 */
export function findRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'sdk', 'typescript'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

/** Every file under `dir`, sorted, as bundle entries with `/`-separated paths; `skip` leaves out files and folders by name. */
export function readTree(
  dir: string,
  skip: (name: string) => boolean = () => false,
): Array<{ path: string; content: string }> {
  const out: Array<{ path: string; content: string }> = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (skip(name)) continue;
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push({ path: relative(dir, full).split(sep).join('/'), content: readFileSync(full, 'utf8') });
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}
