import { defineErrorCodes } from '#libs/common/error-codes.js';

export const AuthErrors = defineErrorCodes('auth', {
  invalid_credentials: {
    status: 401,
    title: 'Invalid credentials',
    description: 'The email and password do not match an active account.',
  },
  account_deactivated: {
    status: 401,
    title: 'Account deactivated',
    description: 'The account exists but has been deactivated by a system admin.',
  },
  invalid_reset_token: {
    status: 401,
    title: 'Invalid reset token',
    description: 'The password reset token is unknown, already used or expired.',
  },
  invalid_token: {
    status: 401,
    title: 'Invalid token',
    description: 'The token given to /internal/auth/verify is not a live token of this service.',
  },
  unsupported_grant_type: {
    status: 400,
    title: 'Unsupported grant type',
    description: 'grant_type must be `password` or `reset_token`.',
  },
  sso_required: {
    status: 403,
    title: 'Single sign-on required',
    description:
      'Accounts of this e-mail domain sign in through single sign-on (GET /auth/sso/login), not with a password (SSO_REQUIRED_DOMAINS).',
  },
  sso_not_configured: {
    status: 404,
    title: 'Single sign-on not configured',
    description: 'This service has no OpenID Connect issuer configured (SSO_ISSUER_URL, SSO_CLIENT_ID).',
  },
  sso_return_not_allowed: {
    status: 400,
    title: 'Return address not allowed',
    description: 'return_to must be on an origin SSO_RETURN_ORIGINS lists.',
  },
  sso_state_invalid: {
    status: 400,
    title: 'Single sign-on state invalid',
    description:
      "The callback's state does not match the login this browser started (its cookie is missing, altered or older than 10 minutes); start again at GET /auth/sso/login.",
  },
  sso_denied: {
    status: 401,
    title: 'Single sign-on denied',
    description: 'The identity provider answered the login with an error (the user cancelled, or is not allowed).',
  },
  sso_login_failed: {
    status: 401,
    title: 'Single sign-on failed',
    description:
      "The identity provider's answer did not prove the login: the code was refused (reused, expired, wrong PKCE verifier) or the ID token failed its checks (signature, issuer, audience, nonce).",
  },
  sso_identity_unusable: {
    status: 403,
    title: 'Single sign-on identity unusable',
    description: 'The identity provider gave no e-mail address for the user, or said it is not verified.',
  },
  sso_provider_unavailable: {
    status: 502,
    title: 'Identity provider unavailable',
    description: 'The OpenID Connect issuer could not be reached, or its discovery document was invalid.',
  },
});
