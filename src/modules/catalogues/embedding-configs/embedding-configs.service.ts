import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageFrom } from '#libs/common/pagination.js';
import { embedRemote } from '#libs/evaluation/embeddings-client.js';
import { LOCAL_EMBEDDER, localEmbed } from '#libs/evaluation/local-embedder.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { isUniqueViolation } from '#libs/database/database-errors.js';
import { SecretReferences } from '../../secrets/secret-references.service.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import { LOCAL_CONFIG_NAME, localEmbeddingConfigResponse, toEmbeddingConfigResponse } from '../catalogues.mapper.js';
import type {
  CreateEmbeddingConfigRequest,
  EmbeddingConfigResponse,
  ListEmbeddingConfigsQuery,
} from '../dto/embedding-config.dto.js';
import type { EmbeddingConfigRequest, WorkspaceResponse } from '../../workspaces/dto/workspace.dto.js';
import { WorkspacesService } from '../../workspaces/workspaces.service.js';
import { EmbeddingConfigsRepository } from './embedding-configs.repository.js';

/**
 * Embedding configurations: the built-in local embedder (always there, named `local`, no
 * network) and a workspace's remote ones. Clustering and similarity use the one the workspace
 * chose with PUT /workspaces/{id}/embedding-config.
 */
@Injectable()
export class EmbeddingConfigsService {
  constructor(
    private readonly configs: EmbeddingConfigsRepository,
    private readonly secretReferences: SecretReferences,
    private readonly secrets: SecretsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly workspaces: WorkspacesService,
  ) {}

  /** The built-in local embedder first, then the workspace's configs by name. */
  async list(access: WorkspaceAccess, query: ListEmbeddingConfigsQuery): Promise<Page<EmbeddingConfigResponse>> {
    const [choice, rows] = await Promise.all([
      this.workspaces.embeddingChoice(access.workspaceId),
      this.configs.list(access.workspaceId),
    ]);
    return pageFrom(
      [
        localEmbeddingConfigResponse(access.workspaceId, choice),
        ...rows.map((r) => toEmbeddingConfigResponse(r, choice)),
      ],
      query,
    );
  }

  /** By id or name; `local` is the built-in embedder. */
  async get(access: WorkspaceAccess, ref: string): Promise<EmbeddingConfigResponse> {
    const choice = await this.workspaces.embeddingChoice(access.workspaceId);
    if (ref.toLowerCase() === LOCAL_CONFIG_NAME) return localEmbeddingConfigResponse(access.workspaceId, choice);
    const config = await this.configs.findByRef(access.workspaceId, ref);
    if (!config) throw await this.notFound(access.workspaceId, ref);
    return toEmbeddingConfigResponse(config, choice);
  }

  /** Whether `ref` names a remote config of the workspace (for PUT /workspaces/{id}/embedding-config). */
  async exists(workspaceId: string, ref: string): Promise<boolean> {
    return (await this.configs.findByRef(workspaceId, ref)) !== null;
  }

  /** The workspace's choice (PUT /workspaces/{id}/embedding-config): a remote choice must name one of its configs. */
  choose(
    access: WorkspaceAccess,
    body: EmbeddingConfigRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<WorkspaceResponse> {
    return this.transactions.run(async () => {
      if (body.provider === 'remote' && body.config_ref && !(await this.exists(access.workspaceId, body.config_ref))) {
        throw new ValidationFailedError(
          `The workspace has no embedding config "${body.config_ref}"; create it with POST /embedding-configs first`,
          [{ field: 'config_ref', message: 'names no embedding config of the workspace' }],
        );
      }
      return this.workspaces.setEmbeddingConfig(access, body, ifMatch, caller);
    });
  }

  async create(
    access: WorkspaceAccess,
    body: CreateEmbeddingConfigRequest,
    caller: Principal,
  ): Promise<EmbeddingConfigResponse> {
    if (body.name.toLowerCase() === LOCAL_CONFIG_NAME) throw this.nameTaken(body.name);
    const created = await this.transactions.run(async () => {
      if (await this.configs.findByRef(access.workspaceId, body.name)) throw this.nameTaken(body.name);
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      const config = await this.configs
        .insert({
          workspaceId: access.workspaceId,
          name: body.name,
          description: body.description ?? '',
          provider: body.provider,
          baseUrl: body.base_url.replace(/\/+$/, ''),
          model: body.model,
          dimensions: body.dimensions ?? null,
          batchSize: body.batch_size ?? 64,
          secretId: body.secret_id ?? null,
          createdBy: caller.userId,
        })
        .catch((err: unknown) => {
          throw isUniqueViolation(err) ? this.nameTaken(body.name) : err;
        });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'embedding_config.created',
        targetType: 'embedding_config',
        targetId: config.id,
        details: { name: config.name, provider: config.provider, model: config.model },
      });
      return config;
    });
    return toEmbeddingConfigResponse(created, await this.workspaces.embeddingChoice(access.workspaceId));
  }

  /** The embedder the workspace chose (the built-in local one unless a remote config is set), for clustering and visual analysis. */
  async embedderFor(
    workspaceId: string,
  ): Promise<{ name: string; embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> }> {
    const choice = await this.workspaces.embeddingChoice(workspaceId);
    const config =
      choice.provider === 'remote' && choice.config_ref
        ? await this.configs.findByRef(workspaceId, choice.config_ref)
        : null;
    if (!config) return { name: LOCAL_EMBEDDER.name, embed: async (texts) => texts.map((t) => localEmbed(t)) };
    const key = config.secretId ? await this.secrets.resolveValue(workspaceId, config.secretId) : null;
    const endpoint = {
      base_url: config.baseUrl,
      model: config.model,
      dimensions: config.dimensions,
      batch_size: config.batchSize,
      key,
      timeout_ms: 60_000,
    };
    return { name: `${config.name} (${config.model})`, embed: (texts, signal) => embedRemote(endpoint, texts, signal) };
  }

  private nameTaken(name: string): DomainError {
    return new DomainError(
      CatalogueErrors.embedding_config_name_taken,
      `The workspace already has an embedding config named "${name}"${name.toLowerCase() === LOCAL_CONFIG_NAME ? ' (the built-in local embedder)' : ''}`,
    );
  }

  private async notFound(workspaceId: string, ref: string): Promise<DomainError> {
    const available = [LOCAL_CONFIG_NAME, ...(await this.configs.list(workspaceId)).map((c) => c.name)];
    return new DomainError(
      CatalogueErrors.embedding_config_not_found,
      `No embedding config "${ref.slice(0, 200)}" in the workspace; it has ${available.join(', ')}`,
      { available },
    );
  }
}
