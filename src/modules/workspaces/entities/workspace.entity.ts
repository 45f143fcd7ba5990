import { Column, Entity, VersionColumn } from 'typeorm';
import { BaseRecord } from '#libs/database/entity-columns.js';

/** How the workspace embeds text (clustering, similarity metrics). */
export interface EmbeddingConfigValue {
  /** `local`: the built-in embedder, no network. `remote`: an embedding config of the catalogue. */
  provider: 'local' | 'remote';
  /** Name or id of an embedding config (catalogue) when provider is `remote`. */
  config_ref?: string;
  model?: string;
  dimensions?: number;
}

@Entity('workspaces')
export class WorkspaceEntity extends BaseRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'embedding_config', type: 'jsonb', default: { provider: 'local' } })
  embeddingConfig: EmbeddingConfigValue;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @VersionColumn({ default: 1 })
  version: number;
}
