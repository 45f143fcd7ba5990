import { defineErrorCodes } from '#libs/common/error-codes.js';

export const InvitationErrors = defineErrorCodes('invitations', {
  invitation_pending: {
    status: 409,
    title: 'Invitation already pending',
    description: 'This email already has a pending invitation to the workspace; resend it instead.',
  },
  invitation_not_pending: {
    status: 409,
    title: 'Invitation not pending',
    description: 'Only pending or expired invitations can be resent or revoked.',
  },
  invalid_invitation: {
    status: 401,
    title: 'Invalid invitation',
    description: 'The invitation token is unknown (or was replaced by a resend).',
  },
  invitation_expired: {
    status: 403,
    title: 'Invitation expired',
    description: 'The invitation is past its expiry; ask for it to be resent.',
  },
  invitation_revoked: {
    status: 403,
    title: 'Invitation revoked',
    description: 'The invitation was revoked by a workspace admin.',
  },
  invitation_already_accepted: {
    status: 403,
    title: 'Invitation already accepted',
    description: 'The invitation has been used.',
  },
  invitation_email_mismatch: {
    status: 403,
    title: 'Invitation is for another email',
    description: 'The bearer token belongs to a user other than the one invited.',
  },
  invitation_account_deactivated: {
    status: 403,
    title: 'Account deactivated',
    description: 'The invited email belongs to a deactivated account.',
  },
});
