import { readFileSync } from 'node:fs';
import { findPackageJSON } from 'node:module';

/**
 * The service's version: package.json's, read where the code runs (the sources or dist/ alike sit in
 * the repository's package). Read, not imported: a JSON import of package.json is emitted as
 * dist/package.json, a package of its own for everything under dist/, whose subpath imports
 * (`#libs/*`) would then resolve against dist/ (docs/decisions/0015-subpath-imports.md).
 */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(findPackageJSON(import.meta.url)!, 'utf8')) as { version: string }
).version;
