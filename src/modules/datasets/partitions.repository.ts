import { Injectable } from '@nestjs/common';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';

export interface PartitionRow {
  id: string;
  dataset_id: string;
  version_id: string;
  name: string;
  description: string;
  level: 'session' | 'trace' | 'span';
  dimension_values: Record<string, string[]>;
  filter: Record<string, unknown> | null;
  created_by: string | null;
  created_at: Date;
}

const COLUMNS =
  'id, dataset_id, version_id, name, description, level, dimension_values, filter, created_by, created_at';

/** Saved partitions of dataset versions. */
@Injectable()
export class PartitionsRepository {
  constructor(private readonly db: Db) {}

  async nameTaken(versionId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'dataset_partitions', { column: 'version_id', value: versionId }, name);
  }

  async insert(p: Omit<PartitionRow, 'id' | 'created_at'> & { workspace_id: string }): Promise<PartitionRow> {
    const [created]: PartitionRow[] = await this.db.query(
      `INSERT INTO dataset_partitions (workspace_id, dataset_id, version_id, name, description, level, dimension_values, filter, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        p.workspace_id,
        p.dataset_id,
        p.version_id,
        p.name,
        p.description,
        p.level,
        JSON.stringify(p.dimension_values),
        p.filter ? JSON.stringify(p.filter) : null,
        p.created_by,
      ],
    );
    return created;
  }

  list(versionId: string): Promise<PartitionRow[]> {
    return this.db.query(`SELECT ${COLUMNS} FROM dataset_partitions WHERE version_id = $1 ORDER BY created_at, id`, [
      versionId,
    ]);
  }

  async find(versionId: string, id: string): Promise<PartitionRow | undefined> {
    const [row]: PartitionRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM dataset_partitions WHERE id = $1 AND version_id = $2`,
      [id, versionId],
    );
    return row;
  }

  /** Whether the partition is one of the workspace's dataset's (of any of its versions). */
  async ofDataset(workspaceId: string, datasetId: string, id: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      'SELECT 1 FROM dataset_partitions WHERE id = $1 AND dataset_id = $2 AND workspace_id = $3',
      [id, datasetId, workspaceId],
    );
    return rows.length > 0;
  }

  async delete(versionId: string, id: string): Promise<boolean> {
    const [, deleted]: [unknown, number] = await this.db.query(
      'DELETE FROM dataset_partitions WHERE id = $1 AND version_id = $2',
      [id, versionId],
    );
    return deleted > 0;
  }
}
