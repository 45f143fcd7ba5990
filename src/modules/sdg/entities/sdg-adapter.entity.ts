import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { SdgSpec } from '../sdg.types.js';

/** How synthetic rows are made: templates over seed rows and dimension values, or an LLM through a judge connection. */
@Entity('sdg_adapters')
export class SdgAdapterEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  kind: 'template' | 'llm';

  @Column({ type: 'jsonb' })
  spec: SdgSpec;

  @Column({ name: 'judge_id', type: 'uuid', nullable: true })
  judgeId: string | null;
}
