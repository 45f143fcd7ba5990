/**
 * Packs the SDK package (sdk/typescript) built, as `npm pack` makes it, into dist/sdk: the
 * tarball GET /sdk/versions/{version}/package.tgz serves. The service's `npm run build` runs it
 * after `nest build` (postbuild), so that the service never needs a compiler at run time; the
 * SDK tests call packSdk() themselves (ts-jest builds nothing).
 *
 * The package's sources are copied to a temporary folder whose node_modules is the
 * repository's (typescript and @types/node, the package's only devDependencies); there
 * `npm pack` runs the package's prepack script (`npm run build`: dist/esm, dist/cjs) and packs
 * what its `files` name.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SDK_DIR = join(root, 'sdk', 'typescript');
/** Where the service looks for the tarball (src/modules/sdk/sdk.service.ts). */
export const PACKAGE_DIR = join(root, 'dist', 'sdk');

/** What building and installing leave in a package folder: not copied. */
const NOT_SOURCES = new Set(['node_modules', 'dist']);

/**
 * Builds and packs the package in `from` (default sdk/typescript) into `to` (default
 * dist/sdk); answers the tarball's path. The tarball appears whole (written aside, then
 * renamed), so that two packs at once, or a request meanwhile, never see half of one.
 */
export async function packSdk({ from = SDK_DIR, to = PACKAGE_DIR } = {}) {
  const staging = mkdtempSync(join(tmpdir(), 'ews-sdk-pack-'));
  try {
    const work = join(staging, 'package');
    cpSync(from, work, { recursive: true, filter: (src) => !NOT_SOURCES.has(basename(src)) && !src.endsWith('.tgz') });
    symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'junction');
    const out = join(staging, 'out');
    mkdirSync(out);
    await promisify(execFile)('npm', ['pack', '--pack-destination', out, '--loglevel', 'error'], {
      cwd: work,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
      maxBuffer: 16 * 1024 * 1024,
    });
    const [filename] = readdirSync(out).filter((f) => f.endsWith('.tgz'));
    if (!filename) throw new Error(`npm pack left no tarball in ${out}`);
    mkdirSync(to, { recursive: true });
    const target = join(to, filename);
    const partial = `${target}.${process.pid}.${Date.now()}.partial`;
    copyFileSync(join(out, filename), partial);
    renameSync(partial, target);
    return target;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const target = await packSdk();
  console.log(`packed the SDK into ${target} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
