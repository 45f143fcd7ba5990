import { defineErrorCodes } from '#libs/common/error-codes.js';

export const WorkspaceErrors = defineErrorCodes('workspaces', {
  last_owner: {
    status: 409,
    title: 'Last owner',
    description: 'A workspace keeps at least one owner: promote another member to owner first.',
  },
  already_member: {
    status: 409,
    title: 'Already a member',
    description: 'The user is already a member of this workspace; change their role instead.',
  },
  user_deactivated: {
    status: 409,
    title: 'User deactivated',
    description: 'A deactivated user cannot be added to a workspace.',
  },
  owner_role_required: {
    status: 403,
    title: 'Owner role required',
    description: 'Only owners may grant the owner role or change or remove an owner.',
  },
});
