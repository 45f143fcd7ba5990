import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/** The flags a worker process gets (docs/operations.md#node-flags). */
const WORKER_FLAGS = ['--max-semi-space-size=32'];

/** The arguments node is started with in `command` (a shell line or an exec array) for `entry`. */
function nodeArgs(command: string | string[], entry: string): string[] | undefined {
  const words = typeof command === 'string' ? command.split(/\s+/) : command;
  const at = words.indexOf(entry);
  if (at < 0) return undefined;
  const node = words.lastIndexOf('node', at);
  return node < 0 ? undefined : words.slice(node + 1, at);
}

/**
 * The young generation each start command gives node, as docs/operations.md#node-flags decides
 * it: a worker (PostgreSQL and Redis only) gets 32-MB semi-spaces; the API as `npm start` and the
 * Docker image run it (the embedded database by default) keeps V8's own, since there the larger
 * young generation raised an upload's peak memory by about 80 MB and gained no speed. A flag added
 * or dropped in one place and not its documented others would make a deployment behave unlike
 * what the benchmarks measured.
 */
describe('node flags', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const dockerCmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];

  it('npm run start:worker gives the worker 32-MB semi-spaces; npm start gives the API no flag', () => {
    expect(nodeArgs(scripts['start:worker'], 'dist/src/worker.js')).toEqual(WORKER_FLAGS);
    expect(nodeArgs(scripts.start, 'dist/src/main.js')).toEqual([]);
  });

  it("the Docker image's command starts the API as npm start does", () => {
    expect(dockerCmd).toBeDefined();
    expect(nodeArgs(JSON.parse(dockerCmd!) as string[], 'dist/src/main.js')).toEqual(
      nodeArgs(scripts.start, 'dist/src/main.js'),
    );
  });
});
