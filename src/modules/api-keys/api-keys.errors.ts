import { defineErrorCodes } from '#libs/common/error-codes.js';

export const ApiKeyErrors = defineErrorCodes('api-keys', {
  api_key_role_too_high: {
    status: 403,
    title: 'Key role above yours',
    description: "An API key's role cannot be higher than its creator's role in the workspace.",
  },
  api_key_limit_reached: {
    status: 409,
    title: 'Too many API keys',
    description: 'The creator already has the most active keys allowed in this workspace (`limit`); revoke one first.',
  },
});
