import { afterEach, jest } from '@jest/globals';
import { installEmbeddedWatchdog, takeEmbeddedDeadlocks } from '../embedded-watchdog.js';

// A hang costs seconds, not minutes: a query stuck behind the one connection fails after
// TEST_EMBEDDED_WAIT_MS (8 s). Tests and hooks keep the 120 s of the PostgreSQL project: the
// embedded database serialises every query (a file may raise it).
jest.setTimeout(Number(process.env.TEST_EMBEDDED_TIMEOUT_MS ?? 120_000));

// Before the test file loads, so the app's boot is watched too; a test during which a query
// waited for the one connection until the watchdog gave up fails with its report.
installEmbeddedWatchdog();

afterEach(() => {
  const reports = takeEmbeddedDeadlocks();
  if (reports.length) throw new Error(reports.join('\n\n'));
});
