import { Injectable } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { Selectable } from 'kysely';
import type { AuthTokens, Users, WorkspaceMembers, Workspaces } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { SystemRole, WorkspaceRole } from './roles.js';

export interface ActiveSession {
  userId: string;
  email: string;
  displayName: string;
  systemRole: SystemRole;
  expiresAt: Date;
}

/** What a route acts on, as far as the request names it: a workspace, or a record of a table with a `workspace_id`. */
export type AccessTarget = { workspaceId: string } | { table: string; id: string };

/** A live session with the caller's standing towards the target. */
export interface SessionAccess extends ActiveSession, Standing {}

/** Whether the route's workspace exists and a user's role there (null: not a member). */
export interface Standing {
  /** The route's workspace; null when the record it names does not exist. */
  workspaceId: string | null;
  workspaceExists: boolean;
  role: WorkspaceRole | null;
}

/** The columns standingSql selects, as they come back. */
export interface StandingRow {
  /** Named apart from the selected table's own workspace_id (an API key's). */
  target_workspace_id: string | null;
  workspace_exists: boolean;
  member_role: WorkspaceRole | null;
}

/**
 * The part of a statement that finds a user's standing towards a target in the same round trip:
 * `joins` to append after the FROM naming `userColumn`, `columns` to select (StandingRow).
 * `param` is the target's id: a record's in `table`, or a workspace's when no table is named.
 */
export function standingSql(
  table: string | undefined,
  userColumn: string,
  param: string,
): { columns: string; joins: string } {
  const workspace = table
    ? `LEFT JOIN ${table} r ON r.id = ${param} LEFT JOIN workspaces w ON w.id = r.workspace_id`
    : `LEFT JOIN workspaces w ON w.id = ${param}`;
  return {
    columns: `${table ? 'r.workspace_id' : `${param}::uuid`} AS target_workspace_id, w.id IS NOT NULL AS workspace_exists, m.role AS member_role`,
    joins: `${workspace} LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = ${userColumn}`,
  };
}

export function standingOf(row: StandingRow): Standing {
  return { workspaceId: row.target_workspace_id, workspaceExists: row.workspace_exists, role: row.member_role };
}

/**
 * The statement of findSessionWithAccess ($1 the token id; $2 the record's id in `table`, or
 * the workspace's id when no table is named). Exported for bench/lib/twin.mjs.
 */
export function sessionWithAccessSql(table: string | undefined): string {
  const standing = standingSql(table, 't.user_id', '$2');
  return `SELECT t.user_id, u.email, u.display_name, u.system_role, t.expires_at, ${standing.columns}
            FROM auth_tokens t JOIN users u ON u.id = t.user_id ${standing.joins}
           WHERE t.id = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND u.status = 'active'`;
}

/** A live session's row: the token's and its user's columns; system_role holds a SystemRole (a CHECK constraint). */
type SessionRow = Pick<Selectable<AuthTokens>, 'user_id' | 'expires_at'> &
  Pick<Selectable<Users>, 'email' | 'display_name'> & { system_role: SystemRole };

function sessionOf(row: SessionRow): ActiveSession {
  return {
    userId: row.user_id,
    email: row.email,
    displayName: row.display_name,
    systemRole: row.system_role,
    expiresAt: new Date(row.expires_at),
  };
}

/** The read queries every request's authorization needs: token sessions and memberships. */
@Injectable()
export class AccessRepository {
  constructor(private readonly db: Db) {}

  /** The session of an unrevoked, unexpired token whose user is active; undefined otherwise. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async findActiveSession(tokenId: string): Promise<ActiveSession | undefined> {
    const rows: SessionRow[] = await this.db.prepared(
      'active_session',
      `SELECT t.user_id, u.email, u.display_name, u.system_role, t.expires_at
           FROM auth_tokens t JOIN users u ON u.id = t.user_id
          WHERE t.id = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND u.status = 'active'`,
      [tokenId],
    );
    return rows[0] && sessionOf(rows[0]);
  }

  /**
   * `findActiveSession` and `membership` in one statement (one round trip): the session of an
   * unrevoked, unexpired token of an active user, with the target's workspace (a record's, found
   * by its id in its table) and the user's role there. Undefined when the session is not live.
   */
  @GenerateSql(
    { name: 'a workspace', params: [DummyValue.UUID, { workspaceId: DummyValue.UUID2 }] },
    { name: 'a run', params: [DummyValue.UUID, { table: 'runs', id: DummyValue.UUID2 }] },
  )
  async findSessionWithAccess(tokenId: string, target: AccessTarget): Promise<SessionAccess | undefined> {
    const rows: Array<SessionRow & StandingRow> = await this.db.prepared(
      `session_access_${'table' in target ? target.table : 'workspace'}`,
      sessionWithAccessSql('table' in target ? target.table : undefined),
      [tokenId, 'table' in target ? target.id : target.workspaceId],
    );
    const row = rows[0];
    return row && { ...sessionOf(row), ...standingOf(row) };
  }

  /** Whether the workspace exists and, if so, the user's role in it (null when not a member). */
  async membership(workspaceId: string, userId: string): Promise<{ exists: boolean; role: WorkspaceRole | null }> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspaces as w')
        .leftJoin('workspace_members as m', (join) =>
          join.onRef('m.workspace_id', '=', 'w.id').on('m.user_id', '=', userId),
        )
        .select('m.role')
        .where('w.id', '=', workspaceId)
        .$narrowType<{ role: WorkspaceRole | null }>(),
    );
    return rows.length === 0 ? { exists: false, role: null } : { exists: true, role: rows[0].role };
  }

  /** The user's memberships with workspace names, oldest first (only the one in `workspaceId` when given: an API key's). */
  async membershipsOf(
    userId: string,
    workspaceId?: string,
  ): Promise<
    Array<{
      workspaceId: Selectable<WorkspaceMembers>['workspace_id'];
      workspaceName: Selectable<Workspaces>['name'];
      role: WorkspaceRole;
      joinedAt: Selectable<WorkspaceMembers>['created_at'];
    }>
  > {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspace_members as m')
        .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
        .select(['m.workspace_id', 'w.name', 'm.role', 'm.created_at'])
        .where('m.user_id', '=', userId)
        .$if(workspaceId !== undefined, (s) => s.where('m.workspace_id', '=', workspaceId!))
        .orderBy('m.created_at')
        .orderBy('w.name')
        .$narrowType<{ role: WorkspaceRole }>(),
    );
    return rows.map((r) => ({
      workspaceId: r.workspace_id,
      workspaceName: r.name,
      role: r.role,
      joinedAt: new Date(r.created_at),
    }));
  }

  /** Ids of the workspaces the user belongs to, for lists that span the caller's workspaces. */
  async workspaceIdsOf(userId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('workspace_members').select('workspace_id').where('user_id', '=', userId),
    );
    return rows.map((r) => r.workspace_id);
  }
}
