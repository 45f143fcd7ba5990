/**
 * `npm start` builds only when the sources changed.
 *
 *   node scripts/build-if-stale.mjs           # runs `npm run build` unless dist/ was built from these sources
 *   node scripts/build-if-stale.mjs --check   # exits 0 when dist/ is current, 1 when a build is due (builds nothing)
 *   node scripts/build-if-stale.mjs --stamp   # writes dist/.build-stamp.json (the last step of `npm run build`)
 *
 * The stamp holds a SHA-256 over the content of every input of the build (the TypeScript under
 * src/ and libs/ that tsconfig.build.json compiles, the compiler and Nest configuration,
 * package.json and package-lock.json, whose dependencies the Swagger plugin reads, and the SDK
 * package that postbuild packs). Contents, not modification times: a checkout, a copy or a
 * `touch` changes times and not what gets built, and an edit reverted within a second changes
 * contents and not always times. Hashing the ~4 MB of inputs takes well under a second.
 *
 * A fresh clone has no dist/, hence no stamp: its first `npm start` builds (and packs the SDK).
 * A dist/ without src/ and libs/ beside it (the Docker image) runs as it is: there is nothing to build from.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const STAMP = join(root, 'dist', '.build-stamp.json');
/** What the build writes and start needs: without them the stamp alone proves nothing. */
const OUTPUTS = [join('dist', 'src', 'main.js'), join('dist', 'src', 'worker.js'), join('dist', 'sdk')];

const FILES = [
  'ormconfig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  join('sdk', 'pack.mjs'),
  join('scripts', 'build-if-stale.mjs'),
];
/** Folders walked, with the test of the files in them that the build reads. */
const TREES = [
  { dir: 'src', take: (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts') },
  { dir: 'libs', take: (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts') },
  { dir: join('sdk', 'typescript'), take: (name) => !name.endsWith('.tgz') },
];
/** Build products and installed packages inside those folders. */
const SKIP_DIRS = new Set(['node_modules', 'dist']);

function walk(dir, take, into) {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(path, take, into);
    } else if (entry.isFile() && take(entry.name)) into.push(path);
  }
}

/** The fingerprint of the build's inputs: their paths (with `/`) and contents, in a stable order. */
export function sourceFingerprint() {
  const paths = [...FILES.filter((f) => existsSync(join(root, f)))];
  for (const { dir, take } of TREES) walk(dir, take, paths);
  paths.sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(path.split(sep).join('/'));
    hash.update('\0');
    hash.update(
      createHash('sha256')
        .update(readFileSync(join(root, path)))
        .digest(),
    );
  }
  return { fingerprint: hash.digest('hex'), files: paths.length };
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Why dist/ must be rebuilt, or undefined when it is current. */
export function staleness() {
  const missing = OUTPUTS.find((p) => !existsSync(join(root, p)));
  if (missing) return `${missing} is missing`;
  // A build shipped without its sources (the Docker image holds dist/ and no src/) is what there is to run.
  if (!existsSync(join(root, 'src')) && !existsSync(join(root, 'libs'))) return undefined;
  const stamp = readStamp();
  if (!stamp?.fingerprint) return `${relative(root, STAMP)} is missing`;
  if (stamp.fingerprint !== sourceFingerprint().fingerprint)
    return `the sources changed since the build of ${stamp.built_at}`;
  return undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const mode = process.argv[2];
  if (mode === '--stamp') {
    const { fingerprint, files } = sourceFingerprint();
    writeFileSync(STAMP, `${JSON.stringify({ fingerprint, files, built_at: new Date().toISOString() }, null, 2)}\n`);
  } else {
    const reason = staleness();
    if (mode === '--check') {
      process.stderr.write(reason ? `build due: ${reason}\n` : 'dist/ is current\n');
      process.exit(reason ? 1 : 0);
    }
    if (!reason) {
      process.stderr.write(`dist/ is current (${relative(root, STAMP)}): no build\n`);
    } else {
      process.stderr.write(`building: ${reason}\n`);
      const npm = process.env.npm_execpath
        ? spawnSync(process.execPath, [process.env.npm_execpath, 'run', 'build'], { cwd: root, stdio: 'inherit' })
        : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
      if (npm.error) throw npm.error;
      if (npm.status !== 0) process.exit(npm.status ?? 1);
    }
  }
}
