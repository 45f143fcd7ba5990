import { Injectable } from '@nestjs/common';
import { roleAtLeast, type WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { SecretErrors } from './secrets.errors.js';
import { SecretsRepository } from './secrets.repository.js';

/**
 * The rule for records that send a workspace secret to a URL (SUT connections, judges,
 * embedding configs, webhooks, custom ops): the secret must be the workspace's, and only an
 * admin may choose where it goes, since whoever runs that URL receives the key.
 */
@Injectable()
export class SecretReferences {
  constructor(private readonly secrets: SecretsRepository) {}

  /** Checks a secret the body names: the caller is an admin and the secret belongs to the workspace. */
  async requireUsable(access: WorkspaceAccess, secretId: string): Promise<void> {
    this.requireAdmin(access, 'name a secret');
    if (!(await this.secrets.existsInWorkspace(access.workspaceId, secretId))) {
      throw new DomainError(SecretErrors.unknown_secret, `Workspace ${access.workspaceId} has no secret ${secretId}`, {
        field: 'secret_id',
      });
    }
  }

  /** A record that carries a secret has its destination changed: admins only. */
  requireAdmin(access: WorkspaceAccess, what: string): void {
    if (!roleAtLeast(access.role, 'admin')) {
      throw new DomainError(
        SecretErrors.secret_use_requires_admin,
        `Only an admin may ${what}: it decides who receives the workspace's key (your role: ${access.role})`,
      );
    }
  }
}
