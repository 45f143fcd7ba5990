import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { SecretReferences } from '../../secrets/secret-references.service.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import type {
  CreateNotificationConfigRequest,
  ListNotificationConfigsQuery,
  NotificationConfigResponse,
} from '../dto/notification-config.dto.js';
import { NotificationConfigsRepository } from './notification-configs.repository.js';
import { toNotificationConfigResponse } from '../catalogues.mapper.js';

/**
 * Webhooks a workspace's events are POSTed to, signed with a workspace secret (see
 * libs/common/webhook-signature.ts). Deliveries come with runs; this is their configuration.
 */
@Injectable()
export class NotificationConfigsService {
  constructor(
    private readonly configs: NotificationConfigsRepository,
    private readonly secretReferences: SecretReferences,
    private readonly secrets: SecretsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListNotificationConfigsQuery): Promise<Page<NotificationConfigResponse>> {
    const [rows, total] = await this.configs.page(access.workspaceId, pageWindow(query));
    return pageOf(rows, total, query, (r) => toNotificationConfigResponse(r));
  }

  async create(
    access: WorkspaceAccess,
    body: CreateNotificationConfigRequest,
    caller: Principal,
  ): Promise<NotificationConfigResponse> {
    return this.transactions.run(async () => {
      if (await this.configs.nameTaken(access.workspaceId, body.name)) {
        throw new DomainError(
          CatalogueErrors.notification_config_name_taken,
          `The workspace already has a webhook named "${body.name}"`,
        );
      }
      let secretId = body.secret_id;
      if (secretId) await this.secretReferences.requireUsable(access, secretId);
      if (!secretId) {
        const secret = await this.secrets.create(
          access,
          {
            name: `webhook-${body.name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-')}`,
            value: randomBytes(32).toString('base64url'),
            description: `Signs the deliveries of webhook "${body.name}"`,
          },
          caller,
        );
        secretId = secret.id;
      }
      const config = await this.configs.insert({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        url: body.url,
        events: [...new Set(body.events)],
        enabled: body.enabled ?? true,
        secretId,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'notification_config.created',
        targetType: 'notification_config',
        targetId: config.id,
        details: { name: config.name, url: config.url, events: config.events },
      });
      return toNotificationConfigResponse(config, body.secret_id === undefined);
    });
  }

  /** Deletes the webhook; the secret that signed it stays (delete it under secrets when no longer needed). */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const config = await this.configs.findForUpdate(access.workspaceId, id);
      if (!config) throw new NotFoundError('notification config', id);
      await this.configs.delete(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'notification_config.deleted',
        targetType: 'notification_config',
        targetId: id,
        details: { name: config.name },
      });
    });
  }
}
