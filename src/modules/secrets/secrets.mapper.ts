import { strongEtag } from '#libs/common/etag.js';
import type { WorkspaceSecretResponse } from './dto/secret.dto.js';
import type { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';

export function toSecretResponse(s: WorkspaceSecretEntity): WorkspaceSecretResponse {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    name: s.name,
    description: s.description,
    created_by: s.createdBy,
    updated_by: s.updatedBy,
    last_revealed_at: s.lastRevealedAt,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    version: s.version,
  };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function secretEtag(secret: WorkspaceSecretResponse): string {
  return strongEtag('secret', secret.id, secret.version);
}
