import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { AdapterEntity } from './entities/adapter.entity.js';
import { ConnectionEntity } from './entities/connection.entity.js';
import { SutEntity } from './entities/sut.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { containsText, entityList, entityPage, holds, type PageWindow } from '#libs/database/typed-fragments.js';

export interface SutFilter {
  q?: string;
  tag?: string;
}

/** Systems under test, their connections and adapter revisions: queries only. */
@Injectable()
export class SutsRepository {
  constructor(private readonly db: Db) {}

  private get suts() {
    return this.db.repository(SutEntity);
  }

  private get connections() {
    return this.db.repository(ConnectionEntity);
  }

  page(workspaceId: string, filter: SutFilter, window: PageWindow): Promise<[SutEntity[], number]> {
    return entityPage(
      this.db,
      this.suts,
      (q) =>
        q
          .selectFrom('suts')
          .where('workspace_id', '=', workspaceId)
          .$if(!!filter.q, (w) => w.where((eb) => containsText(eb, 'name', filter.q!)))
          .$if(!!filter.tag, (w) => w.where((eb) => holds(eb, 'tags', filter.tag!))),
      (matching) => matching.orderBy((eb) => eb.fn('lower', ['name'])).orderBy('id'),
      window,
    );
  }

  /** Connections per SUT, for a page of SUTs. */
  async connectionCounts(sutIds: string[]): Promise<Map<string, number>> {
    if (!sutIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('sut_connections')
        .select(['sut_id', sql<number>`count(*)::int`.as('n')])
        .where('sut_id', '=', sql<string>`ANY(${sutIds}::uuid[])`)
        .groupBy('sut_id'),
    );
    return new Map(rows.map((r) => [r.sut_id, r.n]));
  }

  /** Of `ids`, those that are not SUTs of the workspace. */
  async missing(workspaceId: string, ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('suts')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`),
    );
    const found = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !found.has(id));
  }

  find(workspaceId: string, id: string): Promise<SutEntity | null> {
    return this.suts.findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string): Promise<SutEntity | null> {
    return this.suts.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  async sutNameTaken(workspaceId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(this.db, 'suts', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  saveSut(sut: Partial<SutEntity>): Promise<SutEntity> {
    const repo = this.suts;
    return repo.save(repo.create(sut));
  }

  async deleteSut(id: string): Promise<void> {
    await this.suts.delete({ id });
  }

  listConnections(sutId: string): Promise<ConnectionEntity[]> {
    return entityList(
      this.db,
      this.connections,
      (q) => q.selectFrom('sut_connections').where('sut_id', '=', sutId),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
    );
  }

  findConnection(sutId: string, id: string): Promise<ConnectionEntity | null> {
    return this.connections.findOne({ where: { id, sutId } });
  }

  findConnectionForUpdate(sutId: string, id: string): Promise<ConnectionEntity | null> {
    return this.connections.findOne({ where: { id, sutId }, lock: { mode: 'pessimistic_write' } });
  }

  async connectionNameTaken(sutId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(this.db, 'sut_connections', { column: 'sut_id', value: sutId }, name, exceptId);
  }

  saveConnection(connection: Partial<ConnectionEntity>): Promise<ConnectionEntity> {
    const repo = this.connections;
    return repo.save(repo.create(connection));
  }

  async deleteConnection(id: string): Promise<void> {
    await this.connections.delete({ id });
  }

  /** The newest adapter revision of each connection given. */
  async currentAdapters(connectionIds: string[]): Promise<Map<string, AdapterEntity>> {
    if (!connectionIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('sut_adapters')
        .selectAll()
        .distinctOn('connection_id')
        .where('connection_id', 'in', connectionIds)
        .orderBy('connection_id')
        .orderBy('revision', 'desc'),
    );
    const adapters = entitiesFrom(this.db.repository(AdapterEntity), rows);
    return new Map(adapters.map((a) => [a.connectionId, a]));
  }

  /** Adds the next revision; the caller holds the connection's row lock, so revisions do not race. */
  async insertAdapter(
    adapter: Pick<AdapterEntity, 'workspaceId' | 'connectionId' | 'spec' | 'createdBy'>,
  ): Promise<AdapterEntity> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('sut_adapters')
        .select(sql<number>`coalesce(max(revision), 0) + 1`.as('next'))
        .where('connection_id', '=', adapter.connectionId),
    );
    const repo = this.db.repository(AdapterEntity);
    return repo.save(repo.create({ ...adapter, revision: rows[0].next }));
  }
}
