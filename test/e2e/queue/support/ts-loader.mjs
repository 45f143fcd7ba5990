// Lets a child process run the TypeScript sources directly (worker processes in the queue
// tests): `node --import ./register-ts.mjs script.ts`. Compiles each file on its own, as
// ts-jest's isolated mode would; `.js` specifiers resolve to the `.ts` file beside them, and the
// package's subpath imports (#libs/…, #src/…) to the sources rather than to dist/.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled output is cached by content, so later worker processes start faster.
const cacheDir = join(tmpdir(), 'ews-ts-loader-cache');
mkdirSync(cacheDir, { recursive: true });
let typescript;

async function transpile(source, fileName) {
  typescript ??= (await import('typescript')).default;
  const ts = typescript;
  const compilerOptions = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2023,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    inlineSourceMap: true,
  };
  return ts.transpileModule(source, { compilerOptions, fileName }).outputText;
}

/**
 * The package's subpath imports (`#libs/…`, `#src/…`: package.json "imports") from a TypeScript
 * source resolve to the sources, under the "types" condition the type checker follows, instead of
 * to the build in dist/ ("default", what Node picks). `.js` names the `.ts` file, as it does for
 * relative specifiers; a subpath with no source of that name falls back to the name as written.
 */
async function resolveSubpath(specifier, context, next) {
  const sources = { ...context, conditions: ['types', ...context.conditions] };
  const ts = specifier.replace(/\.js$/, '.ts');
  if (ts !== specifier) {
    try {
      return await next(ts, sources);
    } catch (err) {
      if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    }
  }
  return next(specifier, sources);
}

export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('#')) return resolveSubpath(specifier, context, next);
  if (
    context.parentURL?.endsWith('.ts') &&
    specifier.endsWith('.js') &&
    (specifier.startsWith('.') || specifier.startsWith('/'))
  ) {
    const url = new URL(specifier, context.parentURL);
    const tsUrl = new URL(url.href.replace(/\.js$/, '.ts'));
    if (!existsSync(fileURLToPath(url)) && existsSync(fileURLToPath(tsUrl)))
      return { url: tsUrl.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  const source = readFileSync(fileName, 'utf8');
  const cached = join(
    cacheDir,
    `${createHash('sha256').update(fileName).update('\0').update(source).digest('hex')}.js`,
  );
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  const output = await transpile(source, fileName);
  // Written aside then renamed: a process starting at the same time never reads half a file.
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, output);
  renameSync(partial, cached);
  return { format: 'module', source: output, shortCircuit: true };
}
