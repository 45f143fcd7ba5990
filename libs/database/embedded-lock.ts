import { randomBytes } from 'node:crypto';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

/** A lock whose owner cannot be checked (another host or container) is stale this long after its last refresh. */
export const LOCK_STALE_AFTER_MS = 20_000;
/** How often the owner refreshes its lock's modification time. */
const LOCK_REFRESH_MS = 5_000;
/** A takeover marker older than this was left by a process that died while taking over. */
const TAKEOVER_STALE_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Who holds the lock: enough for a process on the same machine to tell whether that owner still runs. */
export interface LockOwner {
  pid: number;
  /** When the process started, in clock ticks since boot (/proc/<pid>/stat): a reused pid has another. */
  start_time: string | null;
  /** /proc/sys/kernel/random/boot_id: another value means the machine rebooted, or is another machine. */
  boot_id: string | null;
  /** The pid namespace (/proc/self/ns/pid): pids of another container mean nothing here. */
  pid_namespace: string | null;
  hostname: string;
  /** Unique per acquisition, so a takeover removes exactly the lock it judged. */
  token: string;
  acquired_at: string;
}

interface LockOptions {
  /** Where a stale lock's removal is reported (a pino logger). */
  logger?: { warn(details: object, message: string): void };
  /** Called when the lock was removed or replaced under this process (default: throw, which ends the process). */
  onCompromised?: (err: Error) => void;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Field 22 of /proc/<pid>/stat, and the state (field 3); null where /proc does not exist. */
function procStat(pid: number | 'self'): { state: string; startTime: string } | null {
  const stat = readOrNull(`/proc/${pid}/stat`);
  if (!stat) return null;
  // The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startTime: fields[19] };
}

function currentOwner(token: string): LockOwner {
  let pidNamespace: string | null = null;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // not Linux: the pid alone is checked
  }
  return {
    pid: process.pid,
    start_time: procStat('self')?.startTime ?? null,
    boot_id: readOrNull('/proc/sys/kernel/random/boot_id'),
    pid_namespace: pidNamespace,
    hostname: hostname(),
    token,
    acquired_at: new Date().toISOString(),
  };
}

/** What the lock file says, as found on disk. */
export interface FoundLock {
  /** null when the file cannot be read as an owner (being written right now, or a proper-lockfile directory from an older release). */
  owner: LockOwner | null;
  mtimeMs: number;
  ino: number;
}

function readLock(path: string): FoundLock | null {
  let stats;
  try {
    stats = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let owner: LockOwner | null = null;
  if (stats.isFile()) {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
      if (Number.isInteger(parsed.pid) && parsed.pid > 0 && typeof parsed.token === 'string') owner = parsed;
    } catch {
      // empty or partial: judged by its age
    }
  }
  return { owner, mtimeMs: stats.mtimeMs, ino: stats.ino };
}

/** What can be told about a lock's owner from this process. */
export type OwnerVerdict =
  { state: 'alive' } | { state: 'gone'; reason: string } | { state: 'unverifiable'; ageMs: number };

/**
 * Whether the lock's owner still runs. On the same machine and pid namespace the owner's
 * process is checked at once: no such pid, a zombie, or a pid now used by a process that
 * started at another time means it is gone. An owner that cannot be checked from here (another
 * host, container or boot; an unreadable lock) is judged by how long ago it refreshed the lock.
 */
