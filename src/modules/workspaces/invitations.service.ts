import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { PasswordHasher } from '#libs/auth/password-hasher.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError, UnauthenticatedError, ValidationFailedError } from '#libs/common/domain-error.js';
import { hashSecretToken, newSecretToken } from '#libs/common/secret-token.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { AppConfig } from '#libs/config/app-config.js';
import { AuthErrors } from '../auth/auth.errors.js';
import { AuthService } from '../auth/auth.service.js';
import { PASSWORD_MIN } from '#libs/auth/password-hasher.js';
import type { MeResponse } from '../auth/dto/auth.dto.js';
import type { UserEntity } from '../users/entities/user.entity.js';
import { UsersService } from '../users/users.service.js';
import type {
  AcceptInvitationRequest,
  CreateInvitationRequest,
  CreateInvitationResponse,
  InvitationResponse,
  ListInvitationsQuery,
} from './dto/invitation.dto.js';
import type { WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';
import { InvitationErrors } from './invitations.errors.js';
import { InvitationsRepository } from './invitations.repository.js';
import { MembersService } from './members.service.js';
import { WorkspaceErrors } from './workspaces.errors.js';
import { stateOf, toInvitationResponse } from './workspaces.mapper.js';

const ACCEPT_PATH =
  'POST /auth/accept-invitation with {"token": "<token>", "password": "…"} (or with the invitee\'s bearer token)';

/**
 * Invitations: a workspace admin invites an email with a role; the token is shown once and
 * stored hashed. Accepting proves control of the invited account (its bearer token or
 * password) or creates the account, then adds the membership, in one transaction.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly config: AppConfig,
    private readonly invitations: InvitationsRepository,
    private readonly membersService: MembersService,
    private readonly usersService: UsersService,
    private readonly auth: AuthService,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListInvitationsQuery): Promise<InvitationResponse[]> {
    return (await this.invitations.list(access.workspaceId, query.state)).map(toInvitationResponse);
  }

  async create(
    access: WorkspaceAccess,
    body: CreateInvitationRequest,
    caller: Principal,
  ): Promise<CreateInvitationResponse> {
    if (body.role === 'owner' && access.role !== 'owner') {
      throw new DomainError(
        WorkspaceErrors.owner_role_required,
        `Only owners may invite owners; your role is ${access.role}`,
      );
    }
    const email = body.email.toLowerCase();
    return this.transactions.run(async () => {
      await this.invitations.lockEmail(access.workspaceId, email);
      const user = await this.usersService.findByEmail(email);
      if (user && (await this.membersService.isMember(access.workspaceId, user.id))) {
        throw new DomainError(WorkspaceErrors.already_member, `${email} is already a member of this workspace`);
      }
      const pending = await this.invitations.findLivePending(access.workspaceId, email);
      if (pending && stateOf(pending) === 'pending') {
        throw new DomainError(
          InvitationErrors.invitation_pending,
          `${email} already has a pending invitation (${pending.id}); resend it instead`,
          { invitation_id: pending.id },
        );
      }
      if (pending) await this.invitations.retireExpired(pending.id);
      const { token, hash } = newSecretToken('inv');
      const invitation = await this.invitations.insert({
        workspaceId: access.workspaceId,
        email,
        role: body.role,
        tokenHash: hash,
        status: 'pending',
        expiresAt: this.expiry(),
        invitedBy: caller.userId,
        sentCount: 1,
        lastSentAt: new Date(),
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'invitation.created',
        targetType: 'invitation',
        targetId: invitation.id,
        details: { email, role: body.role },
      });
      return { ...toInvitationResponse(invitation), token, accept_path: ACCEPT_PATH };
    });
  }

  /** A new token and expiry; the old token stops working. */
  async resend(access: WorkspaceAccess, id: string, caller: Principal): Promise<CreateInvitationResponse> {
    return this.transactions.run(async () => {
      const invitation = await this.requireOpen(access.workspaceId, id, 'resent');
      const { token, hash } = newSecretToken('inv');
      invitation.tokenHash = hash;
      invitation.expiresAt = this.expiry();
      invitation.sentCount += 1;
      invitation.lastSentAt = new Date();
      const saved = await this.invitations.save(invitation);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'invitation.resent',
        targetType: 'invitation',
        targetId: id,
        details: { sent_count: saved.sentCount },
      });
      return { ...toInvitationResponse(saved), token, accept_path: ACCEPT_PATH };
    });
  }

  async revoke(access: WorkspaceAccess, id: string, caller: Principal): Promise<InvitationResponse> {
    return this.transactions.run(async () => {
      const invitation = await this.requireOpen(access.workspaceId, id, 'revoked');
      invitation.status = 'revoked';
      invitation.revokedAt = new Date();
      const saved = await this.invitations.save(invitation);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'invitation.revoked',
        targetType: 'invitation',
        targetId: id,
      });
      return toInvitationResponse(saved);
    });
  }

  async accept(body: AcceptInvitationRequest, caller: Principal | undefined): Promise<MeResponse> {
    const userId = await this.transactions.run(async () => {
      const invitation = await this.invitations.findByTokenHashForUpdate(hashSecretToken(body.token));
      if (!invitation)
        throw new DomainError(
          InvitationErrors.invalid_invitation,
          'The invitation token is unknown or was replaced by a newer one',
        );
      const state = stateOf(invitation);
      if (state === 'expired')
        throw new DomainError(
          InvitationErrors.invitation_expired,
          'The invitation has expired; ask a workspace admin to resend it',
        );
      if (state === 'revoked') throw new DomainError(InvitationErrors.invitation_revoked, 'The invitation was revoked');
      if (state === 'accepted')
        throw new DomainError(InvitationErrors.invitation_already_accepted, 'The invitation has already been accepted');

      const user =
        (await this.existingInvitee(invitation, body, caller)) ?? (await this.newInvitee(invitation, body, caller));
      await this.membersService.addOrUpgradeMember(
        invitation.workspaceId,
        user.id,
        invitation.role,
        caller ?? { userId: user.id, email: user.email },
      );
      invitation.status = 'accepted';
      invitation.acceptedBy = user.id;
      invitation.acceptedAt = new Date();
      await this.invitations.save(invitation);
      await this.audit.record({
        actor: { userId: user.id, email: user.email },
        workspaceId: invitation.workspaceId,
        action: 'invitation.accepted',
        targetType: 'invitation',
        targetId: invitation.id,
        details: { role: invitation.role },
      });
      return user.id;
    });
    return this.auth.me(userId, caller?.tokenExpiresAt);
  }

  /** The invited account, when it exists, after the caller proves it is theirs. */
  private async existingInvitee(
    invitation: WorkspaceInvitationEntity,
    body: AcceptInvitationRequest,
    caller: Principal | undefined,
  ): Promise<UserEntity | null> {
    const user = await this.usersService.findWithPassword(invitation.email);
    if (!user) return null;
    if (user.status !== 'active')
      throw new DomainError(InvitationErrors.invitation_account_deactivated, 'The invited account is deactivated');
    if (caller) {
      if (caller.userId !== user.id)
        throw new DomainError(
          InvitationErrors.invitation_email_mismatch,
          `This invitation is for ${invitation.email}, not for ${caller.email}`,
        );
      return user;
    }
    if (body.password === undefined)
      throw new UnauthenticatedError(
        `An account for ${invitation.email} exists: sign in (bearer token) or give its password`,
      );
    if (!(await this.hasher.verify(user.passwordHash, body.password)))
      throw new DomainError(AuthErrors.invalid_credentials, 'The password is wrong');
    return user;
  }

  private async newInvitee(
    invitation: WorkspaceInvitationEntity,
    body: AcceptInvitationRequest,
    caller: Principal | undefined,
  ): Promise<UserEntity> {
    if (caller)
      throw new DomainError(
        InvitationErrors.invitation_email_mismatch,
        `This invitation is for ${invitation.email}, not for ${caller.email}`,
      );
    if (!body.password || body.password.length < PASSWORD_MIN) {
      throw new ValidationFailedError(
        `A password of at least ${PASSWORD_MIN} characters is required to create the account`,
        [
          {
            field: 'password',
            message: `password must be at least ${PASSWORD_MIN} characters to create the account for ${invitation.email}`,
          },
        ],
      );
    }
    const passwordHash = await this.usersService.hashPassword(body.password);
    return this.usersService.createUser(
      { email: invitation.email, displayName: body.display_name ?? invitation.email.split('@')[0], passwordHash },
      undefined,
    );
  }

  private async requireOpen(workspaceId: string, id: string, verb: string): Promise<WorkspaceInvitationEntity> {
    const invitation = await this.invitations.findForUpdate(workspaceId, id);
    if (!invitation) throw new NotFoundError('invitation', id);
    const state = stateOf(invitation);
    if (state !== 'pending' && state !== 'expired') {
      throw new DomainError(
        InvitationErrors.invitation_not_pending,
        `The invitation is ${state}; only pending or expired invitations can be ${verb}`,
      );
    }
    return invitation;
  }

  private expiry(): Date {
    return new Date(Date.now() + this.config.env.INVITATION_TTL_HOURS * 3_600_000);
  }
}
