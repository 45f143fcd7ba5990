import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The users family publishes who a user is (docs/architecture.md#what-families-offer-each-other),
 * so the API key check finds a key, its creator and the creator's standing in its one statement
 * (every API-key request runs it) without naming the users table. Inlined like every published
 * function: the join is the one on users' primary key it was.
 */
export class UserIdentities1766100001000 implements MigrationInterface {
  name = 'UserIdentities1766100001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION user_identities()
      RETURNS TABLE (id uuid, email text, display_name text, system_role text, active boolean)
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT u.id, u.email, u.display_name, u.system_role, u.status = 'active' FROM users u
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION user_identities()');
  }
}
