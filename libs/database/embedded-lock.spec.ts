import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, lockDataDirectory, LOCK_STALE_AFTER_MS, type LockOwner } from './embedded-lock.js';

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ews-lock-'));
  dirs.push(dir);
  return dir;
}

function procStartTime(pid: number | 'self'): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** A lock file as another process of this machine would have written it. */
function ownerFile(dir: string, owner: Partial<LockOwner>, ageMs = 0): void {
  const full: LockOwner = {
    pid: process.pid,
    start_time: procStartTime('self'),
    boot_id: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    pid_namespace: readlinkSync('/proc/self/ns/pid'),
    hostname: hostname(),
    token: 'someone-else',
    acquired_at: new Date().toISOString(),
    ...owner,
  };
  writeFileSync(join(dir, '.lock'), JSON.stringify(full));
  const at = new Date(Date.now() - ageMs);
  utimesSync(join(dir, '.lock'), at, at);
}

/** A pid that belonged to a process which has exited (and was reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

function messages(): { lines: string[]; logger: { warn: (obj: unknown, msg: string) => void } } {
  const lines: string[] = [];
  return { lines, logger: { warn: (_obj, msg) => lines.push(msg) } };
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('DATA_DIR lock', () => {
  it('records its owner and goes on release', async () => {
    const dir = dataDir();
    const release = await lockDataDirectory(dir);
    const owner = JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')) as LockOwner;
    expect(owner).toEqual(
      expect.objectContaining({
        pid: process.pid,
        start_time: procStartTime('self'),
        hostname: hostname(),
        token: expect.any(String),
      }),
    );
    await release();
    expect(existsSync(join(dir, '.lock'))).toBe(false);
  });

  it('refuses while its owner runs (here: this very process), naming DATA_DIR and the owner', async () => {
    const dir = dataDir();
    const release = await lockDataDirectory(dir);
    try {
      await expect(lockDataDirectory(dir)).rejects.toThrow(DataDirLockedError);
      await expect(lockDataDirectory(dir)).rejects.toThrow(
        `DATA_DIR: ${dir} is in use by another process of this service (pid ${process.pid} on ${hostname()}`,
      );
    } finally {
      await release();
    }
  });

  it('refuses while another live process owns it', async () => {
    const dir = dataDir();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => sleeper.once('spawn', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      ownerFile(dir, { pid: sleeper.pid!, start_time: procStartTime(sleeper.pid!) });
      await expect(lockDataDirectory(dir)).rejects.toThrow(
        `is in use by another process of this service (pid ${sleeper.pid}`,
      );
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('takes over at once from an owner that is no longer running, saying so', async () => {
    const dir = dataDir();
    const pid = deadPid();
    ownerFile(dir, { pid, start_time: '1' });
    const { lines, logger } = messages();
    const release = await lockDataDirectory(dir, { logger });
    expect(lines).toEqual([`DATA_DIR: removed a stale lock (its owner (pid ${pid}) is not running)`]);
    expect(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).pid).toBe(process.pid);
    await release();
  });

  it('takes over from a reused pid: alive, but started at another time', async () => {
    const dir = dataDir();
    ownerFile(dir, { pid: process.pid, start_time: '12345' });
    const { lines, logger } = messages();
    const release = await lockDataDirectory(dir, { logger });
    expect(lines).toEqual([`DATA_DIR: removed a stale lock (pid ${process.pid} now belongs to another process)`]);
    await release();
  });

  it('takes over from a zombie (killed, not yet reaped by its parent)', async () => {
    const dir = dataDir();
    // The shell execs into sleep after forking a child that dies at once: sleep never reaps it.
    const parent = spawn('sh', ['-c', 'sh -c "exit 0" & exec sleep 30'], { stdio: 'ignore' });
    try {
      let zombie: number | undefined;
      for (let i = 0; i < 100 && !zombie; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
        zombie = children.find((pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
      }
      expect(zombie).toBeDefined();
      ownerFile(dir, { pid: zombie!, start_time: procStartTime(zombie!) });
      const { lines, logger } = messages();
      const release = await lockDataDirectory(dir, { logger });
      expect(lines).toEqual([`DATA_DIR: removed a stale lock (its owner (pid ${zombie}) has exited)`]);
      await release();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('judges an owner it cannot check (another host) by its refreshes: stale after 20 s, refreshed means alive', async () => {
    const stale = dataDir();
    ownerFile(stale, { hostname: 'elsewhere', pid: 1 }, LOCK_STALE_AFTER_MS + 5_000);
    const { lines, logger } = messages();
    await (
      await lockDataDirectory(stale, { logger })
    )();
    expect(lines).toEqual([
      expect.stringMatching(
        /^DATA_DIR: removed a stale lock \(its owner \(pid 1 on elsewhere\) last refreshed it 2\d s ago\)$/,
      ),
    ]);

    const live = dataDir();
    ownerFile(live, { hostname: 'elsewhere', pid: 1 }, 1_000);
    const refresher = setInterval(() => utimesSync(join(live, '.lock'), new Date(), new Date()), 300);
    try {
      await expect(lockDataDirectory(live)).rejects.toThrow('(pid 1 on elsewhere');
    } finally {
      clearInterval(refresher);
    }
  });

  it('judges the lock directory of an older release (proper-lockfile) by its age', async () => {
    const dir = dataDir();
    mkdirSync(join(dir, '.lock'));
    const old = new Date(Date.now() - LOCK_STALE_AFTER_MS - 5_000);
    utimesSync(join(dir, '.lock'), old, old);
    const release = await lockDataDirectory(dir);
    expect(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).pid).toBe(process.pid);
    await release();
  });

  it('lets exactly one of several processes starting at once over a stale lock win', async () => {
    const dir = dataDir();
    ownerFile(dir, { pid: deadPid(), start_time: '1' });
    const script = `
      import { lockDataDirectory } from ${JSON.stringify(new URL('./embedded-lock.ts', import.meta.url).href)};
      try { await lockDataDirectory(process.argv[1]); process.stdout.write('won'); setTimeout(() => {}, 5000); }
      catch (err) { process.stdout.write(err.constructor.name); }
    `;
    const loader = new URL('../../test/e2e/queue/support/register-ts.mjs', import.meta.url).pathname;
    const runs = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--import', loader, '--input-type=module', '-e', script, dir], {
              stdio: ['ignore', 'pipe', 'inherit'],
            });
            let out = '';
            child.stdout.on('data', (chunk) => (out += chunk));
            child.once('exit', () => resolve(out));
          }),
      ),
    );
    expect(runs.filter((r) => r === 'won')).toHaveLength(1);
    expect(runs.filter((r) => r === 'DataDirLockedError')).toHaveLength(3);
  });
});
