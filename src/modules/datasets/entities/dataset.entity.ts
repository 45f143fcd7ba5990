import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export const DATASET_KINDS = ['rows', 'traces'] as const;
export type DatasetKind = (typeof DATASET_KINDS)[number];

/** A named collection of test cases (or landed traces) whose content lives in immutable versions. */
@Entity('datasets')
export class DatasetEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text', default: 'rows' })
  kind: DatasetKind;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  tags: string[];

  /** The promoted version (null until one is promoted). */
  @Column({ name: 'current_version_id', type: 'uuid', nullable: true })
  currentVersionId: string | null;

  /** Number of the newest version (0 before the first). */
  @Column({ name: 'latest_version', type: 'integer', default: 0 })
  latestVersion: number;

  /** Next row ordinal to hand out; rows keep theirs across versions, so order is stable. */
  @Column({
    name: 'next_ordinal',
    type: 'bigint',
    default: 0,
    transformer: { to: (v: number) => v, from: (v: string | number) => Number(v) },
  })
  nextOrdinal: number;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;

  /** The version number a trace landing has reserved while its batches commit (null: none); versions made meanwhile wait or are 409 dataset_busy. */
  @Column({ name: 'writing_version', type: 'integer', nullable: true, select: false })
  writingVersion: number | null;
}