export function judgeOwner(found: FoundLock, self: LockOwner, now = Date.now()): OwnerVerdict {
  const { owner } = found;
  if (
    owner &&
    owner.hostname === self.hostname &&
    owner.boot_id === self.boot_id &&
    owner.pid_namespace === self.pid_namespace
  ) {
    try {
      process.kill(owner.pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH')
        return { state: 'gone', reason: `its owner (pid ${owner.pid}) is not running` };
      // EPERM: the process exists (another user)
    }
    const stat = procStat(owner.pid);
    if (stat && (stat.state === 'Z' || stat.state === 'X'))
      return { state: 'gone', reason: `its owner (pid ${owner.pid}) has exited` };
    if (!stat && procStat('self')) return { state: 'gone', reason: `its owner (pid ${owner.pid}) is not running` };
    if (stat && owner.start_time && stat.startTime !== owner.start_time)
      return { state: 'gone', reason: `pid ${owner.pid} now belongs to another process` };
    return { state: 'alive' };
  }
  const ageMs = now - found.mtimeMs;
  if (ageMs > LOCK_STALE_AFTER_MS) {
    const who = owner ? `its owner (pid ${owner.pid} on ${owner.hostname})` : 'its owner';
    return { state: 'gone', reason: `${who} last refreshed it ${Math.round(ageMs / 1000)} s ago` };
  }
  return { state: 'unverifiable', ageMs };
}

/**
 * For an owner that cannot be checked from here: waits until it refreshes the lock (alive) or
 * lets it go stale (gone). A live owner refreshes within LOCK_REFRESH_MS.
 */
async function watchUnverifiable(path: string, found: FoundLock, self: LockOwner): Promise<OwnerVerdict | null> {
  for (;;) {
    await sleep(250);
    const now = readLock(path);
    if (!now || now.ino !== found.ino) return null; // released or replaced: look again
    if (now.mtimeMs !== found.mtimeMs) return { state: 'alive' };
    const verdict = judgeOwner(now, self);
    if (verdict.state !== 'unverifiable') return verdict;
  }
}

function lockedMessage(dir: string, found: FoundLock): string {
  const owner = found.owner;
  const who = owner ? ` (pid ${owner.pid} on ${owner.hostname}, since ${owner.acquired_at})` : '';
  return `DATA_DIR: ${dir} is in use by another process of this service${who}. Stop it, or give this process another DATA_DIR (or a DATABASE_URL).`;
}

/** Creates the lock file with its content in one step (a hard link fails when the name exists). */
function tryCreate(path: string, owner: LockOwner): boolean {
  const body = `${JSON.stringify(owner)}\n`;
  const temp = `${path}.${owner.token}`;
  writeFileSync(temp, body, { mode: 0o644 });
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    // A filesystem without hard links: exclusive create (an empty file for a moment is judged by its age).
    try {
      writeFileSync(path, body, { flag: 'wx', mode: 0o644 });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Removes the lock judged stale, unless it changed meanwhile. Takeovers are serialised by a
 * marker directory, so two processes starting at once cannot both remove a lock and both win.
 */
async function removeStale(path: string, judged: FoundLock): Promise<boolean> {
  const marker = `${path}.takeover`;
  const until = Date.now() + 3_000;
  for (;;) {
    try {
      mkdirSync(marker);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(marker).mtimeMs > TAKEOVER_STALE_MS) rmSync(marker, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (Date.now() > until) return false;
      await sleep(50);
    }
  }
  try {
    const now = readLock(path);
    if (!now) return true;
    const same =
      judged.owner && now.owner
        ? now.owner.token === judged.owner.token
        : !judged.owner && !now.owner && now.ino === judged.ino;
    if (!same) return false;
    rmSync(path, { recursive: true, force: true });
    return true;
  } finally {
    rmSync(marker, { recursive: true, force: true });
  }
}

/**
 * PGlite has no lock of its own and two processes on one data directory corrupt it. Takes an
 * exclusive lock: `DATA_DIR/.lock` names its owner (pid, process start time, boot id, pid
 * namespace, host) and is refreshed every few seconds. A lock whose owner is gone (see
 * `judgeOwner`) is taken over at once, so a restart after a crash or SIGKILL works
 * immediately; a live owner makes this throw `DataDirLockedError`. An owner that cannot be
 * checked from here is waited for: refreshed means alive, LOCK_STALE_AFTER_MS without a
 * refresh means gone. The lock goes when the returned function runs, or when the process exits.
 */
export async function lockDataDirectory(dir: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, '.lock');
  const owner = currentOwner(randomBytes(12).toString('hex'));
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(path, owner)) break;
    const found = readLock(path);
    if (!found) continue; // released meanwhile
    let verdict: OwnerVerdict | null = judgeOwner(found, owner);
    if (verdict.state === 'unverifiable') {
      options.logger?.warn(
        { data_dir: dir, owner: found.owner },
        `DATA_DIR: the lock's owner cannot be checked from here (another host or container); waiting up to ${Math.ceil((LOCK_STALE_AFTER_MS - verdict.ageMs) / 1000)} s for it to refresh the lock`,
      );
      verdict = await watchUnverifiable(path, found, owner);
      if (!verdict) continue;
    }
    if (verdict.state === 'alive' || attempt >= 5) throw new DataDirLockedError(lockedMessage(dir, found));
    if (verdict.state === 'gone' && (await removeStale(path, found))) {
      options.logger?.warn(
        { data_dir: dir, previous_owner: found.owner },
        `DATA_DIR: removed a stale lock (${verdict.reason})`,
      );
    }
  }
  return holdLock(path, owner, options);
}

function holdLock(path: string, owner: LockOwner, options: LockOptions): () => Promise<void> {
  const stillOurs = () => readLock(path)?.owner?.token === owner.token;
  const refresh = setInterval(() => {
    if (!stillOurs()) {
      clearInterval(refresh);
      const err = new Error(
        `DATA_DIR lock ${path} was removed or taken over by another process; stopping before two processes write one database`,
      );
      if (options.onCompromised) options.onCompromised(err);
      else throw err;
      return;
    }
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // checked again at the next refresh
    }
  }, LOCK_REFRESH_MS);
  refresh.unref();
  const release = () => {
    clearInterval(refresh);
    process.off('exit', release);
    try {
      if (stillOurs()) unlinkSync(path);
    } catch {
      // already gone
    }
  };
  // process.exit() (the shutdown deadline) skips the normal release; SIGKILL skips both, hence the owner check.
  process.on('exit', release);
  return async () => release();
}
