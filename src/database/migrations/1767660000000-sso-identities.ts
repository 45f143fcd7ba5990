import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users signed in through OpenID Connect keep the issuer and subject (`sub`) that identify them
 * there: the e-mail at the provider may change, the subject does not. One user per identity.
 */
export class SsoIdentities1767660000000 implements MigrationInterface {
  name = 'SsoIdentities1767660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN sso_issuer text, ADD COLUMN sso_subject text`);
    await q.query(
      `ALTER TABLE users ADD CONSTRAINT users_sso_identity_complete CHECK ((sso_issuer IS NULL) = (sso_subject IS NULL))`,
    );
    await q.query(
      `CREATE UNIQUE INDEX users_sso_identity_idx ON users (sso_issuer, sso_subject) WHERE sso_subject IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX users_sso_identity_idx');
    await q.query('ALTER TABLE users DROP CONSTRAINT users_sso_identity_complete');
    await q.query('ALTER TABLE users DROP COLUMN sso_subject, DROP COLUMN sso_issuer');
  }
}
