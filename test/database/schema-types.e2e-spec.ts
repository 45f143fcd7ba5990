import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSchemaTypes, SCHEMA_TYPES_FILE } from '../utils/schema-types.js';
import type { OpenedDatabase } from '#libs/database/data-source.factory.js';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../utils/database.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/**
 * libs/database/schema.ts is the schema as the typed queries see it (docs/architecture.md, "Typed
 * queries"): a migration that changes a table fails here until the file is regenerated
 * (`npm run schema-types`), so the repositories that read the changed column stop compiling.
 * Both databases must give the same text: the embedded one is the schema `npm start` runs on.
 */
describe('schema types', () => {
  let testDb: TestDatabase;
  let opened: OpenedDatabase;
  let generated: string;

  beforeAll(async () => {
    // A copy of the template migrated by every migration (test/utils/database.ts).
    testDb = await createTestDatabase();
    opened = await openTestDatabase(testDb, 2);
    generated = await generateSchemaTypes(opened.dataSource);
  });

  afterAll(async () => {
    await opened?.close();
    await testDb?.drop();
  });

  it(`matches the committed ${SCHEMA_TYPES_FILE} (UPDATE_SCHEMA_TYPES=1 or \`npm run schema-types\` rewrites it)`, () => {
    const file = join(root, SCHEMA_TYPES_FILE);
    if (process.env.UPDATE_SCHEMA_TYPES === '1') {
      writeFileSync(file, generated);
      return;
    }
    if (!existsSync(file)) throw new Error(`${SCHEMA_TYPES_FILE} is missing: run \`npm run schema-types\``);
    const committed = readFileSync(file, 'utf8');
    if (committed !== generated) {
      const was = new Set(committed.split('\n'));
      const now = new Set(generated.split('\n'));
      const lines = [
        ...[...now].filter((l) => !was.has(l)).map((l) => `  + ${l.trim()}`),
        ...[...was].filter((l) => !now.has(l)).map((l) => `  - ${l.trim()}`),
      ];
      throw new Error(
        `${SCHEMA_TYPES_FILE} no longer matches the migrated schema: run \`npm run schema-types\` and commit it\n${lines.join('\n')}`,
      );
    }
  });

  it('describes the tables the way node-postgres answers them (timestamptz as Date, int8 as string, jsonb as Json)', () => {
    // A change of kysely-codegen's defaults or of its options here would change what every typed row claims.
    expect(generated).toMatch(/export type Timestamp = ColumnType<Date, Date \| string, Date \| string>;/);
    expect(generated).toMatch(/export type Int8 = ColumnType<string, /);
    expect(generated).toMatch(/export interface Workspaces \{[^}]*\bcreated_at: Generated<Timestamp>;/s);
    expect(generated).not.toMatch(/\bschema_migrations\b/);
  });
});
