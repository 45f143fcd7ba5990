import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export const VERSION_STATES = ['candidate', 'current', 'retired'] as const;
export type VersionState = (typeof VERSION_STATES)[number];

/** Inferred type and statistics of one column of a version. */
export interface ColumnStats {
  name: string;
  /** Dominant JSON type of the non-null values, `mixed` when no type has 90% of them, `null` when all are null. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null' | 'mixed';
  /** Values per JSON type, absent ones included under `null`. */
  types: Record<string, number>;
  null_count: number;
  distinct_count: number;
  min?: number | null;
  max?: number | null;
  min_length?: number | null;
  max_length?: number | null;
  mean_length?: number | null;
}

/** How a version's columns map onto the canonical fields runs and checks use. */
export interface ColumnMapping {
  input?: string;
  expected_output?: string;
  context?: string;
  session_id?: string;
  metadata?: string[];
}

export interface UploadInfo {
  filename: string;
  format: string;
  bytes: number;
}

export interface VersionChanges {
  inserted: number;
  updated: number;
  deleted: number;
}

/** One immutable state of a dataset's rows. */
@Entity('dataset_versions')
export class DatasetVersionEntity extends WorkspaceRecord {
  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId: string;

  @Column({ type: 'integer' })
  number: number;

  @Column({ type: 'text', default: 'candidate' })
  state: VersionState;

  @Column({ type: 'text', default: '' })
  message: string;

  @Column({ type: 'text' })
  source: 'upload' | 'commit' | 'generated' | 'landed';

  @Column({ name: 'parent_version_id', type: 'uuid', nullable: true })
  parentVersionId: string | null;

  @Column({ name: 'row_count', type: 'integer', default: 0 })
  rowCount: number;

  @Column({ type: 'jsonb', default: [] })
  columns: ColumnStats[];

  @Column({ type: 'jsonb', default: {} })
  mapping: ColumnMapping;

  @Column({ name: 'content_sha256', type: 'text', default: '' })
  contentSha256: string;

  @Column({ type: 'jsonb', nullable: true })
  upload: UploadInfo | null;

  @Column({ type: 'jsonb', nullable: true })
  changes: VersionChanges | null;

  @Column({ name: 'promoted_at', type: 'timestamptz', nullable: true })
  promotedAt: Date | null;

  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true })
  retiredAt: Date | null;
}
