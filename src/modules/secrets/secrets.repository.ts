import { Injectable } from '@nestjs/common';
import type { Sealed } from '../../../libs/crypto/secret-cipher.js';
import { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';
import { containsPattern } from '../../../libs/database/like.js';

@Injectable()
export class SecretsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(WorkspaceSecretEntity);
  }

  async list(
    workspaceId: string,
    q: string | undefined,
    sort: { column: string; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ) {
    const qb = this.repo.createQueryBuilder('s').where('s.workspace_id = :workspaceId', { workspaceId });
    if (q) qb.andWhere('lower(s.name) LIKE :pattern', { pattern: containsPattern(q.toLowerCase()) });
    return qb
      .orderBy(sort.column, sort.direction)
      .addOrderBy('s.id', 'ASC')
      .skip(window.skip)
      .take(window.take)
      .getManyAndCount();
  }

  /** Metadata only, scoped to the workspace. */
  find(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId } });
  }

  findForUpdate(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  /** With the sealed value, for reveal and internal use. */
  findSealed(workspaceId: string, id: string): Promise<WorkspaceSecretEntity | null> {
    return this.repo
      .createQueryBuilder('s')
      .addSelect(['s.ciphertext', 's.iv', 's.authTag'])
      .where('s.id = :id AND s.workspace_id = :workspaceId', { id, workspaceId })
      .getOne();
  }

  async existsInWorkspace(workspaceId: string, id: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query('SELECT 1 FROM workspace_secrets WHERE id = $1 AND workspace_id = $2', [
      id,
      workspaceId,
    ]);
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
    const rows: Array<{
      id: string;
      workspace_id: string;
      ciphertext: Buffer;
      iv: Buffer;
      auth_tag: Buffer;
      key_id: string;
    }> = await this.db.query(
      `SELECT id, workspace_id, ciphertext, iv, auth_tag, key_id FROM workspace_secrets
        WHERE key_id <> $1 AND id > $2 ORDER BY id LIMIT $3 FOR UPDATE`,
      [keyId, afterId, limit],
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
    await this.db.query(
      'UPDATE workspace_secrets SET ciphertext = $2, iv = $3, auth_tag = $4, key_id = $5 WHERE id = $1',
      [id, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId],
    );
  }

  async countByKey(): Promise<Record<string, number>> {
    const rows: Array<{ key_id: string; n: number }> = await this.db.query(
      'SELECT key_id, count(*)::int AS n FROM workspace_secrets GROUP BY key_id',
    );
    return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
  }

  async markRevealed(id: string): Promise<void> {
    await this.db.query('UPDATE workspace_secrets SET last_revealed_at = now() WHERE id = $1', [id]);
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }
}
