import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { AccessRepository } from '#libs/auth/access.repository.js';
import { PasswordHasher } from '#libs/auth/password-hasher.js';
import type { Principal, SystemRole } from '#libs/auth/roles.js';
import { SessionRepository } from '#libs/auth/session.repository.js';
import { DomainError, ForbiddenError, NotFoundError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow, parseSort } from '#libs/common/pagination.js';
import { hashSecretToken, newSecretToken } from '#libs/common/secret-token.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { isUniqueViolation } from '#libs/database/database-errors.js';
import { AppConfig } from '#libs/config/app-config.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import type {
  CreateUserRequest,
  ListUsersQuery,
  ResetTokenResponse,
  UpdateUserRequest,
  UserMembershipResponse,
  UserResponse,
} from './dto/user.dto.js';
import type { UserEntity } from './entities/user.entity.js';
import { UserErrors } from './users.errors.js';
import { toMembershipResponse, toUserResponse, userEtag } from './users.mapper.js';
import { UsersRepository, type UserSort } from './users.repository.js';

const SORTS = { created_at: 'created_at', email: 'email', display_name: 'display_name' } as const satisfies Record<
  string,
  UserSort
>;

export interface NewUser {
  email: string;
  displayName: string;
  /** From `hashPassword`, computed before the unit of work opens: a hash takes 64 MiB and tens of milliseconds. */
  passwordHash: string | null;
  systemRole?: SystemRole;
}

