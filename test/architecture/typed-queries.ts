import type { SourceFile } from './import-graph.js';

/**
 * A statement written as SQL text, whose row type nothing checks: through Db (`db.query(`,
 * `db.prepared(`) or any other way to hand SQL to the driver (a TypeORM repository's or manager's
 * `.query(`, a query runner's), or built by TypeORM's query builder, whose predicates, sorts and
 * joins are strings (`.where('s.workspace_id = :id')`): each `createQueryBuilder(` counts. So does
 * Kysely's `sql.raw(`: a string that a typed statement takes as SQL, unchecked and unbound. And so
 * does a TypeORM repository's list or count (TYPEORM_LIST).
 */
const HAND_WRITTEN = /\.(?:query|prepared|createQueryBuilder)\s*[<(]|\bsql\.raw\s*\(/g;

/**
 * A TypeORM repository's list or count: `find({ where, order })`, `findBy`, `findAndCount`,
 * `count()`… TypeORM stays for a record by its key (findOne, save, insert, update and delete by
 * key); what selects by anything else, sorts or counts is a typed query (`entityList`,
 * `entityPage`, `countOf` in libs/database/typed-fragments.ts).
 */
const TYPEORM_LIST =
  /\.(?:find|findBy|findAndCount|findAndCountBy|countBy|count|sum|average|minimum|maximum)\(\s*[{)]/g;

/** The families' repositories: the files `untypedStatements` checks unless told others. */
export const FAMILY_REPOSITORIES = /^src\/modules\/.*\.repository\.ts$/;

/** The libraries that read and write tables of their own (sessions, access, the job queue, the audit trail). */
export const TABLE_LIBRARIES = /^libs\/(auth|queue|audit)\/.*\.ts$/;

/**
 * Repositories that answer rows typed from the schema (libs/database/schema.ts): every file of
 * `scope` (the families' repositories unless told) except the `untyped` ones, the work left. Each
 * may keep the hand-written statements `kept` counts for it (hot paths, calls of functions another
 * family publishes); one more fails, as does an untyped file with no hand-written statement left
 * (take it off the list). Each problem as a line.
 */
export function untypedStatements(
  files: SourceFile[],
  untyped: string[],
  kept: Record<string, number>,
  scope: RegExp = FAMILY_REPOSITORIES,
): string[] {
  const problems: string[] = [];
  for (const f of files) {
    if (!scope.test(f.path) || f.path.endsWith('.spec.ts')) continue;
    const count = (f.text.match(HAND_WRITTEN)?.length ?? 0) + (f.text.match(TYPEORM_LIST)?.length ?? 0);
    if (untyped.includes(f.path)) {
      if (count === 0) problems.push(`${f.path} has no hand-written statement left: take it off the untyped list`);
      continue;
    }
    const allowed = kept[f.path] ?? 0;
    if (count > allowed) problems.push(`${f.path} has ${count} hand-written statements, ${allowed} kept: use db.typed`);
    if (count < allowed) problems.push(`${f.path} has ${count} hand-written statements: lower its count to ${count}`);
  }
  return problems.sort();
}
