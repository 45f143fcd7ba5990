import { Injectable } from '@nestjs/common';
import { AccessCache } from '../../../libs/auth/access-cache.js';
import type { WorkspaceRole } from '../../../libs/auth/roles.js';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { containsPattern } from '../../../libs/database/like.js';

export interface MemberRow {
  workspaceId: string;
  userId: string;
  email: string;
  displayName: string;
  role: WorkspaceRole;
  userStatus: 'active' | 'deactivated';
  joinedAt: Date;
  addedBy: string | null;
}

interface RawMember {
  workspace_id: string;
  user_id: string;
  email: string;
  display_name: string;
  role: WorkspaceRole;
  status: 'active' | 'deactivated';
  created_at: Date;
  added_by: string | null;
}

const toRow = (r: RawMember): MemberRow => ({
  workspaceId: r.workspace_id,
  userId: r.user_id,
  email: r.email,
  displayName: r.display_name,
  role: r.role,
  userStatus: r.status,
  joinedAt: new Date(r.created_at),
  addedBy: r.added_by,
});

const MEMBER_SELECT = `SELECT m.workspace_id, m.user_id, u.email, u.display_name, m.role, u.status, m.created_at, m.added_by
  FROM workspace_members m JOIN users u ON u.id = m.user_id`;

@Injectable()
export class MembersRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  private get repo() {
    return this.db.repository(WorkspaceMemberEntity);
  }

  private q() {
    return this.db.manager;
  }

  async list(workspaceId: string): Promise<MemberRow[]> {
    const rows: RawMember[] = await this.q().query(
      `${MEMBER_SELECT} WHERE m.workspace_id = $1 ORDER BY m.created_at, u.email`,
      [workspaceId],
    );
    return rows.map(toRow);
  }

  async find(workspaceId: string, userId: string): Promise<MemberRow | null> {
    const rows: RawMember[] = await this.q().query(`${MEMBER_SELECT} WHERE m.workspace_id = $1 AND m.user_id = $2`, [
      workspaceId,
      userId,
    ]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The membership row locked for a role change or removal. */
  findForUpdate(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.repo.findOne({ where: { workspaceId, userId }, lock: { mode: 'pessimistic_write' } });
  }

  /** Owners of the workspace, locked so two concurrent demotions cannot leave it without one. */
  async lockOwners(workspaceId: string): Promise<string[]> {
    const rows: Array<{ user_id: string }> = await this.db.query(
      `SELECT user_id FROM workspace_members WHERE workspace_id = $1 AND role = 'owner' ORDER BY user_id FOR UPDATE`,
      [workspaceId],
    );
    return rows.map((r) => r.user_id);
  }

  async insert(member: Pick<WorkspaceMemberEntity, 'workspaceId' | 'userId' | 'role' | 'addedBy'>): Promise<void> {
    await this.repo.insert(member);
    this.changed(member.workspaceId, member.userId);
  }

  /** Inserts the membership unless the user is already a member; true when it inserted. */
  async insertIfAbsent(
    member: Pick<WorkspaceMemberEntity, 'workspaceId' | 'userId' | 'role' | 'addedBy'>,
  ): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO workspace_members (workspace_id, user_id, role, added_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, user_id) DO NOTHING RETURNING user_id`,
      [member.workspaceId, member.userId, member.role, member.addedBy],
    );
    if (rows.length === 1) this.changed(member.workspaceId, member.userId);
    return rows.length === 1;
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.repo.update({ workspaceId, userId }, { role });
    this.changed(workspaceId, userId);
  }

  async delete(workspaceId: string, userId: string): Promise<void> {
    await this.repo.delete({ workspaceId, userId });
    this.changed(workspaceId, userId);
  }

  /** Every process drops its cached standing of the user in the workspace (the access guard's). */
  private changed(workspace: string, user: string): void {
    this.access.changed({ member: { workspace, user } });
  }

  /** Active users who are not members, matching q, at most `limit`. */
  async candidates(
    workspaceId: string,
    q: string | undefined,
    limit: number,
  ): Promise<Array<{ id: string; email: string; display_name: string }>> {
    const pattern = q ? containsPattern(q.toLowerCase()) : '%';
    return this.q().query(
      `SELECT u.id, u.email, u.display_name FROM users u
        WHERE u.status = 'active'
          AND NOT EXISTS (SELECT 1 FROM workspace_members m WHERE m.workspace_id = $1 AND m.user_id = u.id)
          AND (lower(u.email) LIKE $2 OR lower(u.display_name) LIKE $2)
        ORDER BY u.email LIMIT $3`,
      [workspaceId, pattern, limit],
    );
  }
}
