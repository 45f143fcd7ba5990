import { Injectable, OnModuleInit } from '@nestjs/common';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AuditService } from '#libs/audit/audit.service.js';
import { type AccessTarget, type Standing, standingOf, type StandingRow } from '#libs/auth/access.repository.js';
import { AccessCache } from '#libs/auth/access-cache.js';
import { API_KEY_PREFIX, ApiKeyVerifier } from '#libs/auth/api-key-verifier.js';
import { roleAtLeast, type Principal, type WorkspaceAccess } from '#libs/auth/roles.js';
import {
  DomainError,
  ForbiddenError,
  NotFoundError,
  UnauthenticatedError,
  ValidationFailedError,
} from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { hashSecretToken } from '#libs/common/secret-token.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { ApiKeyErrors } from './api-keys.errors.js';
import { type ApiKeyCredential, ApiKeysRepository, type ApiKeyRow, credentialOf } from './api-keys.repository.js';
import type {
  ApiKeyCreatedResponse,
  ApiKeyResponse,
  CreateApiKeyRequest,
  ListApiKeysQuery,
} from './dto/api-key.dto.js';
import { toApiKeyResponse } from './api-keys.mapper.js';

/** Active keys one user may hold in one workspace. */
export const API_KEYS_PER_USER = 50;

/** `ews_<12 hex: prefix>_<43 base64url: 256 random bits>` */
const KEY_SHAPE = /^ews_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * API keys: machine credentials for CI jobs and trace exporters. A key belongs to one workspace
 * and acts for the member who created it, with a role no higher than theirs; it is shown once,
 * stored as a SHA-256 hash, and revoked at once (DELETE, the member's removal, the user's
 * deactivation). The guard checks keys through `authenticate`.
 */
