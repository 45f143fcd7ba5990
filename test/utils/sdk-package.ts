import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';
import ts from 'typescript';

/** Helpers of the SDK tests (test/e2e/sdk): bundles written out, consumer projects compiled and run. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const run = promisify(execFile);

export type Bundle = {
  kind: string;
  version: string;
  instructions: string;
  files: Array<{ path: string; content: string }>;
};

/** sdk/pack.mjs: builds and packs the package in `from` into `to` (default dist/sdk, where the service serves it from), as `npm run build` does. */
export async function packSdk(options: { from?: string; to?: string } = {}): Promise<string> {
  const { packSdk: pack } = (await import(pathToFileURL(join(repoRoot, 'sdk', 'pack.mjs')).href)) as {
    packSdk: typeof packSdk;
  };
  return pack(options);
}

/** A hash of the SDK's sources and of the script that packs them: equal hashes, equal packages. */
function sdkSourcesHash(): string {
  const hash = createHash('sha256').update(readFileSync(join(repoRoot, 'sdk', 'pack.mjs')));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (['node_modules', 'dist'].includes(entry.name) || entry.name.endsWith('.tgz')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(path.slice(repoRoot.length)).update(readFileSync(path));
    }
  };
  walk(join(repoRoot, 'sdk', 'typescript'));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The repository's SDK built and packed once per set of sources, whichever test file asks first:
 * the others (in any jest worker) wait for it under a lock and reuse the tarball, read-only. A
 * build takes 20 to 40 s; a fresh clone's suite asked for it three times.
 */
export async function builtSdkPackage(): Promise<string> {
  const dir = join(tmpdir(), 'ews-sdk-packages', sdkSourcesHash());
  mkdirSync(dir, { recursive: true });
  const release = await lockfile.lock(dir, {
    stale: 180_000,
    retries: { retries: 1_200, minTimeout: 100, maxTimeout: 250 },
  });
  try {
    const built = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    return built ? join(dir, built) : await packSdk({ to: dir });
  } finally {
    await release();
  }
}

/**
 * The tarball GET /sdk/versions/{version}/package.tgz serves exists, as after `npm run build`:
 * `npm test` runs on a clone that was never built, and suites that call every operation (the
 * fuzz suite) must not depend on the SDK test having packed it first.
 */
export async function ensureSdkPackage(): Promise<void> {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'sdk', 'typescript', 'package.json'), 'utf8')) as {
    version: string;
  };
  const target = join(repoRoot, 'dist', 'sdk', `ews-sdk-${version}.tgz`);
  if (existsSync(target)) return;
  const built = await builtSdkPackage();
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  copyFileSync(built, partial);
  renameSync(partial, target);
}

/** Writes each file of a downloaded bundle at its path in a new temporary folder. */
export function writeBundle(bundle: Bundle): string {
  const dir = mkdtempSync(join(tmpdir(), `ews-${bundle.kind}-`));
  for (const f of bundle.files) writeFiles(dir, { [f.path]: f.content });
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/**
 * A consumer project's node_modules: the package copied in as `npm install` would put it,
 * and (when asked) @types/node linked from the repository: no registry in tests.
 */
export function installInto(project: string, packageDir: string, { typesNode }: { typesNode: boolean }): void {
  cpSync(packageDir, join(project, 'node_modules', '@ews', 'sdk'), { recursive: true });
  if (typesNode) {
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
    symlinkSync(
      join(repoRoot, 'node_modules', '@types', 'node'),
      join(project, 'node_modules', '@types', 'node'),
      'junction',
    );
  }
}

/** Compiles a project by its tsconfig.json as `tsc -p` would; answers every diagnostic, one line each. */
export function compileProject(
  dir: string,
  overrides: ts.CompilerOptions = {},
): { diagnostics: string[]; options: ts.CompilerOptions } {
  const configPath = join(dir, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) return { diagnostics: [ts.flattenDiagnosticMessageText(error.messageText, '\n')], options: {} };
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dir, overrides, configPath);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
  });
  const emitted = parsed.options.noEmit ? [] : program.emit().diagnostics;
  const diagnostics = [...parsed.errors, ...ts.getPreEmitDiagnostics(program), ...emitted].map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${d.file.fileName.replace(dir, '.')}(${d.file.getLineAndCharacterOfPosition(d.start).line + 1}): `
        : '';
    return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  return { diagnostics, options: parsed.options };
}
