#!/usr/bin/env node
// A registry that does not serve some platform-specific optional packages (darwin, win32,
// android, ... builds of msgpackr-extract and unrs-resolver) makes `npm install` write a
// package-lock.json without their entries, and `npm ci` then refuses it ("Missing: … from lock
// file"). This adds the missing entries, with os/cpu/libc so
// npm skips them on other platforms without fetching them (and fetches them by name and version
// from the public registry on the platforms that need them).
//   node .ci/complete-lockfile.mjs          rewrite package-lock.json
//   node .ci/complete-lockfile.mjs --check  exit 1 when entries are missing
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

/** What a platform package's name says about where it runs. */
function platformOf(name) {
  const os = [
    'darwin',
    'linux',
    'win32',
    'android',
    'freebsd',
    'openharmony',
    'sunos',
    'aix',
    'netbsd',
    'openbsd',
  ].find((o) => name.includes(`-${o}-`) || name.endsWith(`-${o}`));
  const cpu = ['arm64', 'x64', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'arm', 'wasm32'].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  const libc = /-(gnu|gnueabihf)$/.test(name) ? 'glibc' : /-musl(eabihf)?$/.test(name) ? 'musl' : undefined;
  return os && cpu ? { os, cpu, libc } : undefined;
}

/** Where npm would look for `dep` required by the package at `from` (nearest node_modules upwards). */
function resolves(from, dep) {
  let base = from;
  for (;;) {
    if (packages[base ? `${base}/node_modules/${dep}` : `node_modules/${dep}`]) return true;
    if (!base) return false;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut >= 0 ? base.slice(0, cut) : '';
  }
}

const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolves(path, dep)) continue;
    const platform = platformOf(dep);
    if (!platform)
      throw new Error(
        `${dep} (optional dependency of ${path || 'the project'}) is missing and names no platform; add it with npm`,
      );
    missing.push({
      key: `node_modules/${dep}`,
      entry: {
        version,
        ...(entry.dev ? { dev: true } : {}),
        cpu: [platform.cpu],
        optional: true,
        os: [platform.os],
        ...(platform.libc ? { libc: [platform.libc] } : {}),
      },
    });
  }
}

if (process.argv.includes('--check')) {
  if (missing.length) {
    process.stderr.write(
      `package-lock.json lacks ${missing.length} optional platform entries (${missing.map((m) => m.key.slice(13)).join(', ')}); run: node .ci/complete-lockfile.mjs\n`,
    );
    process.exit(1);
  }
  process.exit(0);
}

for (const { key, entry } of missing) packages[key] = entry;
const [root, ...rest] = Object.keys(packages);
lock.packages = Object.fromEntries([root, ...rest.sort()].map((key) => [key, packages[key]]));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`package-lock.json: added ${missing.length} optional platform entries\n`);
