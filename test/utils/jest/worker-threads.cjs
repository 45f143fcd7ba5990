// Every jest project: a worker thread the application starts from its TypeScript sources
// (libs/common/thread-generator.ts) loads them through the loader hooks the child processes of
// the tests use (test/e2e/queue/support/ts-loader.mjs: each file transpiled on its own, cached).
const { pathToFileURL } = require('node:url');
const { join } = require('node:path');

process.env.WORKER_TYPESCRIPT_HOOKS = pathToFileURL(
  join(__dirname, '..', '..', 'e2e', 'queue', 'support', 'ts-loader.mjs'),
).href;
