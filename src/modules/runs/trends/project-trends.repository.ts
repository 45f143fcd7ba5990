import { Injectable } from '@nestjs/common';
import { Db } from '#libs/database/unit-of-work.js';
import type { TrendRunFilter } from '../../projects/projects.service.js';
import type { TrendCell, TrendRun } from './trend.js';

/** What a project's trend reads of its runs and their items. */
@Injectable()
export class ProjectTrendsRepository {
  constructor(private readonly db: Db) {}

  /** A project's trend: the runs of its SUTs or datasets in the window, oldest first. */
  trendRuns(workspaceId: string, f: TrendRunFilter): Promise<TrendRun[]> {
    return this.db.query(
      `SELECT id, name, state, sut_id, dataset_id, created_at FROM (
         -- A run's documented state (runStateOf): an offline run awaiting its upload is queued without a job.
         SELECT id, name, CASE WHEN state = 'queued' AND job_id IS NULL THEN 'awaiting_upload' ELSE state END AS state,
                sut_id, dataset_id, created_at, workspace_id FROM runs) runs
        WHERE workspace_id = $1 AND (sut_id = ANY($2::uuid[]) OR dataset_id = ANY($3::uuid[])) AND state = ANY($4::text[])
          AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6)
        ORDER BY created_at, id LIMIT 1000`,
      [workspaceId, f.sutIds, f.datasetIds, f.states, f.from ?? null, f.to ?? null],
    );
  }

  /** Per run, metric and group value: the sum, count, range and verdicts of numeric scores. */
  async trendCells(
    workspaceId: string,
    runIds: string[],
    metrics: string[] | null,
    groupBy: string | null,
  ): Promise<TrendCell[]> {
    if (!runIds.length) return [];
    const rows: Array<Omit<TrendCell, 'created_at'> & { created_at: Date }> = await this.db.query(
      `SELECT r.id AS run_id, r.created_at, m.key AS metric, CASE WHEN $4::text IS NULL THEN NULL ELSE i.dimensions ->> $4::text END AS "group",
              sum((m.value ->> 'score')::float8) AS sum, count(*)::int AS count,
              min((m.value ->> 'score')::float8) AS min, max((m.value ->> 'score')::float8) AS max,
              count(*) FILTER (WHERE m.value -> 'passed' = 'true'::jsonb)::int AS passed,
              count(*) FILTER (WHERE jsonb_typeof(m.value -> 'passed') = 'boolean')::int AS verdicts
         FROM runs r JOIN run_items i ON i.run_id = r.id AND i.workspace_id = r.workspace_id
         CROSS JOIN LATERAL jsonb_each(coalesce(i.scores, '{}'::jsonb)) m
        WHERE r.workspace_id = $1 AND r.id = ANY($2::uuid[]) AND jsonb_typeof(m.value -> 'score') = 'number'
          AND ($3::text[] IS NULL OR m.key = ANY($3::text[]))
        GROUP BY r.id, r.created_at, m.key, 4`,
      [workspaceId, runIds, metrics, groupBy],
    );
    return rows.map((r) => ({
      ...r,
      created_at: new Date(r.created_at),
      sum: Number(r.sum),
      min: Number(r.min),
      max: Number(r.max),
    }));
  }
}
