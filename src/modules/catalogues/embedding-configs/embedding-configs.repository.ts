import { Injectable } from '@nestjs/common';
import { EmbeddingConfigEntity } from '../entities/embedding-config.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { entityList, sameText } from '#libs/database/typed-fragments.js';

@Injectable()
export class EmbeddingConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(EmbeddingConfigEntity);
  }

  list(workspaceId: string): Promise<EmbeddingConfigEntity[]> {
    return entityList(
      this.db,
      this.repo,
      (q) => q.selectFrom('embedding_configs').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
    );
  }

  /** By id (a UUID) or by name, case-insensitively. */
  async findByRef(workspaceId: string, ref: string): Promise<EmbeddingConfigEntity | null> {
    const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('embedding_configs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => (isUuid ? eb.or([eb('id', '=', ref), sameText(eb, 'name', ref)]) : sameText(eb, 'name', ref)))
        // One at most: a new config may not be named like another's id (create answers 409).
        .limit(1),
    );
    return entitiesFrom(this.repo, rows)[0] ?? null;
  }

  async insert(config: Partial<EmbeddingConfigEntity>): Promise<EmbeddingConfigEntity> {
    const repo = this.repo;
    return repo.save(repo.create(config));
  }
}
