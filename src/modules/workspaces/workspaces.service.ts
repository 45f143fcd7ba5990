import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { NotFoundError, ValidationFailedError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow, parseSort } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import type {
  CreateWorkspaceRequest,
  EmbeddingConfigRequest,
  ListWorkspacesQuery,
  UpdateWorkspaceRequest,
  WorkspaceListItem,
  WorkspaceResponse,
} from './dto/workspace.dto.js';
import type { EmbeddingConfigValue } from './entities/workspace.entity.js';
import { MembersRepository } from './members.repository.js';
import { toWorkspaceListItem, toWorkspaceResponse, workspaceEtag } from './workspaces.mapper.js';
import { WorkspacesRepository, type WorkspaceSort } from './workspaces.repository.js';

// Names sort case-insensitively, as people read them.
const SORTS = { name: 'name', created_at: 'created_at' } as const satisfies Record<string, WorkspaceSort>;

@Injectable()
export class WorkspacesService {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly members: MembersRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The workspace's embedding choice (the built-in local embedder unless it chose a remote config), for the catalogues. */
  async embeddingChoice(workspaceId: string): Promise<EmbeddingConfigValue> {
    return (await this.workspaces.embeddingConfig(workspaceId)) ?? { provider: 'local' };
  }

  /** Locks the workspace row in the caller's unit of work (serialising the workspace's metric defaults). */
  lock(workspaceId: string): Promise<void> {
    return this.workspaces.lock(workspaceId);
  }

  /** A user's workspaces; system admins see all of them unless they ask for `mine`; an API key its own. */
  async list(query: ListWorkspacesQuery, caller: Principal): Promise<Page<WorkspaceListItem>> {
    const onlyMine = caller.systemRole !== 'admin' || query.mine === true;
    // An API key sees the one workspace it belongs to.
    const [views, total] = await this.workspaces.list(
      caller.userId,
      { q: query.q, onlyMine, only: caller.apiKey?.workspaceId },
      parseSort(query.sort, SORTS, 'name'),
      pageWindow(query),
    );
    return pageOf(views, total, query, toWorkspaceListItem);
  }

  /** Any active user may create a workspace; they become its owner. */
  async create(body: CreateWorkspaceRequest, caller: Principal): Promise<WorkspaceResponse> {
    return this.transactions.run(async () => {
      const workspace = await this.workspaces.create({
        name: body.name,
        description: body.description ?? '',
        createdBy: caller.userId,
      });
      await this.members.insert({
        workspaceId: workspace.id,
        userId: caller.userId,
        role: 'owner',
        addedBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: workspace.id,
        action: 'workspace.created',
        targetType: 'workspace',
        targetId: workspace.id,
        details: { name: workspace.name },
      });
      return toWorkspaceResponse((await this.workspaces.findView(workspace.id, caller.userId))!);
    });
  }

  async get(access: WorkspaceAccess, caller: Principal): Promise<WorkspaceResponse> {
    const view = await this.workspaces.findView(access.workspaceId, caller.userId);
    if (!view) throw new NotFoundError('workspace', access.workspaceId);
    return toWorkspaceResponse(view);
  }

  async update(
    access: WorkspaceAccess,
    body: UpdateWorkspaceRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<WorkspaceResponse> {
    return this.transactions.run(async () => {
      const current = await this.requireView(access.workspaceId, caller);
      ifMatch.check(workspaceEtag(toWorkspaceResponse(current)));
      const workspace = current.workspace;
      const changes: Record<string, { from: string; to: string }> = {};
      if (body.name !== undefined && body.name !== workspace.name)
        changes.name = { from: workspace.name, to: (workspace.name = body.name) };
      if (body.description !== undefined && body.description !== workspace.description) {
        changes.description = { from: workspace.description, to: (workspace.description = body.description) };
      }
      if (Object.keys(changes).length === 0) return toWorkspaceResponse(current);
      await this.workspaces.save(workspace);
      await this.audit.record({
        actor: caller,
        workspaceId: workspace.id,
        action: 'workspace.updated',
        targetType: 'workspace',
        targetId: workspace.id,
        details: changes,
      });
      return toWorkspaceResponse((await this.workspaces.findView(workspace.id, caller.userId))!);
    });
  }

  /** Deletes the workspace and, through the foreign keys, every record it holds. */
  async delete(access: WorkspaceAccess, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const workspace = await this.workspaces.findByIdForUpdate(access.workspaceId);
      if (!workspace) throw new NotFoundError('workspace', access.workspaceId);
      await this.workspaces.delete(workspace.id);
      await this.audit.record({
        actor: caller,
        workspaceId: workspace.id,
        action: 'workspace.deleted',
        targetType: 'workspace',
        targetId: workspace.id,
        details: { name: workspace.name },
      });
    });
  }

  /**
   * Replaces the embedding config (PUT semantics: absent fields are dropped). Unchanged is a no-op.
   * A remote choice's config is checked by its family first (EmbeddingConfigsService.choose).
   */
  async setEmbeddingConfig(
    access: WorkspaceAccess,
    body: EmbeddingConfigRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<WorkspaceResponse> {
    if (body.provider === 'local' && body.config_ref !== undefined) {
      throw new ValidationFailedError(
        'config_ref names a remote embedding config; leave it out for the local embedder',
        [{ field: 'config_ref', message: 'config_ref is only accepted when provider is remote' }],
      );
    }
    return this.transactions.run(async () => {
      const current = await this.requireView(access.workspaceId, caller);
      ifMatch.check(workspaceEtag(toWorkspaceResponse(current)));
      const next: EmbeddingConfigValue = {
        provider: body.provider,
        ...(body.config_ref !== undefined ? { config_ref: body.config_ref } : {}),
        ...(body.model !== undefined ? { model: body.model } : {}),
        ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}),
      };
      const previous = current.workspace.embeddingConfig;
      if (sameConfig(previous, next)) return toWorkspaceResponse(current);
      current.workspace.embeddingConfig = next;
      await this.workspaces.save(current.workspace);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'workspace.embedding_config_changed',
        targetType: 'workspace',
        targetId: access.workspaceId,
        details: { from: previous, to: next },
      });
      return toWorkspaceResponse((await this.workspaces.findView(access.workspaceId, caller.userId))!);
    });
  }

  private async requireView(id: string, caller: Principal) {
    const locked = await this.workspaces.findByIdForUpdate(id);
    if (!locked) throw new NotFoundError('workspace', id);
    return (await this.workspaces.findView(id, caller.userId))!;
  }
}

function sameConfig(a: EmbeddingConfigValue, b: EmbeddingConfigValue): boolean {
  return (
    a.provider === b.provider && a.config_ref === b.config_ref && a.model === b.model && a.dimensions === b.dimensions
  );
}
