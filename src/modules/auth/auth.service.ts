import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { AccessRepository } from '#libs/auth/access.repository.js';
import { PasswordHasher } from '#libs/auth/password-hasher.js';
import { lowerRole, type Principal } from '#libs/auth/roles.js';
import { SessionRepository } from '#libs/auth/session.repository.js';
import { TokenSigner } from '#libs/auth/token-signer.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { UserEntity } from '../users/entities/user.entity.js';
import type { UserMembershipResponse } from '../users/dto/user.dto.js';
import { toMembershipResponse, toUserResponse } from '../users/users.mapper.js';
import { UsersService } from '../users/users.service.js';
import { AuthErrors } from './auth.errors.js';
import { LoginThrottleRepository } from './auth.repository.js';
import type { MeResponse, TokenRequest, TokenResponse, VerifyResponse } from './dto/auth.dto.js';

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

@Injectable()
export class AuthService {
  constructor(
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly signer: TokenSigner,
    private readonly sessions: SessionRepository,
    private readonly access: AccessRepository,
    private readonly throttle: LoginThrottleRepository,
    private readonly audit: AuditService,
  ) {}

  async token(request: TokenRequest, client: ClientInfo): Promise<TokenResponse> {
    const grant = request.grant_type ?? 'password';
    if (grant === 'reset_token') return this.resetWithToken(request, client);
    const email = (request.email ?? request.username ?? '').trim();
    const missing = [!email && 'email', !request.password && 'password'].filter(Boolean) as string[];
    if (missing.length) {
      throw new ValidationFailedError(
        `${missing.join(' and ')} required`,
        missing.map((field) => ({ field, message: `${field} is required` })),
      );
    }
    this.assertPasswordAllowed(email);
    return this.login(email, request.password!, client);
  }

  /** SSO_REQUIRED_DOMAINS: those accounts prove who they are at the identity provider, never with a password here. */
  private assertPasswordAllowed(email: string): void {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (email.includes('@') && this.config.ssoRequiredDomains.has(domain))
      throw new DomainError(
        AuthErrors.sso_required,
        `Accounts of ${domain} sign in with single sign-on: open GET /auth/sso/login in a browser`,
      );
  }

  /**
   * Password login, throttled per email and client address: LOGIN_MAX_FAILURES failures, then
   * 429. The attempt is counted before the password is checked, so a locked key costs no hash
   * and parallel guesses cannot slip past the count.
   */
  private async login(email: string, password: string, client: ClientInfo): Promise<TokenResponse> {
    this.hasher.ensureCapacity();
    const key = `${email.toLowerCase()}|${client.ip ?? 'unknown'}`;
    const max = this.config.env.LOGIN_MAX_FAILURES;
    const locked = await this.throttle.beginAttempt(key, max, this.config.env.LOGIN_LOCKOUT_SECONDS);
    if (locked > 0) throw this.throttled(locked);
    const user = await this.users.findWithPassword(email);
    let valid: boolean;
    try {
      valid = await this.hasher.verify(user?.passwordHash, password);
    } catch (err) {
      // Refused for load (auth_busy): the password was never judged, so the attempt must not count.
      await this.throttle.refundAttempt(key, max);
      throw err;
    }
    if (!user || !valid) {
      await this.audit.record({
        action: 'auth.login_failed',
        targetType: 'user',
        targetId: user?.id ?? null,
        details: { email: email.toLowerCase(), ip: client.ip },
      });
      throw new DomainError(AuthErrors.invalid_credentials, 'The email or password is wrong');
    }
    await this.throttle.clear(key);
    if (user.status !== 'active')
      throw new DomainError(
        AuthErrors.account_deactivated,
        'This account is deactivated; ask a system admin to reactivate it',
      );
    return this.issue(user, client, 'auth.login');
  }

  private throttled(seconds: number): DomainError {
    return new DomainError(
      CommonErrors.rate_limited,
      `Too many failed logins; try again in ${seconds} seconds`,
      { retry_after_seconds: seconds },
      { 'Retry-After': String(seconds) },
    );
  }

