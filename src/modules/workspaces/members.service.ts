import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { roleAtLeast, type Principal, type WorkspaceAccess, type WorkspaceRole } from '#libs/auth/roles.js';
import { DomainError, ForbiddenError, NotFoundError, ValidationFailedError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { UserErrors } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';
import type {
  AddMemberRequest,
  CreateWorkspaceUserRequest,
  UserCandidatesQuery,
  WorkspaceMemberResponse,
  WorkspaceUserCandidateResponse,
} from './dto/member.dto.js';
import { MembersRepository, type MemberRow, type MembershipRow } from './members.repository.js';
import { WorkspaceErrors } from './workspaces.errors.js';
import { toMemberResponse } from './workspaces.mapper.js';

/** A membership single sign-on added, changed or removed. */
export interface SsoMembershipChange {
  workspaceId: string;
  from: WorkspaceRole | null;
  to: WorkspaceRole | null;
}

/**
 * Membership rules: admins manage members; only owners grant `owner` or change or remove an
 * owner; anyone may leave; a workspace always keeps one owner.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly usersService: UsersService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** Whether the user is a member of the workspace. */
  async isMember(workspaceId: string, userId: string): Promise<boolean> {
    return (await this.members.find(workspaceId, userId)) !== null;
  }

  async list(access: WorkspaceAccess): Promise<WorkspaceMemberResponse[]> {
    return (await this.withUsers(await this.members.list(access.workspaceId))).map(toMemberResponse);
  }

  private async member(workspaceId: string, userId: string): Promise<MemberRow | null> {
    const membership = await this.members.find(workspaceId, userId);
    return membership && (await this.withUsers([membership]))[0];
  }

  /** The memberships with their users' names and status (the users family's), by join time then email. */
  private async withUsers(memberships: MembershipRow[]): Promise<MemberRow[]> {
    const users = new Map((await this.usersService.findMany(memberships.map((m) => m.userId))).map((u) => [u.id, u]));
    return memberships
      .flatMap((m) => {
        const user = users.get(m.userId);
        return user ? [{ ...m, email: user.email, displayName: user.displayName, userStatus: user.status }] : [];
      })
      .sort(
        (a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0),
      );
  }

  async add(access: WorkspaceAccess, body: AddMemberRequest, caller: Principal): Promise<WorkspaceMemberResponse> {
    if ((body.user_id === undefined) === (body.email === undefined)) {
      throw new ValidationFailedError('Give exactly one of user_id or email', [
        { field: 'user_id', message: 'give exactly one of user_id or email' },
      ]);
    }
    this.assertMayGrant(access, body.role);
    const user = body.user_id
      ? await this.usersService.find(body.user_id)
      : await this.usersService.findByEmail(body.email!);
    if (!user) throw new NotFoundError('user', body.user_id ?? body.email);
    if (user.status !== 'active')
      throw new DomainError(WorkspaceErrors.user_deactivated, `User ${user.email} is deactivated`);
    return this.transactions.run(async () => {
      if (
        !(await this.members.insertIfAbsent({
          workspaceId: access.workspaceId,
          userId: user.id,
          role: body.role,
          addedBy: caller.userId,
        }))
      ) {
        throw new DomainError(
          WorkspaceErrors.already_member,
          `${user.email} is already a member; change their role with PATCH /workspaces/${access.workspaceId}/members/${user.id}`,
        );
      }
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'member.added',
        targetType: 'user',
        targetId: user.id,
        details: { role: body.role },
      });
      return toMemberResponse((await this.member(access.workspaceId, user.id))!);
    });
  }

  async changeRole(
    access: WorkspaceAccess,
    userId: string,
    role: WorkspaceRole,
    caller: Principal,
  ): Promise<WorkspaceMemberResponse> {
    return this.transactions.run(async () => {
      // Owner rows first (id order), then the target: one lock order, so owners acting on each other cannot deadlock.
      const owners = await this.members.lockOwners(access.workspaceId);
      const member = await this.members.findForUpdate(access.workspaceId, userId);
      if (!member) throw new NotFoundError('member', userId);
      // Who may touch an owner's role is checked before anything else, an unchanged role included.
      if (member.role === 'owner' || role === 'owner')
        this.assertStillOwner(access, caller, owners, 'grant the owner role or change the role of an owner');
      if (member.role === role) return toMemberResponse((await this.member(access.workspaceId, userId))!);
      if (member.role === 'owner') this.assertAnotherOwner(owners, userId, 'demote');
      await this.members.setRole(access.workspaceId, userId, role);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'member.role_changed',
        targetType: 'user',
        targetId: userId,
        details: { from: member.role, to: role },
      });
      return toMemberResponse((await this.member(access.workspaceId, userId))!);
    });
  }

  /** Admins remove others; anyone may remove themselves (leave). The member's API keys there are revoked. */
  async remove(access: WorkspaceAccess, userId: string, caller: Principal): Promise<void> {
    const leaving = userId === caller.userId;
    if (!leaving && !roleAtLeast(access.role, 'admin'))
      throw new ForbiddenError(`Removing other members needs the admin role or above; yours is ${access.role}`);
    await this.transactions.run(async () => {
      // Owner rows first (id order), then the target: one lock order, so owners acting on each other cannot deadlock.
      const owners = await this.members.lockOwners(access.workspaceId);
      const member = await this.members.findForUpdate(access.workspaceId, userId);
      if (!member) throw new NotFoundError('member', userId);
      if (member.role === 'owner') {
        if (!leaving) this.assertStillOwner(access, caller, owners, 'remove an owner');
        this.assertAnotherOwner(owners, userId, 'remove');
      }
      await this.members.delete(access.workspaceId, userId);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'member.removed',
        targetType: 'user',
        targetId: userId,
        details: { role: member.role, left: leaving },
      });
      // The member's keys die with the membership (re-adding them must not bring old keys back).
      await this.apiKeys.revokeAllOf(userId, access.workspaceId, 'member_removed', caller);
    });
  }

  /** Creates a user straight into the workspace; without a password the response carries a one-time reset token. */
  async createUser(
    access: WorkspaceAccess,
    body: CreateWorkspaceUserRequest,
    caller: Principal,
  ): Promise<WorkspaceMemberResponse> {
    this.assertMayGrant(access, body.role);
    const passwordHash = await this.usersService.hashPassword(body.password);
    return this.transactions.run(async () => {
      const user = await this.usersService
        .createUser({ email: body.email, displayName: body.display_name, passwordHash }, caller)
        .catch((err: unknown) => {
          if (err instanceof DomainError && err.code === UserErrors.email_taken) {
            throw new DomainError(
              UserErrors.email_taken,
              `${body.email.toLowerCase()} is already registered; add the existing user with POST /workspaces/${access.workspaceId}/members instead`,
            );
          }
          throw err;
        });
      await this.members.insert({
        workspaceId: access.workspaceId,
        userId: user.id,
        role: body.role,
        addedBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'workspace.user_created',
        targetType: 'user',
        targetId: user.id,
        details: { role: body.role },
      });
      const response = toMemberResponse((await this.member(access.workspaceId, user.id))!);
      if (body.password) return response;
      const reset = await this.usersService.issueResetToken(user.id, caller);
      return { ...response, reset_token: reset.token, reset_token_expires_at: reset.expiresAt };
    });
  }

  async candidates(access: WorkspaceAccess, query: UserCandidatesQuery): Promise<WorkspaceUserCandidateResponse[]> {
    return this.usersService.candidates(await this.members.memberIds(access.workspaceId), query.q, query.limit);
  }

  /**
   * For accepted invitations: adds the membership, or raises an existing role (never lowers it).
   * Runs in the caller's transaction when given one. Answers the role the user holds afterwards.
   */
  async addOrUpgradeMember(
    workspaceId: string,
    userId: string,
    role: WorkspaceRole,
    actor: Pick<Principal, 'userId' | 'email'> | undefined,
  ): Promise<WorkspaceRole> {
    const work = async (): Promise<WorkspaceRole> => {
      if (await this.members.insertIfAbsent({ workspaceId, userId, role, addedBy: actor?.userId ?? null })) {
        await this.audit.record({
          actor,
          workspaceId,
          action: 'member.added',
          targetType: 'user',
          targetId: userId,
          details: { role, via: 'invitation' },
        });
        return role;
      }
      // Already a member (possibly added a moment ago by a concurrent request): raise, never lower.
      const existing = await this.members.findForUpdate(workspaceId, userId);
      if (!existing) return work(); // removed again between the two statements: add afresh
      if (roleAtLeast(existing.role, role)) return existing.role;
      await this.members.setRole(workspaceId, userId, role);
      await this.audit.record({
        actor,
        workspaceId,
        action: 'member.role_changed',
        targetType: 'user',
        targetId: userId,
        details: { from: existing.role, to: role, via: 'invitation' },
      });
      return role;
    };
    return this.transactions.run(work);
  }

  /**
   * Makes the user's roles in the workspaces single sign-on maps exactly those given (null: no
   * membership), inside the caller's unit of work; an owner's membership is never changed. Answers
   * what changed, and the mapped workspaces that do not exist.
   */
  async applySsoRoles(
    userId: string,
    wanted: ReadonlyMap<string, WorkspaceRole | null>,
    actor: Pick<Principal, 'userId' | 'email'>,
  ): Promise<{ changes: SsoMembershipChange[]; missing: string[] }> {
    const existing = new Set(await this.members.existingWorkspaces([...wanted.keys()]));
    const changes: SsoMembershipChange[] = [];
    for (const [workspaceId, role] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!existing.has(workspaceId)) continue;
      const member = await this.members.findForUpdate(workspaceId, userId);
      const from = member?.role ?? null;
      if (from === role || from === 'owner') continue;
      if (!member) await this.members.insert({ workspaceId, userId, role: role!, addedBy: null });
      else if (role) await this.members.setRole(workspaceId, userId, role);
      else await this.members.delete(workspaceId, userId);
      const action = !member ? 'member.added' : role ? 'member.role_changed' : 'member.removed';
      await this.audit.record({
        actor,
        workspaceId,
        action,
        targetType: 'user',
        targetId: userId,
        details: { from, to: role, via: 'sso' },
      });
      if (!role) await this.apiKeys.revokeAllOf(userId, workspaceId, 'member_removed', actor);
      changes.push({ workspaceId, from, to: role });
    }
    return { changes, missing: [...wanted.keys()].filter((id) => !existing.has(id)) };
  }

  private assertMayGrant(access: WorkspaceAccess, role: WorkspaceRole): void {
    if (role === 'owner') this.assertOwner(access, 'grant the owner role');
  }

  private assertOwner(access: WorkspaceAccess, what: string): void {
    if (access.role !== 'owner')
      throw new DomainError(
        WorkspaceErrors.owner_role_required,
        `Only owners may ${what}; your role is ${access.role}`,
      );
  }

  /** The guard read the caller's role before the locks; an owner demoted meanwhile is an owner no more. */
  private assertStillOwner(access: WorkspaceAccess, caller: Principal, owners: string[], what: string): void {
    this.assertOwner(access, what);
    if (!access.viaSystemAdmin && !owners.includes(caller.userId)) {
      throw new DomainError(
        WorkspaceErrors.owner_role_required,
        `Only owners may ${what}; you are no longer an owner of this workspace`,
      );
    }
  }

  private assertAnotherOwner(owners: string[], userId: string, verb: string): void {
    if (!owners.some((id) => id !== userId)) {
      throw new DomainError(
        WorkspaceErrors.last_owner,
        `Cannot ${verb} the last owner of the workspace; make another member owner first`,
      );
    }
  }
}
