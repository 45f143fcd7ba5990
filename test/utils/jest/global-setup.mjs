// Before any test file: the tests' build of the whole tree (test/utils/jest/test-build.mjs), which
// every worker's transform reads instead of compiling TypeScript itself.
import { buildTests } from './test-build.mjs';

export default async function globalSetup() {
  await buildTests();
}
