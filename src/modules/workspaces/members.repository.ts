import { Injectable } from '@nestjs/common';
import { AccessCache } from '../../../libs/auth/access-cache.js';
import type { WorkspaceRole } from '../../../libs/auth/roles.js';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';

/** A membership as its table holds it. */
export interface MembershipRow {
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
  joinedAt: Date;
  addedBy: string | null;
}

/** A membership with the member's user (the users family's: `MembersService` asks UsersService). */
export interface MemberRow extends MembershipRow {
  email: string;
  displayName: string;
  userStatus: 'active' | 'deactivated';
}

interface RawMembership {
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  created_at: Date;
  added_by: string | null;
}

const toRow = (r: RawMembership): MembershipRow => ({
  workspaceId: r.workspace_id,
  userId: r.user_id,
  role: r.role,
  joinedAt: new Date(r.created_at),
  addedBy: r.added_by,
});

const MEMBER_SELECT = 'SELECT workspace_id, user_id, role, created_at, added_by FROM workspace_members';

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

  /** The workspace's memberships, oldest first. */
  async list(workspaceId: string): Promise<MembershipRow[]> {
    const rows: RawMembership[] = await this.q().query(`${MEMBER_SELECT} WHERE workspace_id = $1 ORDER BY created_at`, [
      workspaceId,
    ]);
    return rows.map(toRow);
  }

  async find(workspaceId: string, userId: string): Promise<MembershipRow | null> {
    const rows: RawMembership[] = await this.q().query(`${MEMBER_SELECT} WHERE workspace_id = $1 AND user_id = $2`, [
      workspaceId,
      userId,
    ]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  async memberIds(workspaceId: string): Promise<string[]> {
    const rows: Array<{ user_id: string }> = await this.db.query(
      'SELECT user_id FROM workspace_members WHERE workspace_id = $1',
      [workspaceId],
    );
    return rows.map((r) => r.user_id);
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
}
