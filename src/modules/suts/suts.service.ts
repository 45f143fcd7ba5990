import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import type { CreateSutRequest, ListSutsQuery, SutResponse, UpdateSutRequest } from './dto/sut.dto.js';
import type { AdapterEntity } from './entities/adapter.entity.js';
import type { ConnectionEntity } from './entities/connection.entity.js';
import type { SutEntity } from './entities/sut.entity.js';
import { SutErrors } from './suts.errors.js';
import { SutsRepository } from './suts.repository.js';
import { toSutResponse, sutEtag } from './suts.mapper.js';

/** Systems under test: the applications a workspace evaluates (their connections are ConnectionsService's). */
@Injectable()
export class SutsService {
  constructor(
    private readonly suts: SutsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /**
   * What a run calls (for runs: the planner snapshots it): the workspace's SUT, one of its
   * connections and the adapter in force on it; a part that is not there is null.
   */
  async callable(
    workspaceId: string,
    sutId: string,
    connectionId: string,
  ): Promise<{ sut: SutEntity | null; connection: ConnectionEntity | null; adapter: AdapterEntity | null }> {
    const sut = await this.suts.find(workspaceId, sutId);
    const connection = sut ? await this.suts.findConnection(sut.id, connectionId) : null;
    const adapter = connection ? ((await this.suts.currentAdapters([connection.id])).get(connection.id) ?? null) : null;
    return { sut, connection, adapter };
  }

  /** Of `ids`, those that are not SUTs of the workspace (for families that link SUTs: projects). */
  missing(workspaceId: string, ids: string[]): Promise<string[]> {
    return this.suts.missing(workspaceId, ids);
  }

  async list(access: WorkspaceAccess, query: ListSutsQuery): Promise<Page<SutResponse>> {
    const [rows, total] = await this.suts.page(access.workspaceId, { q: query.q, tag: query.tag }, pageWindow(query));
    const counts = await this.suts.connectionCounts(rows.map((r) => r.id));
    return pageOf(rows, total, query, (r) => toSutResponse(r, counts.get(r.id) ?? 0));
  }

  async get(access: WorkspaceAccess, id: string): Promise<SutResponse> {
    const sut = await this.suts.find(access.workspaceId, id);
    if (!sut) throw new NotFoundError('SUT', id);
    return toSutResponse(sut, (await this.suts.connectionCounts([id])).get(id) ?? 0);
  }

  async create(access: WorkspaceAccess, body: CreateSutRequest, caller: Principal): Promise<SutResponse> {
    const sut = await this.transactions.run(async () => {
      if (await this.suts.sutNameTaken(access.workspaceId, body.name, null)) throw nameTaken(body.name);
      const created = await this.suts.saveSut({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        tags: [...new Set(body.tags ?? [])],
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut.created',
        targetType: 'sut',
        targetId: created.id,
        details: { name: created.name },
      });
      return created;
    });
    return toSutResponse(sut, 0);
  }

  /** Renames, re-describes or re-tags; honours If-Match. */
  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateSutRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<SutResponse> {
    await this.transactions.run(async () => {
      const sut = await this.suts.findForUpdate(access.workspaceId, id);
      if (!sut) throw new NotFoundError('SUT', id);
      ifMatch.check(sutEtag(toSutResponse(sut, 0)));
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (body.name !== undefined && body.name !== sut.name) {
        if (await this.suts.sutNameTaken(access.workspaceId, body.name, id)) throw nameTaken(body.name);
        changes.name = { from: sut.name, to: body.name };
        sut.name = body.name;
      }
      if (body.description !== undefined && body.description !== sut.description) {
        changes.description = { from: sut.description, to: body.description };
        sut.description = body.description;
      }
      const tags = body.tags === undefined ? undefined : [...new Set(body.tags)];
      if (tags && tags.join('\n') !== sut.tags.join('\n')) {
        changes.tags = { from: sut.tags, to: tags };
        sut.tags = tags;
      }
      if (!Object.keys(changes).length) return;
      await this.suts.saveSut(sut);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut.updated',
        targetType: 'sut',
        targetId: id,
        details: changes,
      });
    });
    return this.get(access, id);
  }

  /** Deletes the system with its connections and adapters. */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const sut = await this.suts.findForUpdate(access.workspaceId, id);
      if (!sut) throw new NotFoundError('SUT', id);
      await this.suts.deleteSut(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut.deleted',
        targetType: 'sut',
        targetId: id,
        details: { name: sut.name },
      });
    });
  }
}

function nameTaken(name: string): DomainError {
  return new DomainError(SutErrors.sut_name_taken, `The workspace already has a system under test named "${name}"`);
}
