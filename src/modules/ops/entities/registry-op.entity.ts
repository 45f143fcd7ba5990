import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const OP_KINDS = ['metric', 'check', 'enrichment', 'transform'] as const;
export type OpKind = (typeof OP_KINDS)[number];

/** One version of an operation a workspace registered, served by one of its custom ops. */
@Entity('registry_ops')
export class RegistryOpEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'op_version', type: 'integer' })
  opVersion: number;

  @Column({ type: 'text' })
  kind: OpKind;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'params_schema', type: 'jsonb' })
  paramsSchema: Record<string, unknown>;

  @Column({ name: 'custom_op_id', type: 'uuid' })
  customOpId: string;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  createdAt: Date;
}
