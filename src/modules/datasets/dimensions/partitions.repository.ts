import { Injectable } from '@nestjs/common';
import type { Selectable } from 'kysely';
import type { DatasetPartitions, JsonObject } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';

/** The level column's CHECK constraint. */
export type PartitionLevel = 'session' | 'trace' | 'span';

const COLUMNS = [
  'id',
  'dataset_id',
  'version_id',
  'name',
  'description',
  'level',
  'dimension_values',
  'filter',
  'created_by',
  'created_at',
] as const;

/** What the JSON columns and the CHECK-constrained level hold. */
interface Narrowed {
  level: PartitionLevel;
  dimension_values: Record<string, string[]>;
  filter: JsonObject | null;
}

export type PartitionRow = Omit<Pick<Selectable<DatasetPartitions>, (typeof COLUMNS)[number]>, keyof Narrowed> &
  Narrowed;

/** Saved partitions of dataset versions. */
@Injectable()
export class PartitionsRepository {
  constructor(private readonly db: Db) {}

  async nameTaken(versionId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'dataset_partitions', { column: 'version_id', value: versionId }, name);
  }

  async insert(
    p: Omit<PartitionRow, 'id' | 'created_at' | 'filter'> & { workspace_id: string; filter: object | null },
  ): Promise<PartitionRow> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('dataset_partitions')
        .values({
          workspace_id: p.workspace_id,
          dataset_id: p.dataset_id,
          version_id: p.version_id,
          name: p.name,
          description: p.description,
          level: p.level,
          dimension_values: JSON.stringify(p.dimension_values),
          filter: p.filter ? JSON.stringify(p.filter) : null,
          created_by: p.created_by,
        })
        .returning(COLUMNS)
        .$narrowType<Narrowed>(),
    );
    return created;
  }

  list(versionId: string): Promise<PartitionRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('dataset_partitions')
        .select(COLUMNS)
        .where('version_id', '=', versionId)
        .orderBy('created_at')
        .orderBy('id')
        .$narrowType<Narrowed>(),
    );
  }

  async find(versionId: string, id: string): Promise<PartitionRow | undefined> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('dataset_partitions')
        .select(COLUMNS)
        .where('id', '=', id)
        .where('version_id', '=', versionId)
        .$narrowType<Narrowed>(),
    );
    return row;
  }

  /** Whether the partition is one of the workspace's dataset's (of any of its versions). */
  async ofDataset(workspaceId: string, datasetId: string, id: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_partitions')
        .select('id')
        .where('id', '=', id)
        .where('dataset_id', '=', datasetId)
        .where('workspace_id', '=', workspaceId),
    );
    return rows.length > 0;
  }

  async delete(versionId: string, id: string): Promise<boolean> {
    const deleted = await this.db.typed((q) =>
      q.deleteFrom('dataset_partitions').where('id', '=', id).where('version_id', '=', versionId).returning('id'),
    );
    return deleted.length > 0;
  }
}
