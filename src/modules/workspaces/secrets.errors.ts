import { defineErrorCodes } from '../../../libs/common/error-codes.js';

export const SecretErrors = defineErrorCodes('secrets', {
  secret_name_taken: { status: 409, title: 'Secret name taken', description: 'The workspace already has a secret with this name (compared case-insensitively).' },
  secret_undecryptable: {
    status: 409,
    title: 'Secret cannot be decrypted',
    description: 'The stored value does not decrypt with the current ENCRYPTION_KEY (the key changed, or the row was altered); set a new value with PATCH.',
  },
});
