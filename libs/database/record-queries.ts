import type { Db } from './unit-of-work.js';

/** A plain identifier PostgreSQL keeps whole (at most 63 bytes). */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** `name` when it is a plain lower-case SQL identifier (the `what` this code names); throws otherwise. */
export function identifier(name: string, what = 'table or column'): string {
  if (!IDENTIFIER.test(name)) throw new Error(`"${name}" is not a ${what} name`);
  return name;
}

/** Where a name must be unique: a column and its value (a workspace, a SUT, a dataset version). */
export interface NameScope {
  column: string;
  value: string;
}

/**
 * Whether `name` is used in `table` within `scope`, compared case-insensitively as every family's
 * names are, by a record other than `exceptId` (the one being renamed). The family's repository
 * calls it with its own table; the unique index on `lower(name)` backs it up against races.
 */
export async function nameTaken(
  db: Db,
  table: string,
  scope: NameScope,
  name: string,
  exceptId?: string | null,
): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `SELECT 1 FROM ${identifier(table)} WHERE ${identifier(scope.column)} = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3 LIMIT 1`,
    [scope.value, name, exceptId ?? null],
  );
  return rows.length > 0;
}

/** The workspace of a record kept in `table` (its key `id`, its workspace `workspace_id`); null when there is none. */
export async function workspaceOfRecord(db: Db, table: string, id: string): Promise<string | null> {
  const rows: Array<{ workspace_id: string }> = await db.query(
    `SELECT workspace_id FROM ${identifier(table)} WHERE id = $1`,
    [id],
  );
  return rows[0]?.workspace_id ?? null;
}
