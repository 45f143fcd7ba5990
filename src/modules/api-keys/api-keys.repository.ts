import { Injectable } from '@nestjs/common';
import { AccessCache } from '../../../libs/auth/access-cache.js';
import { type AccessTarget, standingSql, type StandingRow } from '../../../libs/auth/access.repository.js';
import type { SystemRole, WorkspaceRole } from '../../../libs/auth/roles.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import type { ApiKeyStatusFilter } from './dto/api-key.dto.js';
import { containsPattern } from '../../../libs/database/like.js';

export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  user_id: string;
  name: string;
  prefix: string;
  role: WorkspaceRole;
  expires_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
  created_at: Date;
}

/** A key as the guard checks it: with its hash and its creator. */
export interface ApiKeyCredential extends ApiKeyRow {
  secret_hash: string;
  email: string;
  display_name: string;
  system_role: SystemRole;
  user_active: boolean;
}

/** The credential alone, without the standing columns a statement with a target adds: what the access cache keeps. */
export function credentialOf(row: ApiKeyCredential & Partial<StandingRow>): ApiKeyCredential {
  const { target_workspace_id: _w, workspace_exists: _e, member_role: _r, ...credential } = row;
  return credential;
}

const COLUMNS =
  'k.id, k.workspace_id, k.user_id, k.name, k.prefix, k.role, k.expires_at, k.last_used_at, k.last_used_ip, k.revoked_at, k.revoked_reason, k.created_at';
const STATUS: Record<ApiKeyStatusFilter, string> = {
  active: 'k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())',
  expired: 'k.revoked_at IS NULL AND k.expires_at <= now()',
  revoked: 'k.revoked_at IS NOT NULL',
  all: 'true',
};

/** The rows of an UPDATE ... RETURNING: TypeORM's postgres driver answers them as [rows, affected]. */
function updated(result: [ApiKeyRow[], number]): ApiKeyRow[] {
  return result[0];
}

