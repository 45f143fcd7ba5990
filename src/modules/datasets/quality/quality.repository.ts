import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import type { DataOperationRuns, JsonObject } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import {
  TRACKED_COLUMNS,
  trackedRecord,
  type TrackedColumns,
  type TrackedFailure,
  type TrackedState,
} from '#libs/queue/tracked-job.js';

/** Data-operation runs run in the request (no job), but keep the tracked columns all background operations keep. */
export const DATA_OPERATION_RUNS = trackedRecord('data_operation_runs', 'run_id');

const COLUMNS = [
  'id',
  'dataset_id',
  'version_id',
  'kind',
  'params',
  'verdict',
  'result',
  'created_by',
  ...TRACKED_COLUMNS,
] as const;

/** What the CHECK-constrained and JSON columns hold, as far as the types can say. */
interface Narrowed {
  state: TrackedState;
  verdict: 'pass' | 'warn' | 'fail' | null;
  params: JsonObject;
  progress: JsonObject | null;
}

/** A run as stored: its result is the JSON its kind's check wrote (`R`), its failure the tracked-job model's. */
export type OperationRunRow<R> = Omit<
  Pick<Selectable<DataOperationRuns>, (typeof COLUMNS)[number]>,
  'result' | 'failure' | keyof Narrowed
> &
  Narrowed &
  Pick<TrackedColumns, 'failure'> & { result: R | null };

type StoredRun = Omit<OperationRunRow<never>, 'result' | 'failure'> &
  Pick<Selectable<DataOperationRuns>, 'result' | 'failure'>;

/** The JSON columns as what was written to them (the database holds them as any JSON). */
function run<R>(row: StoredRun): OperationRunRow<R> {
  return { ...row, result: row.result as R | null, failure: row.failure as unknown as TrackedFailure | null };
}

/** Data-operation runs (quality checks) of dataset versions: each run is kept with its verdict. */
@Injectable()
export class QualityRepository {
  constructor(private readonly db: Db) {}

  /** A new run (queued: `TrackedRecords` starts and ends it). */
  async insert<R>(record: {
    workspaceId: string;
    datasetId: string;
    versionId: string;
    kind: string;
    params: unknown;
    createdBy: string;
  }): Promise<OperationRunRow<R>> {
    const [row] = await this.db.typed((q) =>
      q
        .insertInto('data_operation_runs')
        .values({
          workspace_id: record.workspaceId,
          dataset_id: record.datasetId,
          version_id: record.versionId,
          kind: record.kind,
          params: JSON.stringify(record.params),
          created_by: record.createdBy,
        })
        .returning(COLUMNS)
        .$narrowType<Narrowed>(),
    );
    return run<R>(row);
  }

  async saveVerdict(id: string, verdict: string, result: unknown): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('data_operation_runs')
        .set({ verdict, result: JSON.stringify(result) })
        .where('id', '=', id),
    );
  }

  async latestSucceeded<R>(versionId: string, kind: string): Promise<OperationRunRow<R> | undefined> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('data_operation_runs')
        .select(COLUMNS)
        .where('version_id', '=', versionId)
        .where('kind', '=', kind)
        .where('state', '=', 'succeeded')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .$narrowType<Narrowed>(),
    );
    return row && run<R>(row);
  }

  /** The newest successful result of every version of the dataset, newest version first. */
  async latestPerVersion<R>(datasetId: string, kind: string): Promise<R[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom((sub) =>
          sub
            .selectFrom('data_operation_runs as o')
            .innerJoin('dataset_versions as v', 'v.id', 'o.version_id')
            .distinctOn('o.version_id')
            .select(['o.result', 'v.number'])
            .where('o.dataset_id', '=', datasetId)
            .where('o.kind', '=', kind)
            .where('o.state', '=', 'succeeded')
            .orderBy('o.version_id')
            .orderBy('o.created_at', 'desc')
            .orderBy('o.id', 'desc')
            .as('latest'),
        )
        .select('latest.result')
        .orderBy('latest.number', 'desc'),
    );
    return rows.map((r) => r.result as R);
  }

  async page<R>(
    versionId: string,
    window: { skip: number; take: number },
  ): Promise<[Array<OperationRunRow<R>>, number]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('data_operation_runs')
        .select(COLUMNS)
        .where('version_id', '=', versionId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(window.take)
        .offset(window.skip)
        .$narrowType<Narrowed>(),
    );
    const [{ n }] = await this.db.typed((q) =>
      q
        .selectFrom('data_operation_runs')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('version_id', '=', versionId),
    );
    return [rows.map((r) => run<R>(r)), n];
  }

  async find<R>(versionId: string, id: string): Promise<OperationRunRow<R> | undefined> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('data_operation_runs')
        .select(COLUMNS)
        .where('id', '=', id)
        .where('version_id', '=', versionId)
        .$narrowType<Narrowed>(),
    );
    return row && run<R>(row);
  }
}
