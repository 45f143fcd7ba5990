import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow, parseSort } from '#libs/common/pagination.js';
import { SecretCipher, SecretDecryptionError } from '#libs/crypto/secret-cipher.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import type {
  CreateSecretRequest,
  ListSecretsQuery,
  UpdateSecretRequest,
  WorkspaceSecretResponse,
  WorkspaceSecretRevealResponse,
} from './dto/secret.dto.js';
import type { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';
import { SecretErrors } from './secrets.errors.js';
import { SecretsRepository } from './secrets.repository.js';
import { toSecretResponse, secretEtag } from './secrets.mapper.js';

const SORTS = { name: 'name', created_at: 'created_at' } as const;

export interface KeyRotationReport {
  /** The current key's id */
  key_id: string;
  resealed: number;
  /** Secrets that opened with no configured key (left as they were) */
  failed: string[];
  /** Secrets per key id after the run */
  by_key: Record<string, number>;
}

/** The associated data binding a ciphertext to its row. */
const aad = (workspaceId: string, secretId: string) => `workspace_secret:${workspaceId}:${secretId}`;

/**
 * Workspace secrets: encrypted at rest (AES-256-GCM), never in a response except reveal,
 * which is audited. Other families refer to a secret by id and call `resolveValue`.
 */
@Injectable()
export class SecretsService {
  constructor(
    private readonly secrets: SecretsRepository,
    private readonly cipher: SecretCipher,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListSecretsQuery): Promise<Page<WorkspaceSecretResponse>> {
    const [rows, total] = await this.secrets.list(
      access.workspaceId,
      query.q,
      parseSort(query.sort, SORTS, 'name'),
      pageWindow(query),
    );
    return pageOf(rows, total, query, toSecretResponse);
  }

  async get(access: WorkspaceAccess, id: string): Promise<WorkspaceSecretResponse> {
    return toSecretResponse(await this.require(access.workspaceId, id));
  }

  /** Stores a secret; inside the caller's transaction when given one (another family creating a key it needs). */
  async create(
    access: WorkspaceAccess,
    body: CreateSecretRequest,
    caller: Principal,
  ): Promise<WorkspaceSecretResponse> {
    const work = async () => {
      if (await this.secrets.nameTaken(access.workspaceId, body.name, undefined)) throw this.nameTaken(body.name);
      const id = randomUUID();
      const sealed = this.cipher.seal(body.value, aad(access.workspaceId, id));
      const secret = await this.secrets.insert({
        id,
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        createdBy: caller.userId,
        ...sealed,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'secret.created',
        targetType: 'secret',
        targetId: id,
        details: { name: body.name },
      });
      return toSecretResponse(secret);
    };
    return this.transactions.run(work);
  }

  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateSecretRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<WorkspaceSecretResponse> {
    return this.transactions.run(async () => {
      const secret = await this.secrets.findForUpdate(access.workspaceId, id);
      if (!secret) throw new NotFoundError('secret', id);
      ifMatch.check(secretEtag(toSecretResponse(secret)));
      const changed: string[] = [];
      if (body.name !== undefined && body.name !== secret.name) {
        if (await this.secrets.nameTaken(access.workspaceId, body.name, id)) throw this.nameTaken(body.name);
        secret.name = body.name;
        changed.push('name');
      }
      if (body.description !== undefined && body.description !== secret.description) {
        secret.description = body.description;
        changed.push('description');
      }
      const sealed = body.value !== undefined ? this.cipher.seal(body.value, aad(access.workspaceId, id)) : undefined;
      if (sealed) changed.push('value');
      if (changed.length === 0) return toSecretResponse(secret);
      secret.updatedBy = caller.userId;
      const saved = await this.secrets.save(secret, sealed);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'secret.updated',
        targetType: 'secret',
        targetId: id,
        details: { changed },
      });
      return toSecretResponse(saved);
    });
  }

  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const secret = await this.secrets.findForUpdate(access.workspaceId, id);
      if (!secret) throw new NotFoundError('secret', id);
      await this.secrets.delete(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'secret.deleted',
        targetType: 'secret',
        targetId: id,
        details: { name: secret.name },
      });
    });
  }

  /** The one way a value leaves the service; every reveal is in the audit trail. */
  async reveal(access: WorkspaceAccess, id: string, caller: Principal): Promise<WorkspaceSecretRevealResponse> {
    const value = await this.resolveValue(access.workspaceId, id);
    const secret = await this.require(access.workspaceId, id);
    await this.secrets.markRevealed(id);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'secret.revealed',
      targetType: 'secret',
      targetId: id,
      details: { name: secret.name },
    });
    return { id, name: secret.name, value };
  }

  /** For other families (SUT connections, judges, trace sources): the decrypted value, for use inside the service only. */
  async resolveValue(workspaceId: string, id: string): Promise<string> {
    const secret = await this.secrets.findSealed(workspaceId, id);
    if (!secret) throw new NotFoundError('secret', id);
    try {
      return this.cipher.open(
        { ciphertext: secret.ciphertext, iv: secret.iv, authTag: secret.authTag, keyId: secret.keyId },
        aad(workspaceId, id),
      );
    } catch (err) {
      if (err instanceof SecretDecryptionError) {
        throw new DomainError(
          SecretErrors.secret_undecryptable,
          `Secret ${secret.name} cannot be decrypted with the current ENCRYPTION_KEY; set a new value`,
        );
      }
      throw err;
    }
  }

  /**
   * Re-seals every secret not under the current ENCRYPTION_KEY (opened with a key of
   * ENCRYPTION_KEY_PREVIOUS), in batches of one transaction each. A value that opens with no
   * configured key is left as it is and reported. Safe to run again; a no-op when done.
   */
  async rotateEncryptionKey(batchSize = 100): Promise<KeyRotationReport> {
    const keyId = this.cipher.currentKeyId;
    let resealed = 0;
    const failed: string[] = [];
    let cursor = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const batch = await this.transactions.run(async () => {
        const rows = await this.secrets.nextToReseal(keyId, cursor, batchSize);
        for (const row of rows) {
          try {
            const value = this.cipher.open(row, aad(row.workspaceId, row.id));
            await this.secrets.reseal(row.id, this.cipher.seal(value, aad(row.workspaceId, row.id)));
            resealed += 1;
          } catch (err) {
            if (!(err instanceof SecretDecryptionError)) throw err;
            failed.push(row.id);
          }
        }
        return rows;
      });
      if (batch.length < batchSize) break;
      cursor = batch[batch.length - 1].id;
    }
    await this.audit.record({
      action: 'secret.key_rotated',
      targetType: 'encryption_key',
      targetId: keyId,
      details: { resealed, failed: failed.length },
    });
    return { key_id: keyId, resealed, failed, by_key: await this.secrets.countByKey() };
  }

  private async require(workspaceId: string, id: string): Promise<WorkspaceSecretEntity> {
    const secret = await this.secrets.find(workspaceId, id);
    if (!secret) throw new NotFoundError('secret', id);
    return secret;
  }

  private nameTaken(name: string): DomainError {
    return new DomainError(SecretErrors.secret_name_taken, `The workspace already has a secret named ${name}`);
  }
}
