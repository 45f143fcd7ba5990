import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/** The flags a worker process gets (docs/operations.md#node-flags). */
const WORKER_FLAGS: string[] = [];
/** The flags the API gets. */
const API_FLAGS = ['--min-semi-space-size=8', '--max-semi-space-size=16'];

/** The allocator settings every process of the service starts with (docs/operations.md#memory). */
const ALLOCATOR_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '32768' };

/** The variables a shell line sets before the `node` that starts `entry` (`NAME=value node …`). */
function envBefore(command: string, entry: string): Record<string, string> {
  const words = command.split(/\s+/);
  const node = words.lastIndexOf('node', words.indexOf(entry));
  let first = node;
  while (first > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[first - 1])) first--;
  return Object.fromEntries(
    words.slice(first, node).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
}

/** The arguments node is started with in `command` (a shell line or an exec array) for `entry`. */
function nodeArgs(command: string | string[], entry: string): string[] | undefined {
  const words = typeof command === 'string' ? command.split(/\s+/) : command;
  const at = words.indexOf(entry);
  if (at < 0) return undefined;
  const node = words.lastIndexOf('node', at);
  return node < 0 ? undefined : words.slice(node + 1, at);
}

/**
 * The heap and allocator settings each start command gives node, as docs/operations.md#node-flags
 * and #memory decide them on Node 24: the API as `npm start` and the Docker image run it (the
 * embedded database by default) gets a young generation of 8 to 16 MB a semi-space, where Node 24's
 * own grows to 64 MB and held a run and an upload about 90 MB higher for no speed the embedded
 * database shows; a worker (PostgreSQL and Redis only) keeps V8's own sizes; every process gets
 * glibc's allocator with one arena and a fixed mmap threshold. A setting added or dropped in one
 * place and not its documented others would make a deployment behave unlike what the benchmarks
 * measured.
 */
describe('node flags', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const dockerCmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
  // The runtime stage's ENV instruction, its continuation lines joined.
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const dockerEnv = Object.fromEntries(
    [
      ...(/^ENV ((?:.*\\\n)*.*)$/m.exec(runtime)?.[1] ?? '')
        .replace(/\\\n/g, ' ')
        .matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g),
    ].map((m) => [m[1], m[2]]),
  );

  it("npm run start:worker gives the worker V8's own heap sizes; npm start gives the API semi-spaces of 8 to 16 MB", () => {
    expect(nodeArgs(scripts['start:worker'], 'dist/src/worker.js')).toEqual(WORKER_FLAGS);
    expect(nodeArgs(scripts.start, 'dist/src/main.js')).toEqual(API_FLAGS);
  });

  it('npm start, npm run start:worker and the Docker image give node the same allocator settings', () => {
    expect(envBefore(scripts.start, 'dist/src/main.js')).toEqual(ALLOCATOR_ENV);
    expect(envBefore(scripts['start:worker'], 'dist/src/worker.js')).toEqual(ALLOCATOR_ENV);
    expect(dockerEnv).toMatchObject(ALLOCATOR_ENV);
  });

  it("the Docker image's command starts the API as npm start does", () => {
    expect(dockerCmd).toBeDefined();
    expect(nodeArgs(JSON.parse(dockerCmd!) as string[], 'dist/src/main.js')).toEqual(
      nodeArgs(scripts.start, 'dist/src/main.js'),
    );
  });
});
