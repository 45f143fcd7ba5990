import { afterAll, afterEach } from '@jest/globals';
import { assertResponsesMatchDocument } from '../response-violations.js';
import { closeLeftoverApps } from '../test-app.js';

// Every answer the app gave during a test must be one the OpenAPI document admits: the test that
// caused a violation fails with it; what hooks outside a test caused fails the file.
afterEach(assertResponsesMatchDocument);
afterAll(assertResponsesMatchDocument);

// After every e2e file: an app it left running (an afterAll that failed, a beforeAll that timed
// out while the app was booting) is closed here rather than kept alive in the jest worker.
afterAll(async () => {
  const closed = await closeLeftoverApps(20_000);
  if (closed) process.stderr.write(`\n[test-app] closed ${closed} app(s) the test file left running\n`);
}, 30_000);

// node-postgres warns (and pg 9 fails) when a client is given a query while another runs on it. The
// unit of work queues a transaction's queries (libs/database/unit-of-work.ts); a warning here means
// some path sent queries in parallel on one client, and the file fails.
const parallelQueries: string[] = [];
const onWarning = (warning: Error) => {
  if (/already executing a query/.test(warning.message)) parallelQueries.push(warning.stack ?? warning.message);
};
process.on('warning', onWarning);
afterAll(() => {
  process.off('warning', onWarning);
  if (parallelQueries.length)
    throw new Error(`queries ran in parallel on one database client:\n${parallelQueries.join('\n')}`);
});
