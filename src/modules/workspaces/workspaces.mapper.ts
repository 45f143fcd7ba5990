import { strongEtag } from '#libs/common/etag.js';
import type { MemberRow } from './members.repository.js';
import type { WorkspaceView } from './workspaces.repository.js';
import type { WorkspaceMemberResponse } from './dto/member.dto.js';
import type { WorkspaceListItem, WorkspaceResponse } from './dto/workspace.dto.js';
import type { InvitationResponse } from './dto/invitation.dto.js';
import type { InvitationState, WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';

/** An invitation's state: a pending one past its expiry shows as expired. */
export function stateOf(invitation: WorkspaceInvitationEntity, now = new Date()): InvitationState {
  return invitation.status === 'pending' && invitation.expiresAt.getTime() <= now.getTime()
    ? 'expired'
    : invitation.status;
}

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

export function toInvitationResponse(i: WorkspaceInvitationEntity): InvitationResponse {
  return {
    id: i.id,
    workspace_id: i.workspaceId,
    email: i.email,
    role: i.role,
    state: stateOf(i),
    expires_at: i.expiresAt,
    invited_by: i.invitedBy,
    accepted_by: i.acceptedBy,
    accepted_at: i.acceptedAt,
    revoked_at: i.revokedAt,
    sent_count: i.sentCount,
    last_sent_at: i.lastSentAt,
    created_at: i.createdAt,
  };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function workspaceEtag(workspace: WorkspaceResponse): string {
  return strongEtag('workspace', workspace.id, workspace.version);
}
