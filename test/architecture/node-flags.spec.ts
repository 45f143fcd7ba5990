import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/** The flags `npm start` gives node (docs/operations.md#node-flags). */
const FLAGS = ['--max-semi-space-size=32'];

/** The arguments node is started with in `command` (a shell line or an exec array) for `entry`. */
function nodeArgs(command: string | string[], entry: string): string[] | undefined {
  const words = typeof command === 'string' ? command.split(/\s+/) : command;
  const at = words.indexOf(entry);
  if (at < 0) return undefined;
  const node = words.lastIndexOf('node', at);
  return node < 0 ? undefined : words.slice(node + 1, at);
}

/**
 * Every way the service is started gives node the same flags: the API and the worker through npm
 * and in the Docker image. A flag changed in one place and not another would make a deployment
 * behave unlike what the benchmarks measured.
 */
describe('node flags', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const dockerCmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];

  it('npm start and npm run start:worker give node the same flags', () => {
    expect(nodeArgs(scripts.start, 'dist/src/main.js')).toEqual(FLAGS);
    expect(nodeArgs(scripts['start:worker'], 'dist/src/worker.js')).toEqual(FLAGS);
  });

  it("the Docker image's command gives node the same flags", () => {
    expect(dockerCmd).toBeDefined();
    expect(nodeArgs(JSON.parse(dockerCmd!) as string[], 'dist/src/main.js')).toEqual(FLAGS);
  });
});