/** System admins manage users; a user may read itself and its memberships. */
@Injectable()
export class UsersService {
  constructor(
    private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionRepository,
    private readonly access: AccessRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async list(query: ListUsersQuery): Promise<Page<UserResponse>> {
    const [rows, total] = await this.users.list(
      { q: query.q, status: query.status, systemRole: query.system_role },
      parseSort(query.sort, SORTS, 'email'),
      pageWindow(query),
    );
    return pageOf(rows, total, query, toUserResponse);
  }

  async get(id: string): Promise<UserResponse> {
    return toUserResponse(await this.require(id));
  }

  /** The hash `createUser` takes; null without a password (the user sets one with a reset token). */
  hashPassword(password: string | undefined | null): Promise<string | null> {
    return password ? this.hasher.hash(password) : Promise.resolve(null);
  }

  /** Also used by workspaces (create a user straight into a workspace) and invitations. */
  async createUser(input: NewUser, actor: Principal | undefined): Promise<UserEntity> {
    if (await this.users.findByEmail(input.email)) throw this.emailTaken(input.email);
    const passwordHash = input.passwordHash;
    let user: UserEntity;
    try {
      user = await this.users.create({
        email: input.email,
        displayName: input.displayName,
        passwordHash,
        systemRole: input.systemRole ?? 'user',
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw this.emailTaken(input.email);
      throw err;
    }
    await this.audit.record({
      actor,
      action: 'user.created',
      targetType: 'user',
      targetId: user.id,
      details: { email: user.email, system_role: user.systemRole, has_password: !!passwordHash },
    });
    return user;
  }

  async create(body: CreateUserRequest, actor: Principal): Promise<UserResponse> {
    const passwordHash = await this.hashPassword(body.password);
    const user = await this.transactions.run(() =>
      this.createUser(
        { email: body.email, displayName: body.display_name, passwordHash, systemRole: body.system_role },
        actor,
      ),
    );
    return toUserResponse(user);
  }

  async update(
    id: string,
    body: UpdateUserRequest,
    ifMatch: IfMatchPrecondition,
    actor: Principal,
  ): Promise<UserResponse> {
    return this.transactions.run(async () => {
      // A role change locks the admin set before the user row: the same order as deactivate, so no deadlock.
      const admins = body.system_role !== undefined ? await this.lockAdminsAsActor(actor) : undefined;
      const user = await this.requireLocked(id);
      ifMatch.check(userEtag(toUserResponse(user)));
      const changes: Record<string, unknown> = {};
      if (body.email !== undefined && body.email.toLowerCase() !== user.email) {
        const other = await this.users.findByEmail(body.email);
        if (other && other.id !== user.id) throw this.emailTaken(body.email);
        changes.email = { from: user.email, to: body.email.toLowerCase() };
        user.email = body.email.toLowerCase();
      }
      if (body.display_name !== undefined && body.display_name !== user.displayName) {
        changes.display_name = { from: user.displayName, to: body.display_name };
        user.displayName = body.display_name;
      }
      if (body.system_role !== undefined && body.system_role !== user.systemRole) {
        if (user.systemRole === 'admin' && user.status === 'active')
          this.assertAnotherActiveAdmin(user.id, admins!, 'demote');
        await this.audit.record({
          actor,
          action: 'user.system_role_changed',
          targetType: 'user',
          targetId: user.id,
          details: { from: user.systemRole, to: body.system_role },
        });
        user.systemRole = body.system_role;
      }
      if (Object.keys(changes).length === 0 && body.system_role === undefined) return toUserResponse(user);
      const saved = await this.users.save(user).catch((err: unknown) => {
        throw isUniqueViolation(err) ? this.emailTaken(body.email!) : err;
      });
      if (Object.keys(changes).length)
        await this.audit.record({
          actor,
          action: 'user.updated',
          targetType: 'user',
          targetId: user.id,
          details: changes,
        });
      return toUserResponse(saved);
    });
  }

  /** Deactivation revokes every token, API key and unused reset token of the user at once. Idempotent. */
  async deactivate(id: string, actor: Principal): Promise<UserResponse> {
    return this.transactions.run(async () => {
      const admins = await this.lockAdminsAsActor(actor);
      const user = await this.requireLocked(id);
      if (user.status === 'deactivated') return toUserResponse(user);
      if (user.id === actor.userId)
        throw new DomainError(UserErrors.self_deactivation, 'You cannot deactivate your own account');
      if (user.systemRole === 'admin') this.assertAnotherActiveAdmin(user.id, admins, 'deactivate');
      user.status = 'deactivated';
      user.deactivatedAt = new Date();
      const saved = await this.users.save(user);
      await this.users.invalidateResetTokens(user.id);
      const revoked = await this.sessions.revokeAllOf(user.id, 'deactivated');
      const keysRevoked = await this.apiKeys.revokeAllOf(user.id, null, 'user_deactivated', actor);
      await this.audit.record({
        actor,
        action: 'user.deactivated',
        targetType: 'user',
        targetId: user.id,
        details: { tokens_revoked: revoked, api_keys_revoked: keysRevoked },
      });
      return toUserResponse(saved);
    });
  }

  async reactivate(id: string, actor: Principal): Promise<UserResponse> {
    return this.transactions.run(async () => {
      const user = await this.requireLocked(id);
      if (user.status === 'active') return toUserResponse(user);
      user.status = 'active';
      user.deactivatedAt = null;
      const saved = await this.users.save(user);
      await this.audit.record({ actor, action: 'user.reactivated', targetType: 'user', targetId: user.id });
      return toUserResponse(saved);
    });
  }

  /** Sets the password; every token of the user is revoked (they log in again). */
  async resetPassword(id: string, password: string, actor: Principal): Promise<UserResponse> {
    const hash = await this.hasher.hash(password);
    return this.transactions.run(async () => {
      const user = await this.requireLocked(id);
      await this.users.setPassword(user.id, hash);
      await this.users.invalidateResetTokens(user.id);
      const revoked = await this.sessions.revokeAllOf(user.id, 'password_reset');
      await this.audit.record({
        actor,
        action: 'user.password_reset',
        targetType: 'user',
        targetId: user.id,
        details: { tokens_revoked: revoked },
      });
      return toUserResponse((await this.users.findByIdForUpdate(user.id))!);
    });
  }

  /** A one-time token the user redeems at POST /auth/token; earlier unused ones stop working. */
  async issueResetToken(userId: string, actor: Principal | undefined): Promise<{ token: string; expiresAt: Date }> {
    const work = async () => {
      const user = await this.requireLocked(userId);
      const { token, hash } = newSecretToken('rst');
      const expiresAt = new Date(Date.now() + this.config.env.RESET_TOKEN_TTL_MINUTES * 60_000);
      await this.users.invalidateResetTokens(user.id);
      await this.users.createResetToken({
        userId: user.id,
        tokenHash: hash,
        expiresAt,
        createdBy: actor?.userId ?? null,
      });
      await this.audit.record({
        actor,
        action: 'user.reset_token_issued',
        targetType: 'user',
        targetId: user.id,
        details: { expires_at: expiresAt.toISOString() },
      });
      return { token, expiresAt };
    };
    return this.transactions.run(work);
  }

  async resetToken(id: string, actor: Principal): Promise<ResetTokenResponse> {
    const { token, expiresAt } = await this.issueResetToken(id, actor);
    return {
      user_id: id,
      reset_token: token,
      expires_at: expiresAt,
      usage:
        'POST /auth/token with {"grant_type": "reset_token", "reset_token": "<this token>", "new_password": "<8 to 256 characters>"}; it works once',
    };
  }

  // For other families (auth, workspaces): users are read and changed here, never through the table.

  /** The user, or null. */
  find(id: string): Promise<UserEntity | null> {
    return this.users.findById(id);
  }

  /** The user of this email (compared case-insensitively), or null. */
  /** The users with these ids (those that exist), in no order. */
  findMany(ids: string[]): Promise<UserEntity[]> {
    return this.users.findByIds(ids);
  }

  /** Active users not among `excluded` whose email or name contains q (workspace member candidates). */
  candidates(
    excluded: string[],
    q: string | undefined,
    limit: number,
  ): Promise<Array<{ id: string; email: string; display_name: string }>> {
    return this.users.candidates(excluded, q, limit);
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findByEmail(email);
  }

  /** The user of this email with its password hash (for a login, or proving an invited account), or null. */
  findWithPassword(email: string): Promise<UserEntity | null> {
    return this.users.findByEmailWithPassword(email);
  }

  /** The user, its row locked for the caller's unit of work, or null. */
  findLocked(id: string): Promise<UserEntity | null> {
    return this.users.findByIdForUpdate(id);
  }

  /** Notes a login now. */
  recordLogin(id: string): Promise<void> {
    return this.users.markLogin(id);
  }

  /** Spends a live one-time reset token (as given to the user): its user id; null when unknown, used or expired. */
  consumeResetToken(token: string): Promise<string | null> {
    return this.users.consumeResetToken(hashSecretToken(token));
  }

  /** Stores a password hash from `hashPassword` (the caller revokes sessions and audits). */
  setPasswordHash(id: string, passwordHash: string): Promise<void> {
    return this.users.setPassword(id, passwordHash);
  }

  /** The user signed in through SSO as this issuer's subject, its row locked for the caller's unit of work, or null. */
  findBySsoIdentityLocked(issuer: string, subject: string): Promise<UserEntity | null> {
    return this.users.findBySsoIdentityForUpdate(issuer, subject);
  }

  /** Ties the user to an SSO identity (first SSO login of an existing account, or a new one); audited. */
  async linkSsoIdentity(
    user: UserEntity,
    issuer: string,
    subject: string,
    actor: Pick<Principal, 'userId' | 'email'> | undefined,
  ): Promise<void> {
    if (user.ssoSubject !== null && (user.ssoIssuer !== issuer || user.ssoSubject !== subject))
      throw new DomainError(
        UserErrors.sso_identity_conflict,
        `${user.email} is already tied to another single sign-on identity; a system admin must resolve it`,
      );
    await this.users.setSsoIdentity(user.id, issuer, subject);
    user.ssoIssuer = issuer;
    user.ssoSubject = subject;
    await this.audit.record({
      actor,
      action: 'user.sso_linked',
      targetType: 'user',
      targetId: user.id,
      details: { issuer, subject },
    });
  }

  /** Locks the active admins (before any user row, as every role change does) and answers their ids. */
  lockActiveAdmins(): Promise<string[]> {
    return this.users.lockActiveAdmins();
  }

  /**
   * Sets the system role an SSO login maps the user to, inside the caller's unit of work, the
   * admins locked first (`lockActiveAdmins`); a demotion that would leave no active admin is not
   * made. Answers the change, or null.
   */
  async applySsoSystemRole(
    user: UserEntity,
    role: SystemRole,
    activeAdmins: string[],
    actor: Pick<Principal, 'userId' | 'email'> | undefined,
  ): Promise<{ from: SystemRole; to: SystemRole } | null> {
    if (user.systemRole === role) return null;
    if (user.systemRole === 'admin' && user.status === 'active' && !activeAdmins.some((id) => id !== user.id))
      return null;
    const change = { from: user.systemRole, to: role };
    user.systemRole = role;
    await this.users.save(user);
    await this.audit.record({
      actor,
      action: 'user.system_role_changed',
      targetType: 'user',
      targetId: user.id,
      details: { ...change, via: 'sso' },
    });
    return change;
  }

  async memberships(id: string): Promise<UserMembershipResponse[]> {
    await this.require(id);
    return (await this.access.membershipsOf(id)).map(toMembershipResponse);
  }

  private async require(id: string): Promise<UserEntity> {
    const user = await this.users.findById(id);
    if (!user) throw new NotFoundError('user', id);
    return user;
  }

  private async requireLocked(id: string): Promise<UserEntity> {
    const user = await this.users.findByIdForUpdate(id);
    if (!user) throw new NotFoundError('user', id);
    return user;
  }

  /**
   * Locks the active admins (always before any user row, in id order) and checks the actor is
   * still one of them: two admins demoting or deactivating each other at once cannot both win.
   */
  private async lockAdminsAsActor(actor: Principal): Promise<string[]> {
    const admins = await this.users.lockActiveAdmins();
    if (!admins.includes(actor.userId)) throw new ForbiddenError('You are no longer an active system admin');
    return admins;
  }

  private assertAnotherActiveAdmin(userId: string, activeAdmins: string[], verb: string): void {
    if (!activeAdmins.some((id) => id !== userId)) {
      throw new DomainError(
        UserErrors.last_admin,
        `Cannot ${verb} the last active system admin; make another user admin first`,
      );
    }
  }

  private emailTaken(email: string): DomainError {
    return new DomainError(UserErrors.email_taken, `A user with email ${email.toLowerCase()} already exists`);
  }
}
