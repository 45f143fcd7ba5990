import { familyOf, type SourceFile } from './import-graph.js';

/**
 * Table → family: the tables of each family's entities (`@Entity('name')` under
 * src/modules/<family>/entities/), then the tables only migrations create, named with their owner.
 */
export function tableOwners(files: SourceFile[], withoutEntity: Record<string, string>): Map<string, string> {
  const owners = new Map<string, string>();
  for (const f of files) {
    const family = familyOf(f.path);
    if (!family || !f.path.includes('/entities/')) continue;
    for (const m of f.text.matchAll(/@Entity\(\s*'([a-z_][a-z0-9_]*)'/g)) owners.set(m[1], family);
  }
  for (const [table, family] of Object.entries(withoutEntity)) if (!owners.has(table)) owners.set(table, family);
  return owners;
}

/** The tables the migrations create (`CREATE TABLE [IF NOT EXISTS] name`). */
export function createdTables(files: SourceFile[]): string[] {
  const names = files
    .filter((f) => f.path.startsWith('src/database/migrations/'))
    .flatMap((f) => [...f.text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_][a-z0-9_]*)"?/gi)].map((m) => m[1]));
  return [...new Set(names)].sort();
}

/**
 * Where a family's file names, in SQL, a table another family owns: `FROM`, `JOIN`, `INTO`,
 * `UPDATE`, `TABLE`, `USING` or `EXISTS` followed by the table's name, comments left out.
 * Each as `<file> names <table> (<owner>)`, once per file and table. Calling a function another
 * family publishes (`FROM dataset_version_rows($1, $2) r`) names none of its tables.
 */
export function foreignTablesInSql(files: SourceFile[], owners: Map<string, string>): string[] {
  const found = new Set<string>();
  for (const f of files) {
    const family = familyOf(f.path);
    if (!family) continue;
    const code = f.text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const table of tablesNamed(code)) {
      const owner = owners.get(table);
      if (owner && owner !== family) found.add(`${f.path} names ${table} (${owner})`);
    }
  }
  return [...found].sort();
}

/**
 * The names after `FROM`, `JOIN`, `INTO`, `UPDATE`, `TABLE`, `USING` or `EXISTS` in SQL text, and
 * the tables a typed statement starts from or joins (`selectFrom('runs as r')`, `innerJoin('runs', …)`).
 */
function tablesNamed(sql: string): string[] {
  const text = [...sql.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING|EXISTS)\s+"?([a-z_][a-z0-9_]*)"?/gi)];
  const typed = [
    ...sql.matchAll(
      /\b(?:selectFrom|insertInto|updateTable|deleteFrom|mergeInto|(?:inner|left|right|full|cross)Join(?:Lateral)?)\(\s*'([a-z_][a-z0-9_]*)(?:\s+as\s+\w+)?'/g,
    ),
  ];
  return [...text, ...typed].map((m) => m[1]);
}

/** A function the migrations create: its name, whether it is a trigger's, and its body (between `$$`). */
export interface CreatedFunction {
  name: string;
  trigger: boolean;
  body: string;
}

export function createdFunctions(files: SourceFile[]): CreatedFunction[] {
  return files
    .filter((f) => f.path.startsWith('src/database/migrations/'))
    .flatMap((f) =>
      [
        ...f.text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION\s+"?([a-z_][a-z0-9_]*)"?([\s\S]*?)\$\$([\s\S]*?)\$\$/gi),
      ].map((m) => ({ name: m[1], trigger: /\bRETURNS\s+trigger\b/i.test(m[2]), body: m[3] })),
    );
}

/**
 * The functions a family publishes to the others (`published`: function → family): each must be
 * created by a migration, and its body may name only its family's tables. A function the
 * migrations create that is neither published nor a trigger's has no owner. Each problem as a line.
 */
export function publishedFunctionProblems(
  files: SourceFile[],
  published: Record<string, string>,
  owners: Map<string, string>,
): string[] {
  const created = createdFunctions(files);
  const problems: string[] = [];
  for (const [name, family] of Object.entries(published)) {
    const fn = created.find((c) => c.name === name);
    if (!fn) {
      problems.push(`${name} (${family}) is created by no migration`);
      continue;
    }
    for (const table of new Set(tablesNamed(fn.body))) {
      const owner = owners.get(table);
      if (owner && owner !== family) problems.push(`${name} (${family}) names ${table} (${owner})`);
    }
  }
  for (const fn of created)
    if (!fn.trigger && !(fn.name in published)) problems.push(`${fn.name} is published by no family`);
  return problems.sort();
}
