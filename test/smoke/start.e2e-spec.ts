import { afterAll, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describeOn } from '../utils/database-mode.js';
import { killIfRunning, type ServiceProcess, spawnNpmStart, untilReady } from './support/service-process.js';

/**
 * `npm start` builds only when the sources changed (scripts/build-if-stale.mjs): on a copy of the
 * checkout without dist/ (a fresh clone after `npm ci`), the first start builds and packs the
 * SDK, the second finds the stamp current and starts from dist/ as it is; a change of content
 * makes a build due again, a change of modification time alone does not.
 */
jest.setTimeout(900_000);

/** `nest build` and the SDK pack take 40 s on an idle 2-core machine, several times that when it is shared. */
const BUILD_AND_BOOT_MS = 600_000;

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** What a clone holds that the build and the service read (tests, docs and benchmarks are not built). */
const CHECKOUT = [
  'src',
  'libs',
  'sdk',
  'scripts',
  'examples',
  'ormconfig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
];

function copyOfCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ews-start-'));
  for (const entry of CHECKOUT) {
    cpSync(join(repo, entry), join(dir, entry), {
      recursive: true,
      filter: (src) => !['node_modules', 'dist'].includes(basename(src)) && !src.endsWith('.tgz'),
    });
  }
  // What `npm ci` installs: the same packages, without installing them again.
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'junction');
  return dir;
}

/** `node scripts/build-if-stale.mjs --check` in `dir`: its exit code and what it said. */
async function check(dir: string): Promise<{ code: number; said: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, ['scripts/build-if-stale.mjs', '--check'], {
      cwd: dir,
    });
    return { code: 0, said: stderr.trim() };
  } catch (err) {
    return { code: (err as { code: number }).code, said: String((err as { stderr: string }).stderr).trim() };
  }
}

describeOn('embedded', 'builds and starts a copy of the checkout; once is enough')(
  'npm start: builds only when the sources changed',
  () => {
    const dir = copyOfCheckout();
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-start-data-'));
    const env = { DATA_DIR: dataDir, ADMIN_EMAIL: 'start@example.com', ADMIN_PASSWORD: 'start-password-1' };
    const stampPath = join(dir, 'dist', '.build-stamp.json');
    const children: ServiceProcess[] = [];

    afterAll(() => {
      for (const child of children) killIfRunning(child);
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** One `npm start` until /ready answers, `meanwhile`, then SIGTERM to it and the service; answers what it wrote. */
    async function startAndStop(meanwhile?: (url: string) => Promise<void>): Promise<string> {
      const service = spawnNpmStart(dir, env);
      children.push(service);
      const running = await untilReady(service, BUILD_AND_BOOT_MS);
      await meanwhile?.(running.url);
      service.signal('SIGTERM');
      await service.exited;
      // npm dies of the signal; the service under it stops in order.
      expect(service.logs()).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'stopped' })]));
      return service.output();
    }

    /**
     * An upload of 1.2 MB, over UPLOAD_THREAD_MIN_BYTES: parsed by the built worker thread
     * (dist/…/upload-worker.js), which jest's own runs of the sources never load.
     */
    async function uploadThroughThread(url: string): Promise<void> {
      const json = (res: Response) => res.json() as Promise<Record<string, never>>;
      const post = (path: string, body: unknown, token?: string) =>
        fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        });
      const { access_token: token } = await json(
        await post('/auth/token', { email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD }),
      );
      const { id: workspace } = await json(await post('/workspaces', { name: `start-${Date.now()}` }, token));
      const rows = Array.from({ length: 30_000 }, (_, i) => `${i},"question number ${i}, in full",${i % 7}`);
      const csv = `id,question,n\n${rows.join('\n')}\n`;
      expect(csv.length).toBeGreaterThan(1024 * 1024);
      const form = new FormData();
      form.append('file', new Blob([csv]), 'big.csv');
      const res = await fetch(`${url}/datasets/upload?workspace_id=${workspace}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      const body = await json(res);
      expect(res.status).toBe(201);
      expect(body.latest_version).toMatchObject({ row_count: 30_000, columns: ['id', 'question', 'n'] });
    }

    it('a fresh clone: no dist/, a build is due; the first npm start builds, packs the SDK, writes the stamp and serves', async () => {
      expect(existsSync(join(dir, 'dist'))).toBe(false);
      expect(await check(dir)).toEqual({ code: 1, said: 'build due: dist/src/main.js is missing' });

      const output = await startAndStop();
      expect(output).toContain('building: dist/src/main.js is missing');
      expect(output).toContain('> nest build');
      expect(output).toMatch(/packed the SDK into .*ews-sdk-[\d.]+\.tgz/);
      const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
      expect(stamp).toEqual({
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        files: expect.any(Number),
        built_at: expect.any(String),
      });
      expect(await check(dir)).toEqual({ code: 0, said: 'dist/ is current' });
    });

    it('the second npm start builds nothing: the stamp and every built file are left as they were; it serves from them (an upload through the built thread)', async () => {
      const stampBefore = readFileSync(stampPath, 'utf8');
      const mainBefore = statSync(join(dir, 'dist', 'src', 'main.js')).mtimeMs;

      const output = await startAndStop(uploadThroughThread);
      expect(output).toContain('dist/ is current (dist/.build-stamp.json): no build');
      expect(output).not.toContain('> nest build');
      expect(output).not.toContain('packed the SDK');
      expect(readFileSync(stampPath, 'utf8')).toBe(stampBefore);
      expect(statSync(join(dir, 'dist', 'src', 'main.js')).mtimeMs).toBe(mainBefore);
    });

    it('a new modification time alone leaves dist/ current; a change of content (source, SDK, dependencies) makes a build due', async () => {
      const main = join(dir, 'src', 'main.ts');
      const later = new Date(Date.now() + 60_000);
      utimesSync(main, later, later);
      expect(await check(dir)).toEqual({ code: 0, said: 'dist/ is current' });

      for (const file of [main, join(dir, 'sdk', 'typescript', 'package.json'), join(dir, 'package-lock.json')]) {
        const original = readFileSync(file);
        writeFileSync(file, Buffer.concat([original, Buffer.from('\n')]));
        expect(await check(dir)).toEqual({
          code: 1,
          said: expect.stringMatching(/^build due: the sources changed since the build of \d{4}-/),
        });
        writeFileSync(file, original);
        expect(await check(dir)).toEqual({ code: 0, said: 'dist/ is current' });
      }
      // A spec beside the sources is not built: it leaves dist/ current.
      writeFileSync(join(dir, 'src', 'extra.spec.ts'), 'export {};\n');
      expect(await check(dir)).toEqual({ code: 0, said: 'dist/ is current' });
    });

    it('a build that left dist/ without its stamp (interrupted, or `nest build` alone) is done again', async () => {
      rmSync(stampPath);
      expect(await check(dir)).toEqual({ code: 1, said: 'build due: dist/.build-stamp.json is missing' });
    });
  },
);
