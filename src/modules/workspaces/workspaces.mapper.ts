import type { MemberRow } from './members.repository.js';
import type { WorkspaceView } from './workspaces.repository.js';
import type { WorkspaceMemberResponse } from './dto/member.dto.js';
import type { WorkspaceListItem, WorkspaceResponse } from './dto/workspace.dto.js';

export function toWorkspaceResponse({ workspace: w, role, memberCount }: WorkspaceView): WorkspaceResponse {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    embedding_config: w.embeddingConfig,
    role,
    member_count: memberCount,
    created_by: w.createdBy,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    version: w.version,
  };
}

export function toWorkspaceListItem({ workspace: w, role, memberCount }: WorkspaceView): WorkspaceListItem {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    role,
    member_count: memberCount,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export function toMemberResponse(m: MemberRow): WorkspaceMemberResponse {
  return {
    workspace_id: m.workspaceId,
    user_id: m.userId,
    email: m.email,
    display_name: m.displayName,
    role: m.role,
    user_status: m.userStatus,
    joined_at: m.joinedAt,
    added_by: m.addedBy,
  };
}
