import { Injectable } from '@nestjs/common';
import { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';

@Injectable()
export class EmbeddingConfigsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(EmbeddingConfigEntity);
  }

  list(workspaceId: string): Promise<EmbeddingConfigEntity[]> {
    return this.repo.find({ where: { workspaceId }, order: { name: 'ASC', id: 'ASC' } });
  }

  /** By id (a UUID) or by name, case-insensitively. */
  async findByRef(workspaceId: string, ref: string): Promise<EmbeddingConfigEntity | null> {
    const qb = this.repo.createQueryBuilder('c').where('c.workspace_id = :workspaceId', { workspaceId });
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref))
      qb.andWhere('(c.id = CAST(:id AS uuid) OR lower(c.name) = lower(:ref))', { id: ref, ref });
    else qb.andWhere('lower(c.name) = lower(:ref)', { ref });
    return qb.getOne();
  }

  async insert(config: Partial<EmbeddingConfigEntity>): Promise<EmbeddingConfigEntity> {
    const repo = this.repo;
    return repo.save(repo.create(config));
  }
}
