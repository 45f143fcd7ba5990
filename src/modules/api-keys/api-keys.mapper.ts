import { API_KEY_PREFIX } from '#libs/auth/api-key-verifier.js';
import type { ApiKeyRow } from './api-keys.repository.js';
import type { ApiKeyResponse } from './dto/api-key.dto.js';

export function toApiKeyResponse(k: ApiKeyRow): ApiKeyResponse {
  const expired = k.expires_at !== null && new Date(k.expires_at).getTime() <= Date.now();
  return {
    id: k.id,
    workspace_id: k.workspace_id,
    name: k.name,
    prefix: `${API_KEY_PREFIX}${k.prefix}`,
    role: k.role,
    status: k.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
    created_by: k.user_id,
    expires_at: k.expires_at,
    last_used_at: k.last_used_at,
    last_used_ip: k.last_used_ip,
    revoked_at: k.revoked_at,
    revoked_reason: k.revoked_reason,
    created_at: k.created_at,
  };
}
