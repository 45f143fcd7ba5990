/**
 * Four tiers (docs/testing.md):
 * - `unit`: *.spec.ts beside the code, no database.
 * - `medium-postgres`, `medium-embedded`: test/medium/ (*.medium-spec.ts), a family's services
 *   and repositories on a real database of each kind, no HTTP; the rules of each operation.
 * - `e2e-postgres`: every *.e2e-spec.ts (HTTP contracts, access and error answers, journeys).
 * - `e2e-embedded`: the e2e files listed below, those about the embedded mode itself or that
 *   reach every operation, on the PGlite DATA_DIR and in-process queue `npm start` uses.
 * One `npm test` runs them all over the same two workers; TEST_PROJECTS picks.
 */
import { readFileSync } from 'node:fs';

/**
 * The package's subpath imports (package.json "imports", docs/decisions/0015-subpath-imports.md)
 * mapped to the TypeScript sources their "types" condition names: `#libs/database/db.js` →
 * <rootDir>/libs/database/db(.ts). Node's own choice, "default", is the build in dist/, which
 * the tests never load.
 */
const packageJson = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const subpathSources = Object.fromEntries(
  Object.entries(packageJson.imports ?? {}).map(([key, target]) => {
    if (!/^#[\w-]+\/\*$/.test(key) || !/^\.\/[\w-]+\/\*$/.test(target.types ?? ''))
      throw new Error(`package.json imports: ${key} is not "#name/*" with "types": "./folder/*"`);
    return [`^${key.slice(0, -1)}(.*)\\.js$`, `<rootDir>/${target.types.slice(2, -1)}$1`];
  }),
);

const shared = {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Each file's JavaScript from the tests' one build (test/utils/jest/test-build.mjs).
  transform: { '^.+\\.ts$': '<rootDir>/test/utils/jest/compiled-transform.cjs' },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', ...subpathSources },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  setupFiles: ['<rootDir>/test/utils/jest/worker-threads.cjs'],
};

/** Both databases, as the e2e and medium projects set them up. */
const on = {
  postgres: {
    setupFiles: [...shared.setupFiles, '<rootDir>/test/utils/jest/postgres.cjs'],
    setupFilesAfterEnv: ['<rootDir>/test/utils/jest/e2e-cleanup.ts'],
  },
  embedded: {
    setupFiles: [...shared.setupFiles, '<rootDir>/test/utils/jest/embedded.cjs'],
    setupFilesAfterEnv: ['<rootDir>/test/utils/jest/e2e-cleanup.ts', '<rootDir>/test/utils/jest/embedded-watchdog.ts'],
  },
};

/**
 * The e2e files that also run on the embedded database. Every service and repository runs on
 * both in the medium tier; these are what only a whole process or the HTTP surface shows there.
 */
const ALSO_EMBEDDED = [
  // A folder (ending in /) or one file, without .e2e-spec.ts.
  // The service as `npm start` runs it: a fresh DATA_DIR, signals, restarts, work aborted at exit.
  'test/smoke/',
  'test/faults/shutdown-abort',
  // The database layer itself: PGlite's one connection, the unit of work, typed queries, pools.
  'test/database/',
  // Every operation the OpenAPI document lists, with valid and hostile requests: no 5xx, only
  // documented answers, on the embedded database too.
  'test/security/fuzz',
  // The in-process queue is the embedded mode's; the embedded upload and its bulk writes differ.
  'test/e2e/queue/in-process',
  'test/e2e/datasets/bulk-writes',
  'test/e2e/datasets/distinct-counts',
  'test/e2e/datasets/upload',
  // Blocks of their own on the embedded database (describeOn / itOn).
  'test/e2e/users/users-rules',
  'test/security/secrets-at-rest',
  // A run end to end, streamed, on the embedded connection shared with the requests.
  'test/e2e/runs/event-stream',
  // Idempotent feedback: parallel posts of one client key meet the unique index on each database.
  'test/e2e/traces/feedback',
  // Trace scores: the aggregate's date_bin and the published trace_score_of() inlined on each database.
  'test/e2e/traces/scores',
  // A 20,000-span trace landed, read back by parent and by depth (a recursive walk by LATERAL
  // lookups), enriched: the plans and the memory on the embedded database too.
  'test/e2e/traces/large-trace',
  // OpenInference's and OpenLLMetry's spans from an agent process, landed live on the one connection.
  'test/e2e/traces/instrumentations',
  // Judge validations read a run's items and record through another family's service, then
  // the run, results and gate read them: every query on the embedded connection too.
  'test/e2e/runs/judge-validity',
  // Review leases: one connection serialises them; the parallel items:next run there too.
  'test/e2e/review/',
  // Online evaluation: follow jobs, claims under SKIP LOCKED and scores on the one embedded connection.
  'test/e2e/online/',
  // Agents: runs joined to the SUT's exported trace (a bounded wait polling what landed), recorded traces as runs.
  'test/e2e/agents/',
  // Rate limits: the in-process counters of the embedded mode (the Redis-shared block is PostgreSQL's).
  'test/e2e/auth/rate-limits',
  // The MCP server: its tools' calls to the API over the loopback, on the embedded database's one connection too.
  'test/e2e/mcp/',
  // The audit log: its filters, cursor pages, streamed exports and the retention sweep on the one embedded connection.
  'test/e2e/audit-log/',
  // OTLP log records joined to their spans: the log inbox, row revisions and landing on the one embedded connection.
  'test/e2e/traces/otlp-logs',
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const projects = [
  { ...shared, displayName: { name: 'unit', color: 'white' }, testRegex: '.*\\.spec\\.ts$' },
  {
    ...shared,
    ...on.postgres,
    displayName: { name: 'medium-postgres', color: 'cyan' },
    testRegex: 'test/medium/.*\\.medium-spec\\.ts$',
  },
  {
    ...shared,
    ...on.embedded,
    displayName: { name: 'medium-embedded', color: 'yellow' },
    testRegex: 'test/medium/.*\\.medium-spec\\.ts$',
  },
  { ...shared, ...on.postgres, displayName: { name: 'e2e-postgres', color: 'blue' }, testRegex: '.*\\.e2e-spec\\.ts$' },
  {
    ...shared,
    ...on.embedded,
    displayName: { name: 'e2e-embedded', color: 'magenta' },
    testRegex: ALSO_EMBEDDED.map((path) => `${escape(path)}${path.endsWith('/') ? '.*' : ''}\\.e2e-spec\\.ts$`),
  },
];

// TEST_PROJECTS=e2e-embedded (comma-separated names) keeps only those projects: what the npm
// scripts test:unit, test:e2e, test:postgres and test:embedded set, so that paths and flags can
// follow them (`--selectProjects name path` would take the path for a project name).
const selected = process.env.TEST_PROJECTS?.split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const unknown = selected?.filter((name) => !projects.some((p) => p.displayName.name === name)) ?? [];
if (unknown.length)
  throw new Error(
    `TEST_PROJECTS: no project named ${unknown.join(', ')} (projects: ${projects.map((p) => p.displayName.name).join(', ')})`,
  );

export default {
  maxWorkers: 2,
  globalSetup: '<rootDir>/test/utils/jest/global-setup.mjs',
  // Each e2e file loads the whole application into the worker's module registry, and under ESM
  // jest keeps part of it: a worker grew to 4.5 GB after 50 files and every file after ran
  // slower (GC). A worker over this limit after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1536MB',
  // Jest takes the test timeout from the global configuration only; e2e-embedded lowers it
  // in its setup file (test/utils/jest/embedded-watchdog.ts).
  testTimeout: 120000,
  // Every project's files share the two workers, longest first (jest's cache of past durations).
  projects: selected ? projects.filter((p) => selected.includes(p.displayName.name)) : projects,
};
