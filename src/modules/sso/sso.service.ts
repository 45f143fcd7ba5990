import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { SsoSettings } from '#libs/config/sso-settings.js';
import { AuthService, type ClientInfo } from '../auth/auth.service.js';
import type { TokenResponse } from '../auth/dto/auth.dto.js';
import type { SsoCallbackQuery, SsoLoginQuery, SsoLogoutResponse } from './dto/sso.dto.js';
import { OidcRelyingParty } from './oidc-relying-party.service.js';
import { SsoLoginCookie } from './sso-login-cookie.js';
import { SsoProvisioningService } from './sso-provisioning.service.js';
import { SsoErrors } from './sso.errors.js';

/** What the callback ends with: the token, and where the browser takes it (when the login named a place). */
export interface SsoCompletion {
  token: TokenResponse;
  returnTo?: string;
}

/**
 * Single sign-on through the configured OpenID Connect issuer: the login sends the browser there
 * with a sealed cookie holding state, nonce and PKCE verifier; the callback proves the identity,
 * provisions the account and its roles, and issues the service's own session token.
 */
@Injectable()
export class SsoService {
  private readonly cookies: SsoLoginCookie;

  constructor(
    private readonly config: AppConfig,
    private readonly relyingParty: OidcRelyingParty,
    private readonly provisioning: SsoProvisioningService,
    private readonly auth: AuthService,
    private readonly audit: AuditService,
  ) {
    this.cookies = new SsoLoginCookie(config.keys.jwtSecret);
  }

  private settings(): SsoSettings {
    if (!this.config.sso)
      throw new DomainError(
        SsoErrors.sso_not_configured,
        'Single sign-on is not configured on this service (SSO_ISSUER_URL, SSO_CLIENT_ID)',
      );
    return this.config.sso;
  }

  /** Where to send the browser, and the sealed cookie it must bring back to the callback. */
  async begin(query: SsoLoginQuery, origin: string): Promise<{ location: string; cookie: string; secure: boolean }> {
    const sso = this.settings();
    if (query.return_to !== undefined && !sso.returnOrigins.has(new URL(query.return_to).origin))
      throw new DomainError(
        SsoErrors.sso_return_not_allowed,
        `return_to must be on one of the origins SSO_RETURN_ORIGINS lists${sso.returnOrigins.size ? `: ${[...sso.returnOrigins].join(', ')}` : ' (none are)'}`,
      );
    const base = (this.config.env.PUBLIC_BASE_URL ?? origin).replace(/\/+$/, '');
    const { url, checks } = await this.relyingParty.begin(sso, sso.redirectUrl ?? `${base}/auth/sso/callback`);
    return {
      location: url,
      cookie: this.cookies.seal({ ...checks, returnTo: query.return_to }),
      secure: checks.redirectUri.startsWith('https:'),
    };
  }

  async complete(query: SsoCallbackQuery, cookie: string | undefined, client: ClientInfo): Promise<SsoCompletion> {
    const sso = this.settings();
    const login = this.cookies.open(cookie);
    if (!login || !query.state || query.state !== login.state) {
      await this.failed(client, 'state_invalid');
      throw new DomainError(
        SsoErrors.sso_state_invalid,
        login
          ? 'The state returned by the identity provider is not the one this login started with'
          : 'This browser started no single sign-on login in the last 10 minutes (its login cookie is missing, altered or expired)',
      );
    }
    const callbackUrl = new URL(login.redirectUri);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) callbackUrl.searchParams.set(name, value);
    let identity;
    try {
      identity = await this.relyingParty.complete(sso, callbackUrl, login);
    } catch (err) {
      if (err instanceof DomainError) await this.failed(client, err.code, err.message);
      throw err;
    }
    const signIn = await this.provisioning.signIn(identity, sso).catch(async (err: unknown) => {
      // The refusal's transaction is rolled back: its record is written on its own.
      if (err instanceof DomainError)
        await this.failed(client, err.code, `${identity.issuer} ${identity.subject}: ${err.detail}`);
      throw err;
    });
    const token = await this.auth.issueFor(signIn.user, client, 'auth.sso_login', {
      issuer: identity.issuer,
      subject: identity.subject,
      groups: identity.groups.slice(0, 100),
      created: signIn.created,
      system_role_change: signIn.systemRole,
      membership_changes: signIn.memberships.map((c) => ({ workspace_id: c.workspaceId, from: c.from, to: c.to })),
      missing_workspaces: signIn.missingWorkspaces,
    });
    return { token, returnTo: login.returnTo };
  }

  /** Revokes the token of this call; answers the provider's logout URL for the browser to open next. */
  async logout(principal: Principal): Promise<SsoLogoutResponse> {
    await this.auth.logout(principal);
    return {
      logged_out: true,
      end_session_url: this.config.sso ? await this.relyingParty.endSessionUrl(this.config.sso) : null,
    };
  }

  private async failed(client: ClientInfo, reason: string, detail?: string): Promise<void> {
    await this.audit.record({
      action: 'auth.sso_login_failed',
      targetType: 'user',
      details: { reason, ...(detail ? { detail: detail.slice(0, 500) } : {}), ip: client.ip },
    });
  }
}
