import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import type { Sealed } from '#libs/crypto/secret-cipher.js';
import { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { countOf, direction, lowerContains, withTotal, type PageWindow } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';

/** What a list of secrets sorts by (name case-insensitively, then id), and which way. */
export interface SecretSort {
  column: 'name' | 'created_at';
  direction: 'ASC' | 'DESC';
}

/** A secret's columns but its sealed value: what TypeORM reads of the entity (the value's columns are `select: false`). */
const METADATA_COLUMNS = [
  'id',
  'created_at',
  'updated_at',
  'workspace_id',
  'created_by',
  'version',
  'name',
  'description',
  'key_id',
  'updated_by',
  'last_revealed_at',
] as const;

@Injectable()
export class SecretsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(WorkspaceSecretEntity);
  }

  async list(
    workspaceId: string,
    q: string | undefined,
    sort: SecretSort,
    window: PageWindow,
  ): Promise<[WorkspaceSecretEntity[], number]> {
    const matching = (b: QueryBuilder) =>
      b
        .selectFrom('workspace_secrets')
        .where('workspace_id', '=', workspaceId)
        .$if(!!q, (w) => w.where((eb) => lowerContains(eb, 'name', q!)));
    const rows = await this.db.typed((b) =>
      matching(b)
        .select(METADATA_COLUMNS)
        .orderBy((eb) => (sort.column === 'name' ? eb.fn('lower', ['name']) : eb.ref('created_at')), direction(sort))
        .orderBy('id')
        .offset(window.skip)
        .limit(window.take),
    );
    const [, total] = await withTotal(rows, window, () => countOf(this.db, matching));
    return [entitiesFrom(this.repo, rows), total];
  }

  /** Metadata only, scoped to the workspace. */
  find(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  /** With the sealed value, for reveal and internal use. */
  async findSealed(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('workspace_secrets').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
    );
    const [row] = rows;
    if (!row) return null;
    // entitiesFrom leaves the sealed columns unset (TypeORM does not select them unless asked).
    const [secret] = entitiesFrom(this.repo, rows);
    return Object.assign(secret, { ciphertext: row.ciphertext, iv: row.iv, authTag: row.auth_tag });
  }

  async existsInWorkspace(workspaceId: string, id: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('workspace_secrets').select('id').where('id', '=', id).where('workspace_id', '=', workspaceId),
    );
    return rows.length > 0;
  }

  async nameTaken(workspaceId: string, name: string, exceptId?: string): Promise<boolean> {
    return nameTaken(this.db, 'workspace_secrets', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  async insert(
    secret: Pick<WorkspaceSecretEntity, 'id' | 'workspaceId' | 'name' | 'description' | 'createdBy'> & Sealed,
  ): Promise<WorkspaceSecretEntity> {
    const repo = this.repo;
    await repo.insert({ ...secret, updatedBy: secret.createdBy });
    return (await repo.findOne({ where: { id: secret.id } }))!;
  }

  async save(secret: WorkspaceSecretEntity, sealed: Sealed | undefined): Promise<WorkspaceSecretEntity> {
    const repo = this.repo;
    await repo.save(sealed ? Object.assign(secret, sealed) : secret);
    return (await repo.findOne({ where: { id: secret.id } }))!;
  }

  /** The next batch of sealed rows not under `keyId`, after `afterId`, locked for re-sealing. */
  async nextToReseal(
    keyId: string,
    afterId: string,
    limit: number,
  ): Promise<Array<{ id: string; workspaceId: string } & Sealed>> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspace_secrets')
        .select(['id', 'workspace_id', 'ciphertext', 'iv', 'auth_tag', 'key_id'])
        .where('key_id', '<>', keyId)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .forUpdate(),
    );
    return rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      ciphertext: r.ciphertext,
      iv: r.iv,
      authTag: r.auth_tag,
      keyId: r.key_id,
    }));
  }

  /** Replaces the sealed value only: re-sealing is not an edit (version and updated_at stay). */
  async reseal(id: string, sealed: Sealed): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('workspace_secrets')
        .set({ ciphertext: sealed.ciphertext, iv: sealed.iv, auth_tag: sealed.authTag, key_id: sealed.keyId })
        .where('id', '=', id),
    );
  }

  async countByKey(): Promise<Record<string, number>> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspace_secrets')
        .select(['key_id', sql<number>`count(*)::int`.as('n')])
        .groupBy('key_id'),
    );
    return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
  }

  async markRevealed(id: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('workspace_secrets')
        .set({ last_revealed_at: sql`now()` })
        .where('id', '=', id),
    );
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }
}
