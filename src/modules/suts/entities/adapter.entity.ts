import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { AdapterSpec } from '#libs/evaluation/sut/sut.types.js';

/** One revision of a connection's adapter; revisions are never changed, a run records the one it used. */
@Entity('sut_adapters')
export class AdapterEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'connection_id', type: 'uuid' })
  connectionId: string;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ type: 'jsonb' })
  spec: AdapterSpec;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
