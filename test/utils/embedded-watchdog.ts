import { expect } from '@jest/globals';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * The embedded database has exactly one connection. A query issued outside the open
 * transaction while that transaction is open waits for the connection forever (the transaction
 * waits for the query): the request hangs. In tests that wait is cut short: a query that has
 * waited EMBEDDED_WAIT_MS for the connection fails with an error naming where it was issued
 * and who holds the connection, the request fails (500) instead of hanging, and the test that
 * was running fails with that report (see `takeEmbeddedDeadlocks`, checked after each test).
 * A slow transaction merely delays the others; only a wait this long is reported.
 */
export const EMBEDDED_WAIT_MS = Number(process.env.TEST_EMBEDDED_WAIT_MS ?? 8_000);

export class EmbeddedDeadlockError extends Error {}

interface Acquired {
  stack: string;
  at: number;
}

interface PoolInternals {
  options: { max: number; connection?: unknown };
  _clients: unknown[];
  _idle: unknown[];
  connect: (cb?: ConnectCallback) => unknown;
}

type Release = (err?: unknown) => void;
type ConnectCallback = (err: Error | undefined, client?: unknown, release?: Release) => void;

const holders = new WeakMap<object, Acquired>();
const reports: string[] = [];
const PATCHED = Symbol.for('ews.embeddedWatchdog');

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The frames of this repository's code (src/, libs/, test/), as paths relative to it: not
 * node_modules, node internals, nor library sources that source maps place under another src/.
 */
function ownFrames(stack: string | undefined, limit = 12): string {
  const frames: string[] = [];
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const at = /^\s*at (?:(.*?) \()?(?:file:\/\/)?(\/[^():]+):(\d+):(\d+)\)?$/.exec(line);
    if (!at) continue;
    const [, fn, path, lineNo] = at;
    const rel = relative(root, path);
    if (
      rel.startsWith('..') ||
      !/^(src|libs|test)\//.test(rel) ||
      rel.includes('node_modules') ||
      rel.endsWith('embedded-watchdog.ts') ||
      !existsSync(path)
    )
      continue;
    frames.push(`    at ${fn ? `${fn} ` : ''}(${rel}:${lineNo})`);
  }
  return (frames.length ? frames.slice(0, limit) : ['    (no frame of the service: a driver or library call)']).join(
    '\n',
  );
}

function currentTest(): string {
  try {
    return expect.getState().currentTestName ?? '(outside a test: a hook)';
  } catch {
    return '(outside a test)';
  }
}

function watchedConnect(original: PoolInternals['connect']): PoolInternals['connect'] {
  return function (this: PoolInternals, cb?: ConnectCallback) {
    // Only the embedded pool (PGlite's node-postgres adapter passes its connection), and only
    // callback-style calls, which is how TypeORM asks.
    if (typeof cb !== 'function' || !this.options?.connection) return original.call(this, cb);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the closures below outlive this call
    const pool = this;
    const requested = new Error('requested here');
    const willWait = pool._clients.length >= pool.options.max && pool._idle.length === 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    if (willWait) {
      timer = setTimeout(() => {
        settled = true;
        const holder = holders.get(pool);
        const report =
          `embedded database: a query waited ${EMBEDDED_WAIT_MS} ms for the one connection (test: ${currentTest()}).\n` +
          `The waiting query was issued at:\n${ownFrames(requested.stack)}\n` +
          (holder
            ? `The connection is held (for ${Date.now() - holder.at} ms) by the unit of work taken at:\n${ownFrames(holder.stack)}\n`
            : 'The connection holder is unknown (taken before the watchdog was installed).\n') +
          'A query outside the open transaction while it is open never gets the connection.';
        reports.push(report);
        process.stderr.write(`\n[embedded-deadlock] ${report}\n`);
        cb(new EmbeddedDeadlockError(report));
      }, EMBEDDED_WAIT_MS);
      timer.unref();
    }
    return original.call(pool, (err, client, release) => {
      if (timer) clearTimeout(timer);
      if (settled) {
        // Given up on: hand the connection straight back.
        if (!err) release?.();
        return;
      }
      settled = true;
      if (err || !release) return cb(err, client, release);
      holders.set(pool, { stack: requested.stack ?? '', at: Date.now() });
      cb(err, client, (releaseErr?: unknown) => {
        holders.delete(pool);
        release(releaseErr);
      });
    });
  };
}

/**
 * Installs the watchdog on node-postgres's pool class (so it also covers the app's boot), once
 * per test file; `watchPool` covers a pool built from another copy of the module.
 */
export function installEmbeddedWatchdog(): void {
  const proto = Object.getPrototypeOf(pg.Pool.prototype) as PoolInternals & { [PATCHED]?: boolean };
  if (proto[PATCHED]) return;
  proto.connect = watchedConnect(proto.connect);
  proto[PATCHED] = true;
}

export function watchPool(pool: unknown): void {
  const p = pool as (PoolInternals & { [PATCHED]?: boolean }) | undefined;
  if (!p || p[PATCHED]) return;
  p.connect = watchedConnect(p.connect);
  p[PATCHED] = true;
}

/** The deadlock reports since the last call (each test's are checked after it). */
export function takeEmbeddedDeadlocks(): string[] {
  return reports.splice(0, reports.length);
}
