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
});
