/**
 * Unit specs live beside the code (*.spec.ts) and run once; end-to-end specs under test/
 * (*.e2e-spec.ts) run twice, once per database: `e2e-postgres` (a PostgreSQL database per file)
 * and `e2e-embedded` (the PGlite DATA_DIR and in-process queue `npm start` uses, one per file).
 * One `npm test` runs the three projects over the same two workers; `--selectProjects` picks.
 * See docs/testing.md.
 */
const tsJest = [
  'ts-jest',
  {
    useESM: true,
    tsconfig: '<rootDir>/tsconfig.test.json',
    diagnostics: { warnOnly: false },
    astTransformers: { before: ['<rootDir>/test/utils/swagger-transformer.cjs'] },
  },
];

const shared = {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  setupFiles: ['<rootDir>/test/utils/jest/worker-threads.cjs'],
};

const e2e = '.*\\.e2e-spec\\.ts$';

const projects = [
  { ...shared, displayName: { name: 'unit', color: 'white' }, testRegex: '.*\\.spec\\.ts$' },
  {
    ...shared,
    displayName: { name: 'e2e-postgres', color: 'blue' },
    testRegex: e2e,
    setupFiles: [...shared.setupFiles, '<rootDir>/test/utils/jest/postgres.cjs'],
    setupFilesAfterEnv: ['<rootDir>/test/utils/jest/e2e-cleanup.ts'],
  },
  {
    ...shared,
    displayName: { name: 'e2e-embedded', color: 'magenta' },
    testRegex: e2e,
    setupFiles: [...shared.setupFiles, '<rootDir>/test/utils/jest/embedded.cjs'],
    setupFilesAfterEnv: ['<rootDir>/test/utils/jest/e2e-cleanup.ts', '<rootDir>/test/utils/jest/embedded-watchdog.ts'],
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