@Injectable()
export class ApiKeysService implements OnModuleInit {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly verifier: ApiKeyVerifier,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly cache: AccessCache,
  ) {}

  onModuleInit(): void {
    this.verifier.register((key, client, target) => this.authenticate(key, client, target));
  }

  /**
   * The principal a key acts as: its creator, as a plain user, bound to the key's workspace and
   * role; with a target, the creator's standing towards it, read by the same statement.
   */
  async authenticate(
    key: string,
    client: { ip?: string },
    target?: AccessTarget,
  ): Promise<{ principal: Principal; standing?: Standing }> {
    const prefix = KEY_SHAPE.exec(key)?.[1];
    if (!prefix) throw new UnauthenticatedError('The API key is malformed');
    const { found, standing } = await this.credential(prefix, target);
    if (!found || !sameHash(found.secret_hash, hashSecretToken(key)))
      throw new UnauthenticatedError('The API key is invalid');
    if (found.revoked_at) throw new UnauthenticatedError('The API key has been revoked');
    if (found.expires_at && new Date(found.expires_at).getTime() <= Date.now())
      throw new UnauthenticatedError(`The API key expired at ${new Date(found.expires_at).toISOString()}`);
    if (!found.user_active) throw new UnauthenticatedError('The user who created this API key is deactivated');
    if (!found.last_used_at || Date.now() - new Date(found.last_used_at).getTime() > 60_000) {
      await this.keys.touch(found.id, client.ip);
      // The kept credential too, so this process records a use at most once a minute.
      found.last_used_at = new Date();
    }
    const principal: Principal = {
      userId: found.user_id,
      email: found.email,
      displayName: found.display_name,
      // A key never carries its creator's system-admin powers.
      systemRole: 'user',
      tokenId: found.id,
      tokenExpiresAt: found.expires_at ? new Date(found.expires_at) : undefined,
      apiKey: { id: found.id, name: found.name, workspaceId: found.workspace_id, role: found.role },
    };
    return { principal, standing };
  }

  /**
   * The key with this prefix and its creator, with their standing towards the target: from the
   * access cache when it holds every part, else read in one statement and kept (the cache drops it
   * when the key is revoked or its creator or membership changes: libs/auth/access-cache.ts).
   */
  private async credential(
    prefix: string,
    target?: AccessTarget,
  ): Promise<{ found?: ApiKeyCredential; standing?: Standing }> {
    const cached = this.cache.apiKey<ApiKeyCredential>(prefix, target);
    if (cached) return { found: cached.credential, standing: cached.standing };
    const generation = this.cache.begin();
    const row = target ? await this.keys.credentialWithAccess(prefix, target) : await this.keys.credential(prefix);
    if (!row) return {};
    const standing = target ? standingOf(row as ApiKeyCredential & StandingRow) : undefined;
    const found = credentialOf(row);
    this.cache.keepApiKey(
      generation,
      prefix,
      { userId: found.user_id, workspaceId: found.workspace_id, credential: found },
      standing,
      target && 'table' in target ? target : undefined,
    );
    return { found, standing };
  }

  async create(access: WorkspaceAccess, body: CreateApiKeyRequest, caller: Principal): Promise<ApiKeyCreatedResponse> {
    if (access.viaSystemAdmin)
      throw new ForbiddenError('API keys act for a member of the workspace; join it before creating one');
    if (!roleAtLeast(access.role, body.role)) {
      throw new DomainError(
        ApiKeyErrors.api_key_role_too_high,
        `A key's role cannot be above yours: you are ${access.role}, the key asks for ${body.role}`,
      );
    }
    const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ValidationFailedError('expires_at must be in the future', [
        { field: 'expires_at', message: 'expires_at must be in the future' },
      ]);
    }
    const prefix = randomBytes(6).toString('hex');
    const key = `${API_KEY_PREFIX}${prefix}_${randomBytes(32).toString('base64url')}`;
    return this.transactions.run(async () => {
      await this.keys.lockCreator(access.workspaceId, caller.userId);
      const active = await this.keys.countActive(access.workspaceId, caller.userId);
      if (active >= API_KEYS_PER_USER) {
        throw new DomainError(
          ApiKeyErrors.api_key_limit_reached,
          `You have ${active} active API keys in this workspace, the most allowed; revoke one first`,
          { limit: API_KEYS_PER_USER },
        );
      }
      const row = await this.keys.insert({
        workspaceId: access.workspaceId,
        userId: caller.userId,
        name: body.name,
        prefix,
        secretHash: hashSecretToken(key),
        role: body.role,
        expiresAt,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'api_key.created',
        targetType: 'api_key',
        targetId: row.id,
        details: { name: row.name, prefix: `${API_KEY_PREFIX}${prefix}`, role: row.role, expires_at: row.expires_at },
      });
      return { ...toApiKeyResponse(row), key };
    });
  }

  /** Admins see every key of the workspace; other members their own. */
  async list(access: WorkspaceAccess, query: ListApiKeysQuery, caller: Principal): Promise<Page<ApiKeyResponse>> {
    const [rows, total] = await this.keys.list(
      access.workspaceId,
      { status: query.status, q: query.q, createdBy: this.seesAll(access) ? undefined : caller.userId },
      pageWindow(query),
    );
    return pageOf(rows, total, query, toApiKeyResponse);
  }

  async get(access: WorkspaceAccess, id: string, caller: Principal): Promise<ApiKeyResponse> {
    return toApiKeyResponse(await this.require(access, id, caller));
  }

  /** Revokes the key at once (its creator or an admin); revoking a revoked key changes nothing. */
  async revoke(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      await this.require(access, id, caller);
      const revoked = await this.keys.revoke(id, caller.userId, 'revoked');
      if (revoked)
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'api_key.revoked',
          targetType: 'api_key',
          targetId: id,
          details: { name: revoked.name, prefix: `${API_KEY_PREFIX}${revoked.prefix}`, reason: 'revoked' },
        });
    });
  }

  /**
   * Revokes a user's live keys, in one workspace (they left it) or everywhere (deactivated),
   * inside the caller's unit of work, recording who did it; each revocation is audited.
   */
  async revokeAllOf(
    userId: string,
    workspaceId: string | null,
    reason: 'member_removed' | 'user_deactivated',
    actor: Pick<Principal, 'userId' | 'email'> | undefined,
  ): Promise<number> {
    const revoked = await this.keys.revokeAllOf(userId, workspaceId, reason, actor?.userId ?? null);
    for (const k of revoked) {
      await this.audit.record({
        actor,
        workspaceId: k.workspace_id,
        action: 'api_key.revoked',
        targetType: 'api_key',
        targetId: k.id,
        details: { name: k.name, prefix: `${API_KEY_PREFIX}${k.prefix}`, reason },
      });
    }
    return revoked.length;
  }

  private seesAll(access: WorkspaceAccess): boolean {
    return roleAtLeast(access.role, 'admin');
  }

  private async require(access: WorkspaceAccess, id: string, caller: Principal): Promise<ApiKeyRow> {
    const key = await this.keys.find(access.workspaceId, id);
    if (!key || (!this.seesAll(access) && key.user_id !== caller.userId)) throw new NotFoundError('API key', id);
    return key;
  }
}
