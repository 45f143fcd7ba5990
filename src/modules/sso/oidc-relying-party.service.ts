import { Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { DomainError } from '#libs/common/domain-error.js';
import type { SsoSettings } from '#libs/config/sso-settings.js';
import { SsoErrors } from './sso.errors.js';

/** What the browser's login carries from the start to the callback (sealed in its cookie). */
export interface LoginChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** The identity an ID token (and the userinfo endpoint) proved. */
export interface ProvenIdentity {
  issuer: string;
  subject: string;
  email?: string;
  emailVerified?: boolean;
  name?: string;
  groups: string[];
}

/** How long a discovery answer is kept before it is read again (signing keys rotate through the JWKS, read as needed). */
const DISCOVERY_TTL_MS = 3_600_000;
const TIMEOUT_SECONDS = 10;

/**
 * The service as an OpenID Connect relying party (openid-client): the issuer found by discovery,
 * the authorization code flow with PKCE (S256), state and nonce, the ID token checked (signature,
 * issuer, audience, expiry, nonce) before any claim is believed.
 */
@Injectable()
export class OidcRelyingParty {
  private readonly log = new Logger('OidcRelyingParty');
  private discovered?: { config: Promise<oidc.Configuration>; at: number };

  /** The issuer's configuration, discovered once an hour (a failed discovery is retried at the next login). */
  private configuration(sso: SsoSettings): Promise<oidc.Configuration> {
    if (!this.discovered || Date.now() - this.discovered.at > DISCOVERY_TTL_MS) {
      const config = oidc.discovery(
        sso.issuer,
        sso.clientId,
        undefined,
        sso.clientSecret ? oidc.ClientSecretBasic(sso.clientSecret) : oidc.None(),
        { execute: sso.allowHttpIssuer ? [oidc.allowInsecureRequests] : [], timeout: TIMEOUT_SECONDS },
      );
      this.discovered = { config, at: Date.now() };
      config.catch(() => (this.discovered = undefined));
    }
    return this.discovered.config.catch((err: unknown) => {
      this.log.warn(`discovery of ${sso.issuer.href} failed: ${(err as Error).message}`);
      throw new DomainError(
        SsoErrors.sso_provider_unavailable,
        `The identity provider ${sso.issuer.origin} could not be reached or answered no valid discovery document`,
      );
    });
  }

  /** Fresh state, nonce and PKCE verifier, and the authorization URL to send the browser to. */
  async begin(sso: SsoSettings, redirectUri: string): Promise<{ url: string; checks: LoginChecks }> {
    const config = await this.configuration(sso);
    const checks: LoginChecks = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      redirectUri,
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: sso.scopes,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      state: checks.state,
      nonce: checks.nonce,
    });
    return { url: url.href, checks };
  }

  /**
   * Trades the callback's code for tokens (with the PKCE verifier) and checks the ID token
   * against the login's state and nonce; the userinfo endpoint fills in what the ID token lacks.
   */
  async complete(sso: SsoSettings, callbackUrl: URL, checks: LoginChecks): Promise<ProvenIdentity> {
    const config = await this.configuration(sso);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(
        config,
        callbackUrl,
        {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: checks.redirectUri },
      );
    } catch (err) {
      throw this.failure(err);
    }
    const claims = tokens.claims()!;
    let info: Record<string, unknown> = claims;
    if (claims.email === undefined || claims[sso.groupsClaim] === undefined) {
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub).catch((err: unknown) => {
        throw this.failure(err);
      });
      info = { ...userinfo, ...claims };
    }
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email: typeof info.email === 'string' ? info.email : undefined,
      emailVerified: typeof info.email_verified === 'boolean' ? info.email_verified : undefined,
      name: typeof info.name === 'string' ? info.name : undefined,
      groups: groupsOf(info[sso.groupsClaim]),
    };
  }

  /** The issuer's RP-initiated logout URL, or null when it offers none (or cannot be reached now). */
  async endSessionUrl(sso: SsoSettings): Promise<string | null> {
    let config: oidc.Configuration;
    try {
      config = await this.configuration(sso);
    } catch {
      return null;
    }
    if (!config.serverMetadata().end_session_endpoint) return null;
    return oidc.buildEndSessionUrl(config, {
      client_id: sso.clientId,
      ...(sso.postLogoutRedirectUrl ? { post_logout_redirect_uri: sso.postLogoutRedirectUrl } : {}),
    }).href;
  }

  /** An error of the exchange as the client should see it: the provider's refusal is the login's failure, a network error its absence. */
  private failure(err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    if (err instanceof oidc.AuthorizationResponseError)
      return new DomainError(SsoErrors.sso_denied, `The identity provider refused the login: ${err.error}`);
    if (err instanceof oidc.ResponseBodyError || err instanceof oidc.ClientError || isProtocolError(err)) {
      const reason = err instanceof oidc.ResponseBodyError ? err.error : (err as Error).message;
      return new DomainError(SsoErrors.sso_login_failed, `The single sign-on answer was refused: ${reason}`);
    }
    this.log.warn(`the identity provider could not be reached: ${(err as Error).message}`);
    return new DomainError(SsoErrors.sso_provider_unavailable, 'The identity provider could not be reached');
  }
}

/** oauth4webapi's own checks (a wrong nonce, issuer or audience) throw errors with an OAUTH_ code. */
function isProtocolError(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('OAUTH_');
}

/** A groups claim as a list of names: an array of strings, or one string. */
function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}
