import { Injectable } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { AccessCache } from '#libs/auth/access-cache.js';
import { type AccessTarget, standingSql, type StandingRow } from '#libs/auth/access.repository.js';
import type { SystemRole, WorkspaceRole } from '#libs/auth/roles.js';
import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool } from 'kysely';
import type { ApiKeys, DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { ApiKeyStatusFilter } from './dto/api-key.dto.js';
import { containsPattern } from '#libs/database/like.js';

const COLUMNS = [
  'id',
  'workspace_id',
  'user_id',
  'name',
  'prefix',
  'role',
  'expires_at',
  'last_used_at',
  'last_used_ip',
  'revoked_at',
  'revoked_reason',
  'created_at',
] as const;

/** A key as the service sees it (its hash left out); the role column holds a WorkspaceRole (a CHECK constraint). */
export type ApiKeyRow = Omit<Pick<Selectable<ApiKeys>, (typeof COLUMNS)[number]>, 'role'> & { role: WorkspaceRole };

/** A key as the guard checks it: with its hash and its creator (from `user_identities()`, the users family's). */
export interface ApiKeyCredential extends ApiKeyRow {
  secret_hash: Selectable<ApiKeys>['secret_hash'];
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

/** The columns of ApiKeyRow for the hand-written statements that join `user_identities()`. */
const COLUMN_LIST = COLUMNS.map((c) => `k.${c}`).join(', ');

const now = sql<Date>`now()`;
type KeyCondition = (eb: ExpressionBuilder<DB, 'api_keys'>) => Expression<SqlBool>;
const STATUS: Record<ApiKeyStatusFilter, KeyCondition> = {
  active: (eb) =>
    eb.and([eb('revoked_at', 'is', null), eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])]),
  expired: (eb) => eb.and([eb('revoked_at', 'is', null), eb('expires_at', '<=', now)]),
  revoked: (eb) => eb('revoked_at', 'is not', null),
  all: (eb) => eb.lit(true),
};

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
    const rows = await this.db.typed((q) =>
      q
        .insertInto('api_keys')
        .values({
          workspace_id: key.workspaceId,
          user_id: key.userId,
          name: key.name,
          prefix: key.prefix,
          secret_hash: key.secretHash,
          role: key.role,
          expires_at: key.expiresAt,
        })
        .returning(COLUMNS)
        .$narrowType<{ role: WorkspaceRole }>(),
    );
    return rows[0];
  }

  /** A page of the workspace's keys, newest first; only `createdBy`'s when given. */
  async list(
    workspaceId: string,
    filter: { status: ApiKeyStatusFilter; q?: string; createdBy?: string },
    window: { skip: number; take: number },
  ): Promise<[ApiKeyRow[], number]> {
    const where: KeyCondition = (eb) =>
      eb.and([
        eb('workspace_id', '=', workspaceId),
        ...(filter.createdBy ? [eb('user_id', '=', filter.createdBy)] : []),
        ...(filter.q ? [eb(eb.fn('lower', ['name']), 'like', containsPattern(filter.q.toLowerCase()))] : []),
        STATUS[filter.status](eb),
      ]);
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('api_keys')
        .select(COLUMNS)
        .select(sql<number>`count(*) OVER ()::int`.as('total'))
        .where(where)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(window.take)
        .offset(window.skip)
        .$narrowType<{ role: WorkspaceRole }>(),
    );
    if (rows.length || window.skip === 0) return [rows, rows[0]?.total ?? 0];
    const [{ total }] = await this.db.typed((q) =>
      q
        .selectFrom('api_keys')
        .select(sql<number>`count(*)::int`.as('total'))
        .where(where),
    );
    return [rows, total];
  }

  async find(workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('api_keys')
        .select(COLUMNS)
        .where('id', '=', id)
        .where('workspace_id', '=', workspaceId)
        .$narrowType<{ role: WorkspaceRole }>(),
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
    const [{ n }] = await this.db.typed((q) =>
      q
        .selectFrom('api_keys')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .where(STATUS.active),
    );
    return n;
  }

  /** The key with this prefix, its hash and its creator (published by the users family: `user_identities()`), whatever its state. */
  async credential(prefix: string): Promise<ApiKeyCredential | undefined> {
    const rows: ApiKeyCredential[] = await this.db.query(
      `SELECT ${COLUMN_LIST}, k.secret_hash, u.email, u.display_name, u.system_role, u.active AS user_active
         FROM api_keys k JOIN user_identities() u ON u.id = k.user_id WHERE k.prefix = $1`,
      [prefix],
    );
    return rows[0];
  }

  /**
   * `credential` with the key creator's standing towards the route's target (a workspace, or a
   * record of a table with a workspace_id) in the same statement, prepared once per connection.
   */
  @GenerateSql({ name: 'a dataset', params: ['ews_sample', { table: 'datasets', id: DummyValue.UUID }] })
  async credentialWithAccess(
    prefix: string,
    target: AccessTarget,
  ): Promise<(ApiKeyCredential & StandingRow) | undefined> {
    const table = 'table' in target ? target.table : undefined;
    const standing = standingSql(table, 'k.user_id', '$2');
    const rows = await this.db.prepared<ApiKeyCredential & StandingRow>(
      `api_key_access_${table ?? 'workspace'}`,
      `SELECT ${COLUMN_LIST}, k.secret_hash, u.email, u.display_name, u.system_role, u.active AS user_active, ${standing.columns}
         FROM api_keys k JOIN user_identities() u ON u.id = k.user_id ${standing.joins} WHERE k.prefix = $1`,
      [prefix, 'table' in target ? target.id : target.workspaceId],
    );
    return rows[0];
  }

  /**
   * Records a use, at most once a minute per key (a write per call would cost every request).
   * Hand-written: it runs on every request with a key, where compiling a builder would cost each one.
   */
  @GenerateSql({ params: [DummyValue.UUID, '127.0.0.1'] })
  async touch(id: string, ip: string | undefined): Promise<void> {
    await this.db.query(
      `UPDATE api_keys SET last_used_at = now(), last_used_ip = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id, ip?.slice(0, 64) ?? null],
    );
  }

  /** Revokes the key if it is live; the revoked row, or undefined when it was already revoked. */
  async revoke(id: string, by: string | null, reason: string): Promise<ApiKeyRow | undefined> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('api_keys')
        .set({ revoked_at: now, revoked_by: by, revoked_reason: reason })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returning(COLUMNS)
        .$narrowType<{ role: WorkspaceRole }>(),
    );
    return this.revoked(rows)[0];
  }

  /** Revokes the user's live keys, in one workspace or all; answers the revoked rows. */
  async revokeAllOf(
    userId: string,
    workspaceId: string | null,
    reason: string,
    by: string | null,
  ): Promise<ApiKeyRow[]> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('api_keys')
        .set({ revoked_at: now, revoked_by: by, revoked_reason: reason })
        .where('user_id', '=', userId)
        .$if(workspaceId !== null, (u) => u.where('workspace_id', '=', workspaceId!))
        .where('revoked_at', 'is', null)
        .returning(COLUMNS)
        .$narrowType<{ role: WorkspaceRole }>(),
    );
    return this.revoked(rows);
  }

  /** The rows an UPDATE ... RETURNING revoked; this process's access cache drops them after the commit. */
  private revoked(rows: ApiKeyRow[]): ApiKeyRow[] {
    for (const row of rows) this.access.changed({ key: row.prefix });
    return rows;
  }
}
