import { defineErrorCodes } from '#libs/common/error-codes.js';

export const UserErrors = defineErrorCodes('users', {
  email_taken: {
    status: 409,
    title: 'Email already registered',
    description: 'Another user already has this email (compared case-insensitively).',
  },
  last_admin: {
    status: 409,
    title: 'Last system admin',
    description: 'The change would leave the service without an active system admin.',
  },
  sso_identity_conflict: {
    status: 409,
    title: 'Single sign-on identity conflict',
    description:
      'The account of this e-mail is already tied to another single sign-on identity (issuer and subject); a system admin must resolve it.',
  },
  self_deactivation: {
    status: 409,
    title: 'Cannot deactivate yourself',
    description: 'A system admin cannot deactivate their own account; ask another admin.',
  },
});
