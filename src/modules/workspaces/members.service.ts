import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../../../libs/audit/audit.service.js';
import { roleAtLeast, type Principal, type WorkspaceAccess, type WorkspaceRole } from '../../../libs/auth/roles.js';
import { DomainError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../../libs/common/domain-error.js';
import { TransactionRunner } from '../../../libs/database/transaction-runner.js';
import { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import type { AddMemberRequest, CreateWorkspaceUserRequest, UserCandidatesQuery, WorkspaceMemberResponse, WorkspaceUserCandidateResponse } from './dto/member.dto.js';
import { MembersRepository } from './members.repository.js';
import { WorkspaceErrors } from './workspaces.errors.js';
import { toMemberResponse } from './workspaces.mapper.js';

/**
 * Membership rules: admins manage members; only owners grant `owner` or change or remove an
 * owner; anyone may leave; a workspace always keeps one owner.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly users: UsersRepository,
    private readonly usersService: UsersService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess): Promise<WorkspaceMemberResponse[]> {
    return (await this.members.list(access.workspaceId)).map(toMemberResponse);
  }

  async add(access: WorkspaceAccess, body: AddMemberRequest, caller: Principal): Promise<WorkspaceMemberResponse> {
    if ((body.user_id === undefined) === (body.email === undefined)) {
      throw new ValidationFailedError('Give exactly one of user_id or email', [{ field: 'user_id', message: 'give exactly one of user_id or email' }]);
    }
    this.assertMayGrant(access, body.role);
    const user = body.user_id ? await this.users.findById(body.user_id) : await this.users.findByEmail(body.email!);
    if (!user) throw new NotFoundError('user', body.user_id ?? body.email);
    if (user.status !== 'active') throw new DomainError(WorkspaceErrors.user_deactivated, `User ${user.email} is deactivated`);
    return this.transactions.run(async (manager) => {
      if (await this.members.find(access.workspaceId, user.id, manager)) {
        throw new DomainError(WorkspaceErrors.already_member, `${user.email} is already a member; change their role with PATCH`);
      }
      await this.members.insert({ workspaceId: access.workspaceId, userId: user.id, role: body.role, addedBy: caller.userId }, manager);
      await this.audit.record({ actor: caller, workspaceId: access.workspaceId, action: 'member.added', targetType: 'user', targetId: user.id, details: { role: body.role } }, manager);
      return toMemberResponse((await this.members.find(access.workspaceId, user.id, manager))!);
    });
  }

  async changeRole(access: WorkspaceAccess, userId: string, role: WorkspaceRole, caller: Principal): Promise<WorkspaceMemberResponse> {
    return this.transactions.run(async (manager) => {
      const member = await this.members.findForUpdate(access.workspaceId, userId, manager);
      if (!member) throw new NotFoundError('member', userId);
      if (member.role === role) return toMemberResponse((await this.members.find(access.workspaceId, userId, manager))!);
      if (member.role === 'owner' || role === 'owner') this.assertOwner(access, 'change the role of an owner or grant owner');
      if (member.role === 'owner') await this.assertAnotherOwner(access.workspaceId, userId, manager, 'demote');
      await this.members.setRole(access.workspaceId, userId, role, manager);
      await this.audit.record({ actor: caller, workspaceId: access.workspaceId, action: 'member.role_changed', targetType: 'user', targetId: userId, details: { from: member.role, to: role } }, manager);
      return toMemberResponse((await this.members.find(access.workspaceId, userId, manager))!);
    });
  }

  /** Admins remove others; anyone may remove themselves (leave). */
  async remove(access: WorkspaceAccess, userId: string, caller: Principal): Promise<void> {
    const leaving = userId === caller.userId;
    if (!leaving && !roleAtLeast(access.role, 'admin')) throw new ForbiddenError(`Removing other members needs the admin role or above; yours is ${access.role}`);
    await this.transactions.run(async (manager) => {
      const member = await this.members.findForUpdate(access.workspaceId, userId, manager);
      if (!member) throw new NotFoundError('member', userId);
      if (member.role === 'owner') {
        if (!leaving) this.assertOwner(access, 'remove an owner');
        await this.assertAnotherOwner(access.workspaceId, userId, manager, 'remove');
      }
      await this.members.delete(access.workspaceId, userId, manager);
      await this.audit.record({ actor: caller, workspaceId: access.workspaceId, action: leaving ? 'member.left' : 'member.removed', targetType: 'user', targetId: userId, details: { role: member.role } }, manager);
    });
  }

  /** Creates a user straight into the workspace; without a password the response carries a one-time reset token. */
  async createUser(access: WorkspaceAccess, body: CreateWorkspaceUserRequest, caller: Principal): Promise<WorkspaceMemberResponse> {
    this.assertMayGrant(access, body.role);
    return this.transactions.run(async (manager) => {
      const user = await this.usersService.createUser({ email: body.email, displayName: body.display_name, password: body.password }, caller, manager);
      await this.members.insert({ workspaceId: access.workspaceId, userId: user.id, role: body.role, addedBy: caller.userId }, manager);
      await this.audit.record({ actor: caller, workspaceId: access.workspaceId, action: 'workspace.user_created', targetType: 'user', targetId: user.id, details: { role: body.role } }, manager);
      const response = toMemberResponse((await this.members.find(access.workspaceId, user.id, manager))!);
      if (body.password) return response;
      const reset = await this.usersService.issueResetToken(user.id, caller, manager);
      return { ...response, reset_token: reset.token, reset_token_expires_at: reset.expiresAt };
    });
  }

  async candidates(access: WorkspaceAccess, query: UserCandidatesQuery): Promise<WorkspaceUserCandidateResponse[]> {
    return this.members.candidates(access.workspaceId, query.q, query.limit);
  }

  /** For accepted invitations: adds the membership, or raises an existing role (never lowers it). */
  async addOrUpgradeMember(workspaceId: string, userId: string, role: WorkspaceRole, actor: Pick<Principal, 'userId' | 'email'> | undefined, manager: EntityManager): Promise<void> {
    const existing = await this.members.findForUpdate(workspaceId, userId, manager);
    if (!existing) {
      await this.members.insert({ workspaceId, userId, role, addedBy: actor?.userId ?? null }, manager);
      await this.audit.record({ actor, workspaceId, action: 'member.added', targetType: 'user', targetId: userId, details: { role, via: 'invitation' } }, manager);
    } else if (!roleAtLeast(existing.role, role)) {
      await this.members.setRole(workspaceId, userId, role, manager);
      await this.audit.record({ actor, workspaceId, action: 'member.role_changed', targetType: 'user', targetId: userId, details: { from: existing.role, to: role, via: 'invitation' } }, manager);
    }
  }

  private assertMayGrant(access: WorkspaceAccess, role: WorkspaceRole): void {
    if (role === 'owner') this.assertOwner(access, 'grant the owner role');
  }

  private assertOwner(access: WorkspaceAccess, what: string): void {
    if (access.role !== 'owner') throw new DomainError(WorkspaceErrors.owner_role_required, `Only owners may ${what}; your role is ${access.role}`);
  }

  private async assertAnotherOwner(workspaceId: string, userId: string, manager: EntityManager, verb: string): Promise<void> {
    const owners = await this.members.lockOwners(workspaceId, manager);
    if (!owners.some((id) => id !== userId)) {
      throw new DomainError(WorkspaceErrors.last_owner, `Cannot ${verb} the last owner of the workspace; make another member owner first`);
    }
  }
}
