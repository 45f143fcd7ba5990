// Jest's transform for TypeScript: the file's JavaScript from the tests' build
// (test/utils/jest/test-build.mjs, compiled once before the run by the global setup), with its
// source map. Nothing is compiled here, so a worker starts without a TypeScript program of its own.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..', '..', '..');
const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'ews-test-build');

function compiledPath(sourcePath) {
  return join(OUT_DIR, relative(ROOT, sourcePath)).replace(/\.ts$/, '.js');
}

function read(sourcePath) {
  const path = compiledPath(sourcePath);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    throw new Error(
      `${relative(ROOT, sourcePath)} is not in the tests' build (${relative(ROOT, path)} is missing): ` +
        'tsconfig.json includes what the tests load, and the global setup builds it',
    );
  }
}

module.exports = {
  getCacheKey(sourceText, sourcePath) {
    // The output, not the source: the swagger plugin's output of a file depends on types elsewhere.
    return createHash('sha256').update(sourcePath).update('\0').update(read(sourcePath)).digest('hex');
  },
  process(sourceText, sourcePath) {
    const code = read(sourcePath).replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
    const map = JSON.parse(readFileSync(`${compiledPath(sourcePath)}.map`, 'utf8'));
    map.sources = [sourcePath];
    map.sourcesContent = [sourceText];
    return { code, map };
  },
};
