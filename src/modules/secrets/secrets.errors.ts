import { defineErrorCodes } from '#libs/common/error-codes.js';

export const SecretErrors = defineErrorCodes('secrets', {
  secret_name_taken: {
    status: 409,
    title: 'Secret name taken',
    description: 'The workspace already has a secret with this name (compared case-insensitively).',
  },
  unknown_secret: {
    status: 400,
    title: 'Unknown secret',
    description: 'A secret_id in the body names no secret of the workspace.',
  },
  secret_use_requires_admin: {
    status: 403,
    title: 'Using a secret needs an admin',
    description:
      'Pointing a connection, judge or custom op that sends a workspace secret somewhere (setting its secret, or changing the URL it is sent to) is for admins: it decides who receives the key.',
  },
  secret_undecryptable: {
    status: 409,
    title: 'Secret cannot be decrypted',
    description:
      'The stored value does not decrypt with the current ENCRYPTION_KEY (the key changed, or the row was altered); set a new value with PATCH.',
  },
});
