import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identity, tenancy, settings, audit trail and durable jobs: the tables every family builds on. */
export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');

    await q.query(`CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      email text NOT NULL,
      display_name text NOT NULL,
      password_hash text,
      system_role text NOT NULL DEFAULT 'user' CHECK (system_role IN ('admin', 'user')),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
      last_login_at timestamptz,
      deactivated_at timestamptz,
      password_changed_at timestamptz,
      version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE UNIQUE INDEX users_email_key ON users (lower(email))');

    await q.query(`CREATE TABLE auth_tokens (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      issued_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoked_reason text,
      user_agent text,
      ip text
    )`);
    await q.query('CREATE INDEX auth_tokens_user_idx ON auth_tokens (user_id) WHERE revoked_at IS NULL');

    await q.query(`CREATE TABLE login_throttle (
      key text PRIMARY KEY,
      failures integer NOT NULL DEFAULT 0,
      window_started_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz
    )`);

    await q.query(`CREATE TABLE password_reset_tokens (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id)');

    await q.query(`CREATE TABLE workspaces (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      embedding_config jsonb NOT NULL DEFAULT '{"provider":"local"}'::jsonb,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);

    await q.query(`CREATE TABLE workspace_members (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
      added_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, user_id)
    )`);
    await q.query('CREATE INDEX workspace_members_user_idx ON workspace_members (user_id)');

    await q.query(`CREATE TABLE workspace_invitations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
      token_hash text NOT NULL UNIQUE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
      expires_at timestamptz NOT NULL,
      invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
      accepted_by uuid REFERENCES users(id) ON DELETE SET NULL,
      accepted_at timestamptz,
      revoked_at timestamptz,
      sent_count integer NOT NULL DEFAULT 1,
      last_sent_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(
      'CREATE INDEX workspace_invitations_workspace_idx ON workspace_invitations (workspace_id, created_at)',
    );
    await q.query(
      `CREATE UNIQUE INDEX workspace_invitations_pending_key ON workspace_invitations (workspace_id, lower(email)) WHERE status = 'pending'`,
    );

    await q.query(`CREATE TABLE workspace_secrets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      ciphertext bytea NOT NULL,
      iv bytea NOT NULL,
      auth_tag bytea NOT NULL,
      key_version integer NOT NULL DEFAULT 1,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      updated_by uuid REFERENCES users(id) ON DELETE SET NULL,
      last_revealed_at timestamptz,
      version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE UNIQUE INDEX workspace_secrets_name_key ON workspace_secrets (workspace_id, lower(name))');

    await q.query(`CREATE TABLE settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      version integer NOT NULL DEFAULT 1,
      updated_by uuid REFERENCES users(id) ON DELETE SET NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);

    await q.query(`CREATE TABLE audit_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid,
      actor_id uuid,
      actor_email text,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text,
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      request_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, created_at)');
    await q.query('CREATE INDEX audit_events_target_idx ON audit_events (target_type, target_id, created_at)');

    await q.query(`CREATE TABLE jobs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
      type text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      priority integer NOT NULL DEFAULT 0,
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL DEFAULT 3,
      run_after timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_expires_at timestamptz,
      progress jsonb,
      result jsonb,
      error jsonb,
      idempotency_key text,
      target_type text,
      target_id uuid,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    await q.query(`CREATE INDEX jobs_claim_idx ON jobs (priority DESC, run_after, created_at) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX jobs_lease_idx ON jobs (lease_expires_at) WHERE status = 'running'`);
    await q.query('CREATE INDEX jobs_target_idx ON jobs (target_type, target_id)');
    await q.query(
      'CREATE UNIQUE INDEX jobs_idempotency_key ON jobs (type, idempotency_key) WHERE idempotency_key IS NOT NULL',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'jobs',
      'audit_events',
      'settings',
      'workspace_secrets',
      'workspace_invitations',
      'workspace_members',
      'workspaces',
      'password_reset_tokens',
      'login_throttle',
      'auth_tokens',
      'users',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
