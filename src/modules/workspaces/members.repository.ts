import { Injectable } from '@nestjs/common';
import type { Selectable } from 'kysely';
import { AccessCache } from '#libs/auth/access-cache.js';
import type { WorkspaceRole } from '#libs/auth/roles.js';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity.js';
import type { WorkspaceMembers } from '#libs/database/schema.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';

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

const MEMBER_COLUMNS = ['workspace_id', 'user_id', 'role', 'created_at', 'added_by'] as const;

/** A membership row; the role column holds a WorkspaceRole (a CHECK constraint). */
type RawMembership = Omit<Pick<Selectable<WorkspaceMembers>, (typeof MEMBER_COLUMNS)[number]>, 'role'> & {
  role: WorkspaceRole;
};

const toRow = (r: RawMembership): MembershipRow => ({
  workspaceId: r.workspace_id,
  userId: r.user_id,
  role: r.role,
  joinedAt: new Date(r.created_at),
  addedBy: r.added_by,
});

const memberships = (q: QueryBuilder, workspaceId: string) =>
  q
    .selectFrom('workspace_members')
    .select(MEMBER_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .$narrowType<{ role: WorkspaceRole }>();

@Injectable()
export class MembersRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  private get repo() {
    return this.db.repository(WorkspaceMemberEntity);
  }

  /** The workspace's memberships, oldest first. */
  async list(workspaceId: string): Promise<MembershipRow[]> {
    const rows = await this.db.typed((q) => memberships(q, workspaceId).orderBy('created_at'));
    return rows.map(toRow);
  }

  async find(workspaceId: string, userId: string): Promise<MembershipRow | null> {
    const rows = await this.db.typed((q) => memberships(q, workspaceId).where('user_id', '=', userId));
    return rows[0] ? toRow(rows[0]) : null;
  }

  async memberIds(workspaceId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('workspace_members').select('user_id').where('workspace_id', '=', workspaceId),
    );
    return rows.map((r) => r.user_id);
  }

  /** Those of these workspace ids that exist. */
  async existingWorkspaces(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) => q.selectFrom('workspaces').select('id').where('id', 'in', ids));
    return rows.map((r) => r.id);
  }

  /** The membership row locked for a role change or removal. */
  findForUpdate(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.repo.findOne({ where: { workspaceId, userId }, lock: { mode: 'pessimistic_write' } });
  }

  /** Owners of the workspace, locked so two concurrent demotions cannot leave it without one. */
  async lockOwners(workspaceId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspace_members')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .orderBy('user_id')
        .forUpdate(),
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
    const rows = await this.db.typed((q) =>
      q
        .insertInto('workspace_members')
        .values({
          workspace_id: member.workspaceId,
          user_id: member.userId,
          role: member.role,
          added_by: member.addedBy,
        })
        .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
        .returning('user_id'),
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
