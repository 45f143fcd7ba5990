import { strongEtag } from '#libs/common/etag.js';
import type { UserEntity } from './entities/user.entity.js';
import type { UserMembershipResponse, UserResponse } from './dto/user.dto.js';

export function toUserResponse(user: UserEntity): UserResponse {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    system_role: user.systemRole,
    status: user.status,
    has_password: user.passwordChangedAt !== null,
    last_login_at: user.lastLoginAt,
    deactivated_at: user.deactivatedAt,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    version: user.version,
  };
}

export function toMembershipResponse(m: {
  workspaceId: string;
  workspaceName: string;
  role: UserMembershipResponse['role'];
  joinedAt: Date;
}): UserMembershipResponse {
  return { workspace_id: m.workspaceId, workspace_name: m.workspaceName, role: m.role, joined_at: m.joinedAt };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function userEtag(user: UserResponse): string {
  return strongEtag('user', user.id, user.version);
}
