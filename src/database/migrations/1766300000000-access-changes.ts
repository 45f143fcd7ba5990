import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change to who may do what signals `ews_access_changed` (libs/auth/access-cache.ts) with
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
        -- IF, not CASE: PL/pgSQL plans an expression on first use, and OLD.id exists on three tables only.
        IF TG_TABLE_NAME = 'workspace_members' THEN
          change := json_build_object('member', json_build_object(
            'workspace', COALESCE(NEW.workspace_id, OLD.workspace_id), 'user', COALESCE(NEW.user_id, OLD.user_id)));
        ELSIF TG_TABLE_NAME = 'auth_tokens' THEN
          change := json_build_object('token', OLD.id);
        ELSIF TG_TABLE_NAME = 'users' THEN
          change := json_build_object('user', OLD.id);
        ELSE
          change := json_build_object('workspace', OLD.id);
        END IF;
        PERFORM pg_notify('ews_access_changed', change::text);
        RETURN NULL;
      END $$`);
    // Columns a session or a standing is made of; not last_login_at, which every login writes.
    await q.query(`CREATE TRIGGER auth_tokens_access_changed AFTER UPDATE OF revoked_at, expires_at, user_id OR DELETE
      ON auth_tokens FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER users_access_changed AFTER UPDATE OF status, system_role, email, display_name OR DELETE
      ON users FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER workspaces_access_changed AFTER DELETE
      ON workspaces FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
    await q.query(`CREATE TRIGGER workspace_members_access_changed AFTER INSERT OR UPDATE OR DELETE
      ON workspace_members FOR EACH ROW EXECUTE FUNCTION ews_access_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['auth_tokens', 'users', 'workspaces', 'workspace_members'])
      await q.query(`DROP TRIGGER ${table}_access_changed ON ${table}`);
    await q.query('DROP FUNCTION ews_access_changed()');
  }
}
