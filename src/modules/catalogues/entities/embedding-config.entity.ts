import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export const REMOTE_EMBEDDING_PROVIDERS = ['openai_compatible', 'azure_openai'] as const;
export type RemoteEmbeddingProvider = (typeof REMOTE_EMBEDDING_PROVIDERS)[number];

/** A remote embeddings endpoint a workspace can embed text with (its key is a workspace secret). */
@Entity('embedding_configs')
export class EmbeddingConfigEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  provider: RemoteEmbeddingProvider;

  @Column({ name: 'base_url', type: 'text' })
  baseUrl: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ type: 'integer', nullable: true })
  dimensions: number | null;

  @Column({ name: 'batch_size', type: 'integer', default: 64 })
  batchSize: number;

  @Column({ name: 'secret_id', type: 'uuid', nullable: true })
  secretId: string | null;
}
