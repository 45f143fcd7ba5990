import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change to who may do what (tokens, API keys, users, memberships, workspaces) signals `ews_access_changed` (libs/auth/access-cache.ts) with
 * its transaction, whoever makes it: the service, another process, or an operator's SQL by hand.
 * Each process keeps sessions and memberships in memory and drops what a signal names. On the
 * embedded database nobody listens (one process, which drops what it changed itself); on
 * PostgreSQL every process does. The payloads are the AccessChange union.
 */
export class AccessChanges1766300000000 implements MigrationInterface {
  name = 'AccessChanges1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION ews_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE change json;
      BEGIN
        -- IF, not CASE: PL/pgSQL plans an expression on first use, and each table has its own columns.
        IF TG_TABLE_NAME = 'workspace_members' THEN
          change := json_build_object('member', json_build_object(
            'workspace', COALESCE(NEW.workspace_id, OLD.workspace_id), 'user', COALESCE(NEW.user_id, OLD.user_id)));
        ELSIF TG_TABLE_NAME = 'auth_tokens' THEN
          change := json_build_object('token', OLD.id);
        ELSIF TG_TABLE_NAME = 'api_keys' THEN
          change := json_build_object('key', OLD.prefix);
        ELSIF TG_TABLE_NAME = 'users' THEN
          change := json_build_object('user', OLD.id);
        ELSIF TG_TABLE_NAME = 'workspaces' THEN
          change := json_build_object('workspace', OLD.id);
        ELSE
          change := json_build_object('record', json_build_object('table', TG_TABLE_NAME, 'id', OLD.id));
        END IF;
        PERFORM pg_notify('ews_access_changed', change::text);
        RETURN NULL;
      END $$`);
    // Columns a session or a standing is made of; not last_login_at, which every login writes.
    await q.query(`CREATE TRIGGER auth_tokens_access_changed AFTER UPDATE OF revoked_at, expires_at, user_id OR DELETE
      ON auth_tokens FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    // Not last_used_at, which a key's use writes once a minute.
    await q.query(`CREATE TRIGGER api_keys_access_changed AFTER UPDATE OF revoked_at, expires_at, role, user_id, workspace_id OR DELETE
      ON api_keys FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER users_access_changed AFTER UPDATE OF status, system_role, email, display_name OR DELETE
      ON users FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER workspaces_access_changed AFTER DELETE
      ON workspaces FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER workspace_members_access_changed AFTER INSERT OR UPDATE OR DELETE
      ON workspace_members FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    // A record given another workspace (a project's move): the cache keeps a record's workspace.
    // Every table with a workspace gets the trigger; a later migration adding one adds it too
    // (test/e2e/auth/access-cache checks). It fires only when workspace_id is set and changes.
    for (const table of await movableTables(q))
      await q.query(`CREATE TRIGGER ${table}_access_moved AFTER UPDATE OF workspace_id ON ${table} FOR EACH ROW
        WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of await movableTables(q)) await q.query(`DROP TRIGGER ${table}_access_moved ON ${table}`);
    for (const table of ['auth_tokens', 'api_keys', 'users', 'workspaces', 'workspace_members'])
      await q.query(`DROP TRIGGER ${table}_access_changed ON ${table}`);
    await q.query('DROP FUNCTION ews_access_changed()');
  }
}

/** Tables of records in a workspace (an `id` and a `workspace_id`), but for those with a trigger of their own. */
export async function movableTables(q: {
  query(sql: string): Promise<Array<{ table_name: string }>>;
}): Promise<string[]> {
  const rows = await q.query(
    `SELECT t.table_name FROM information_schema.tables t
      WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
        AND t.table_name NOT IN ('workspace_members', 'api_keys')
        AND EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'workspace_id')
        AND EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'id')
      ORDER BY t.table_name`,
  );
  return rows.map((r) => r.table_name);
}
