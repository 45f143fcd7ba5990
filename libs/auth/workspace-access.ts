import { Injectable } from '@nestjs/common';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '#libs/common/domain-error.js';
import { AccessRepository, type Standing } from './access.repository.js';
import { ApiKeyVerifier, bearerApiKey } from './api-key-verifier.js';
import { lowerRole, roleAtLeast, type Principal, type WorkspaceAccess, type WorkspaceRole } from './roles.js';

/**
 * The caller's access to a workspace at `required` or above, from their standing there: 404 for
 * no such workspace, 403 for no membership or too low a role. A system admin acts as owner (never
 * through an API key, which the API key check does not let carry that role); an API key gets the
 * lower of its own role and its creator's.
 */
export function workspaceAccessOf(
  workspaceId: string,
  principal: Principal,
  required: WorkspaceRole,
  { workspaceExists, role }: Standing,
): WorkspaceAccess {
  if (!workspaceExists) throw new NotFoundError('workspace', workspaceId);
  if (principal.systemRole === 'admin') {
    return { workspaceId, role: 'owner', viaSystemAdmin: role !== 'owner' };
  }
  if (!role) throw new ForbiddenError(`You are not a member of workspace ${workspaceId}`);
  const effective = principal.apiKey ? lowerRole(role, principal.apiKey.role) : role;
  if (!roleAtLeast(effective, required)) {
    const whose = principal.apiKey
      ? `this API key's is ${effective} (key role ${principal.apiKey.role}, its creator's ${role})`
      : `yours is ${role}`;
    throw new ForbiddenError(`This operation needs the ${required} role or above in the workspace; ${whose}`);
  }
  return { workspaceId, role: effective, viaSystemAdmin: false };
}

/**
 * API key access for what is served outside the HTTP routes and their guard (the OTLP/gRPC
 * receiver): the key from an `authorization: Bearer ews_...` value, checked as the guard checks
 * it, and its access to its own workspace.
 */
@Injectable()
export class ApiKeyAccess {
  constructor(
    private readonly keys: ApiKeyVerifier,
    private readonly access: AccessRepository,
  ) {}

  async authorize(
    authorization: string | undefined,
    client: { ip?: string },
    required: WorkspaceRole,
  ): Promise<{ principal: Principal; access: WorkspaceAccess }> {
    const key = bearerApiKey(authorization);
    if (!key) throw new UnauthenticatedError('An API key is required (authorization: Bearer ews_...)');
    const { principal } = await this.keys.verify(key, client);
    const workspaceId = principal.apiKey!.workspaceId;
    const { exists, role } = await this.access.membership(workspaceId, principal.userId);
    return {
      principal,
      access: workspaceAccessOf(workspaceId, principal, required, { workspaceId, workspaceExists: exists, role }),
    };
  }
}