/** The api_keys table: machine credentials of a workspace, stored as SHA-256 hashes. */
@Injectable()
export class ApiKeysRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  async insert(key: {
    workspaceId: string;
    userId: string;
    name: string;
    prefix: string;
    secretHash: string;
    role: WorkspaceRole;
    expiresAt: Date | null;
  }): Promise<ApiKeyRow> {
    const rows: ApiKeyRow[] = await this.db.query(
      `INSERT INTO api_keys AS k (workspace_id, user_id, name, prefix, secret_hash, role, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [key.workspaceId, key.userId, key.name, key.prefix, key.secretHash, key.role, key.expiresAt],
    );
    return rows[0];
  }

  /** A page of the workspace's keys, newest first; only `createdBy`'s when given. */
  async list(
    workspaceId: string,
    filter: { status: ApiKeyStatusFilter; q?: string; createdBy?: string },
    window: { skip: number; take: number },
  ): Promise<[ApiKeyRow[], number]> {
    const params: unknown[] = [
      workspaceId,
      filter.createdBy ?? null,
      filter.q ? containsPattern(filter.q.toLowerCase()) : null,
    ];
    const where = `k.workspace_id = $1 AND ($2::uuid IS NULL OR k.user_id = $2) AND ($3::text IS NULL OR lower(k.name) LIKE $3) AND ${STATUS[filter.status]}`;
    const rows: Array<ApiKeyRow & { total: number }> = await this.db.query(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM api_keys k WHERE ${where} ORDER BY k.created_at DESC, k.id LIMIT $4 OFFSET $5`,
      [...params, window.take, window.skip],
    );
    if (rows.length || window.skip === 0) return [rows, rows[0]?.total ?? 0];
    const [{ total }]: Array<{ total: number }> = await this.db.query(
      `SELECT count(*)::int AS total FROM api_keys k WHERE ${where}`,
      params,
    );
    return [rows, total];
  }

  async find(workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
    const rows: ApiKeyRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM api_keys k WHERE k.id = $1 AND k.workspace_id = $2`,
      [id, workspaceId],
    );
    return rows[0];
  }

  /** Serialises key creation per creator and workspace, so the limit holds under parallel requests. */
  async lockCreator(workspaceId: string, userId: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || $1 || ':' || $2, 0))`, [
      workspaceId,
      userId,
    ]);
  }

  async countActive(workspaceId: string, userId: string): Promise<number> {
    const [{ n }]: Array<{ n: number }> = await this.db.query(
      `SELECT count(*)::int AS n FROM api_keys k WHERE k.workspace_id = $1 AND k.user_id = $2 AND ${STATUS.active}`,
      [workspaceId, userId],
    );
    return n;
  }

  /** The key with this prefix, its hash and its creator (published by the users family: `user_identities()`), whatever its state. */
  async credential(prefix: string): Promise<ApiKeyCredential | undefined> {
    const rows: ApiKeyCredential[] = await this.db.query(
      `SELECT ${COLUMNS}, k.secret_hash, u.email, u.display_name, u.system_role, u.active AS user_active
         FROM api_keys k JOIN user_identities() u ON u.id = k.user_id WHERE k.prefix = $1`,
      [prefix],
    );
    return rows[0];
  }

  /**
   * `credential` with the key creator's standing towards the route's target (a workspace, or a
   * record of a table with a workspace_id) in the same statement, prepared once per connection.
   */
  async credentialWithAccess(
    prefix: string,
    target: AccessTarget,
  ): Promise<(ApiKeyCredential & StandingRow) | undefined> {
    const table = 'table' in target ? target.table : undefined;
    const standing = standingSql(table, 'k.user_id', '$2');
    const rows = await this.db.prepared<ApiKeyCredential & StandingRow>(
      `api_key_access_${table ?? 'workspace'}`,
      `SELECT ${COLUMNS}, k.secret_hash, u.email, u.display_name, u.system_role, u.active AS user_active, ${standing.columns}
         FROM api_keys k JOIN user_identities() u ON u.id = k.user_id ${standing.joins} WHERE k.prefix = $1`,
      [prefix, 'table' in target ? target.id : target.workspaceId],
    );
    return rows[0];
  }

  /** Records a use, at most once a minute per key (a write per call would cost every request). */
  async touch(id: string, ip: string | undefined): Promise<void> {
    await this.db.query(
      `UPDATE api_keys SET last_used_at = now(), last_used_ip = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id, ip?.slice(0, 64) ?? null],
    );
  }

  /** Revokes the key if it is live; the revoked row, or undefined when it was already revoked. */
  async revoke(id: string, by: string | null, reason: string): Promise<ApiKeyRow | undefined> {
    return this.revoked(
      await this.db.query(
        `UPDATE api_keys AS k SET revoked_at = now(), revoked_by = $2, revoked_reason = $3 WHERE k.id = $1 AND k.revoked_at IS NULL RETURNING ${COLUMNS}`,
        [id, by, reason],
      ),
    )[0];
  }

  /** Revokes the user's live keys, in one workspace or all; answers the revoked rows. */
  async revokeAllOf(userId: string, workspaceId: string | null, reason: string): Promise<ApiKeyRow[]> {
    return this.revoked(
      await this.db.query(
        `UPDATE api_keys AS k SET revoked_at = now(), revoked_reason = $3 WHERE k.user_id = $1 AND ($2::uuid IS NULL OR k.workspace_id = $2) AND k.revoked_at IS NULL RETURNING ${COLUMNS}`,
        [userId, workspaceId, reason],
      ),
    );
  }

  /** The rows an UPDATE ... RETURNING revoked; this process's access cache drops them after the commit. */
  private revoked(result: [ApiKeyRow[], number]): ApiKeyRow[] {
    const rows = updated(result);
    for (const row of rows) this.access.changed({ key: row.prefix });
    return rows;
  }
}
