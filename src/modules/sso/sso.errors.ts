import { defineErrorCodes } from '#libs/common/error-codes.js';

export const SsoErrors = defineErrorCodes('sso', {
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
  sso_account_exists: {
    status: 409,
    title: 'Account exists',
    description:
      'An account of this e-mail exists and is not tied to single sign-on; SSO_LINK_EXISTING_ACCOUNTS lets its first SSO login tie it.',
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