  /** Sets a new password with a one-time reset token; every earlier token of the user is revoked. */
  private async resetWithToken(request: TokenRequest, client: ClientInfo): Promise<TokenResponse> {
    const missing = [!request.reset_token && 'reset_token', !request.new_password && 'new_password'].filter(
      Boolean,
    ) as string[];
    if (missing.length) {
      throw new ValidationFailedError(
        `${missing.join(' and ')} required`,
        missing.map((field) => ({ field, message: `${field} is required for grant_type reset_token` })),
      );
    }
    const hash = await this.hasher.hash(request.new_password!);
    const user = await this.transactions.run(async () => {
      const userId = await this.users.consumeResetToken(request.reset_token!);
      if (!userId)
        throw new DomainError(AuthErrors.invalid_reset_token, 'The reset token is unknown, already used or expired');
      const found = await this.users.findLocked(userId);
      if (!found || found.status !== 'active')
        throw new DomainError(AuthErrors.account_deactivated, 'This account is deactivated');
      this.assertPasswordAllowed(found.email);
      await this.users.setPasswordHash(userId, hash);
      await this.sessions.revokeAllOf(userId, 'password_reset');
      await this.audit.record({
        actor: { userId, email: found.email },
        action: 'user.password_reset_with_token',
        targetType: 'user',
        targetId: userId,
      });
      return found;
    });
    return this.issue(user, client, 'auth.login');
  }

  /** A session token for a user whose identity another way proved (single sign-on); audited as `action`. */
  issueFor(
    user: UserEntity,
    client: ClientInfo,
    action: string,
    details: Record<string, unknown> = {},
  ): Promise<TokenResponse> {
    return this.issue(user, client, action, details);
  }

  private async issue(
    user: UserEntity,
    client: ClientInfo,
    action: string,
    extra: Record<string, unknown> = {},
  ): Promise<TokenResponse> {
    const signed = this.signer.sign(user.id);
    await this.sessions.create({
      id: signed.tokenId,
      userId: user.id,
      expiresAt: signed.expiresAt,
      ip: client.ip,
      userAgent: client.userAgent,
    });
    await this.users.recordLogin(user.id);
    await this.audit.record({
      actor: { userId: user.id, email: user.email },
      action,
      targetType: 'user',
      targetId: user.id,
      details: { token_id: signed.tokenId, ip: client.ip, ...extra },
    });
    return {
      access_token: signed.token,
      token_type: 'bearer',
      expires_in: signed.ttlSeconds,
      expires_at: signed.expiresAt,
      user_id: user.id,
    };
  }

  async logout(principal: Principal): Promise<void> {
    await this.sessions.revoke(principal.tokenId, 'logout');
    await this.audit.record({
      actor: principal,
      action: 'auth.logout',
      targetType: 'user',
      targetId: principal.userId,
      details: { token_id: principal.tokenId },
    });
  }

  /** With an API key, the memberships are the key's workspace only, at the key's effective role. */
  async me(userId: string, tokenExpiresAt?: Date, apiKey?: Principal['apiKey']): Promise<MeResponse> {
    const user = await this.users.find(userId);
    if (!user) throw new DomainError(CommonErrors.unauthenticated, 'The user of this token no longer exists');
    const memberships = await this.memberships(user.id, apiKey?.workspaceId);
    return {
      ...toUserResponse(user),
      ...(apiKey ? { system_role: 'user' as const } : {}),
      memberships: apiKey ? memberships.map((m) => ({ ...m, role: lowerRole(m.role, apiKey.role) })) : memberships,
      ...(tokenExpiresAt ? { token_expires_at: tokenExpiresAt } : {}),
    };
  }

  /** Token introspection for other internal services (a gateway): 401 unless the token is live. */
  async verify(token: string): Promise<VerifyResponse> {
    const claims = this.signer.verify(token);
    const session = claims?.jti ? await this.access.findActiveSession(claims.jti) : undefined;
    if (!claims || !session || session.userId !== claims.sub) {
      throw new DomainError(
        AuthErrors.invalid_token,
        'The token is not valid: malformed, expired, revoked, or its user is deactivated',
      );
    }
    return {
      active: true,
      user_id: session.userId,
      email: session.email,
      display_name: session.displayName,
      system_role: session.systemRole,
      token_id: claims.jti,
      expires_at: session.expiresAt,
      memberships: await this.memberships(session.userId),
    };
  }

  private async memberships(userId: string, workspaceId?: string): Promise<UserMembershipResponse[]> {
    return (await this.access.membershipsOf(userId, workspaceId)).map(toMembershipResponse);
  }
}
