export const WORKSPACE_ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

export const SYSTEM_ROLES = ['admin', 'user'] as const;
export type SystemRole = (typeof SYSTEM_ROLES)[number];

const RANK: Record<WorkspaceRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** The lower of two roles. */
export function lowerRole(a: WorkspaceRole, b: WorkspaceRole): WorkspaceRole {
  return RANK[a] <= RANK[b] ? a : b;
}

/** viewer < member < admin < owner */
export function roleAtLeast(role: WorkspaceRole, required: WorkspaceRole): boolean {
  return RANK[role] >= RANK[required];
}

/** The authenticated caller, as the guard puts it on the request. */
export interface Principal {
  userId: string;
  email: string;
  displayName: string;
  systemRole: SystemRole;
  /** The session's token id, or the API key's id. */
  tokenId: string;
  /** When the credential expires; undefined for an API key without an expiry. */
  tokenExpiresAt?: Date;
  /**
   * Set when the caller authenticated with an API key. The key acts for its creator (userId)
   * inside one workspace, with the lower of the key's role and the creator's current role.
   */
  apiKey?: { id: string; name: string; workspaceId: string; role: WorkspaceRole };
}

/** The workspace a route acts on and the caller's effective role there. */
export interface WorkspaceAccess {
  workspaceId: string;
  /** `owner` for system admins who are not members. */
  role: WorkspaceRole;
  viaSystemAdmin: boolean;
}
