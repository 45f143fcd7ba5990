/**
 * The tests' build: the whole tree (tsconfig.json: src, libs, test, bench, sdk) compiled once by
 * the TypeScript compiler, with the Nest swagger plugin as `nest build` runs it, into
 * node_modules/.cache/ews-test-build. Jest then loads each file's compiled JavaScript
 * (test/utils/jest/compiled-transform.cjs) instead of compiling it again in every worker.
 *
 * Incremental: the compiler's build info sits beside the output, so a run after an edit compiles
 * what the edit affects. A type error anywhere fails the run before any test starts, with every
 * diagnostic printed (what each worker's type check used to report file by file).
 *
 *   node test/utils/jest/test-build.mjs    # the same build, outside jest
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import lockfile from 'proper-lockfile';
import ts from 'typescript';

const require = createRequire(import.meta.url);
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'ews-test-build');

/** The swagger plugin's options, as nest-cli.json gives them to `nest build`. */
function swaggerPluginOptions() {
  const nest = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8'));
  return nest.compilerOptions.plugins.find((plugin) => plugin.name === '@nestjs/swagger').options;
}

function parseConfig() {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), undefined, host);
  return {
    rootNames: parsed.fileNames,
    configFileParsingDiagnostics: parsed.errors,
    options: {
      ...parsed.options,
      outDir: OUT_DIR,
      rootDir: ROOT,
      sourceMap: true,
      inlineSourceMap: false,
      incremental: true,
      tsBuildInfoFile: join(OUT_DIR, '.tsbuildinfo'),
      noEmitOnError: false,
    },
  };
}

/**
 * The build's inputs (every file of the program's configuration, the compiler's options, the
 * compiler and plugin versions, package.json with its subpath imports): when they match the last
 * good build's, there is nothing to do and the compiler is not even started (~0.3 s instead of
 * ~6 s of reading the program).
 */
function fingerprint(config) {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(config.options)).update(ts.version);
  // package.json's "imports" (#libs/*, #src/*) decide what the subpath specifiers resolve to.
  for (const file of ['package.json', 'package-lock.json', 'nest-cli.json'])
    hash.update(readFileSync(join(ROOT, file)));
  for (const file of [...config.rootNames].sort()) hash.update(file).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

function fail(diagnostics) {
  const text = ts.formatDiagnosticsWithColorAndContext(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  });
  const error = new Error(`the tests' build found ${diagnostics.length} TypeScript error(s):\n${text}`);
  error.stack = error.message;
  throw error;
}

function readIfThere(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Compiles what changed since the last build; throws with the diagnostics on a type error. */
export async function buildTests() {
  mkdirSync(OUT_DIR, { recursive: true });
  // Two runs started together (two terminals) would write the same files: one builds, the other waits.
  const release = await lockfile.lock(OUT_DIR, {
    lockfilePath: join(OUT_DIR, '.lock'),
    retries: { retries: 600, minTimeout: 200, maxTimeout: 500 },
    stale: 120_000,
  });
  try {
    const started = performance.now();
    const config = parseConfig();
    const stamp = join(OUT_DIR, '.inputs');
    const inputs = fingerprint(config);
    if (readIfThere(stamp) === inputs) return;
    const program = ts.createIncrementalProgram(config);
    const diagnostics = [
      ...program.getConfigFileParsingDiagnostics(),
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(),
      ...program.getSemanticDiagnostics(),
    ];
    const swagger = require('@nestjs/swagger/plugin');
    const emitted = program.emit(undefined, undefined, undefined, false, {
      before: [swagger.before(swaggerPluginOptions(), program.getProgram())],
    });
    diagnostics.push(...emitted.diagnostics);
    if (diagnostics.length) fail(diagnostics);
    writeFileSync(stamp, inputs);
    if (process.env.TEST_TIMINGS) process.stderr.write(`[test-build] ${Math.round(performance.now() - started)} ms\n`);
  } finally {
    await release();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildTests();
