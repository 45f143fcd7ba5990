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
 * Each as `<file> names <table> (<owner>)`, once per file and table.
 */
export function foreignTablesInSql(files: SourceFile[], owners: Map<string, string>): string[] {
  const found = new Set<string>();
  for (const f of files) {
    const family = familyOf(f.path);
    if (!family) continue;
    const code = f.text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const m of code.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING|EXISTS)\s+"?([a-z_][a-z0-9_]*)"?/gi)) {
      const owner = owners.get(m[1]);
      if (owner && owner !== family) found.add(`${f.path} names ${m[1]} (${owner})`);
    }
  }
  return [...found].sort();
}
