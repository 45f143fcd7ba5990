import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TEXT_PROPERTIES, VISUAL_PROPERTIES } from '#libs/dataset-analysis/properties.js';
import { labelColumns } from '#libs/dataset-analysis/annotation.js';
import { textColumns } from '#libs/dataset-analysis/text.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { EmbeddingConfigsService } from '../catalogues/embedding-configs/embedding-configs.service.js';
import { QueryService } from '../datasets/rows/query.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import { DatasetErrors } from '../datasets/datasets.errors.js';
import { AnalysisErrors } from './analysis.errors.js';
import {
  AnalysisRepository,
  type AnalysisKind,
  type AnalysisRunRow,
  type ClusterRunRow,
  rowPropertiesContext,
} from './analysis.repository.js';
import { embeddingColumn, MIN_CLUSTER_ROWS, textOf } from './analysis-runner.job.js';
import { ANALYSIS_JOB, CLUSTER_JOB } from './analysis.jobs.js';
import {
  ANALYSIS_KINDS,
  ANALYSIS_RUN_STATES,
  MAX_ANALYSIS_ROWS,
  type AnalysisQueryRequest,
  type AnalysisRunResponse,
  type CreateAnalysisRunRequest,
  type CreateClusterRunRequest,
  type DatasetClustersAvailability,
  type DatasetClustersResult,
  type DatasetClustersRun,
  type TextAnalysisResult,
  type VisualAnalysisResult,
} from './dto/analysis.dto.js';
import { clusterRunResponse, runResponse } from './analysis.mapper.js';

const DEFAULT_SEED = 42;
const SAMPLE_ROWS = 2000;

/** Analysis runs and their results, queries over per-row properties, and clustering runs of a dataset version. */
@Injectable()
export class AnalysisService {
  constructor(
    private readonly analysis: AnalysisRepository,
    private readonly versions: VersionsService,
    private readonly query: QueryService,
    private readonly embeddings: EmbeddingConfigsService,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
  ) {}

  async listRuns(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<AnalysisRunResponse[]> {
    await this.versions.require(access, datasetId, versionId);
    return ((await this.analysis.list('analysis_runs', versionId, 100)) as AnalysisRunRow[]).map(runResponse);
  }

  async getRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    runId: string,
  ): Promise<AnalysisRunResponse> {
    await this.versions.require(access, datasetId, versionId);
    const run = await this.analysis.find('analysis_runs', runId);
    if (!run || run.version_id !== versionId) throw new NotFoundError('analysis run', runId);
    return runResponse(run);
  }

  /** Checks the columns named, then queues the run; results appear under the analysis/* paths when it succeeds. */
  async createRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    body: CreateAnalysisRunRequest,
    caller: Principal,
  ): Promise<AnalysisRunResponse> {
    const { version } = await this.versions.require(access, datasetId, versionId);
    const columns = version.columns.map((c) => c.name);
    const unknown = [
      ...(body.text_columns ?? []),
      ...(body.label_columns ?? []),
      ...(body.visual_column ? [body.visual_column] : []),
    ].filter((c) => !columns.includes(c));
    if (unknown.length)
      throw new DomainError(
        DatasetErrors.unknown_column,
        `Version ${version.number} has no column ${unknown.map((c) => `"${c}"`).join(', ')}`,
        { unknown, available: columns },
      );
    const kinds = [...new Set(body.kinds ?? ANALYSIS_KINDS)];
    const params = {
      version_number: version.number,
      mapped_input: version.mapping.input,
      text_columns: body.text_columns,
      label_columns: body.label_columns,
      visual_column: body.visual_column,
      seed: body.seed ?? DEFAULT_SEED,
    };
    const id = await this.queueRun(access, caller, 'analysis_runs', ANALYSIS_JOB, {
      datasetId,
      versionId,
      params,
      kinds,
    });
    return runResponse((await this.analysis.find('analysis_runs', id))!);
  }

  async text(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<TextAnalysisResult> {
    const { run, result } = await this.latest(access, datasetId, versionId, 'text');
    return {
      run_id: run.id,
      dataset_id: datasetId,
      version_id: versionId,
      computed_at: run.finished_at!,
      rows: result.rows as number,
      columns: result.columns as Array<Record<string, unknown>>,
    };
  }

  /** Label distributions per label column (overall and per dimension value) and the agreement between columns that label the same rows. */
  async annotation(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<Record<string, unknown>> {
    const { run, result } = await this.latest(access, datasetId, versionId, 'annotation');
    return { run_id: run.id, dataset_id: datasetId, version_id: versionId, computed_at: run.finished_at, ...result };
  }

  async visual(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<VisualAnalysisResult> {
    const { run, result } = await this.latest(access, datasetId, versionId, 'visual');
    return {
      run_id: run.id,
      dataset_id: datasetId,
      version_id: versionId,
      computed_at: run.finished_at!,
      ...(result as Omit<VisualAnalysisResult, 'run_id' | 'dataset_id' | 'version_id' | 'computed_at'>),
    };
  }

  /**
   * What the analyses see in the version: the text and label columns they pick by default (from a
   * sample of rows), the mapping and dimensions, the row properties each analysis offers to the
   * /query paths, and the latest run of each analysis.
   */
  async schema(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<Record<string, unknown>> {
    const { version } = await this.versions.require(access, datasetId, versionId);
    const sample = (await this.analysis.versionRows(datasetId, version.number, SAMPLE_ROWS)).map((r) => r.data);
    const latest = Object.fromEntries(
      await Promise.all(
        ANALYSIS_KINDS.map(async (k) => [k, (await this.analysis.latestWith(versionId, k))?.id ?? null] as const),
      ),
    );
    const rowLevel = (list: ReadonlyArray<{ name: string; level: string }>) =>
      list.filter((p) => p.level === 'row').map((p) => p.name);
    return {
      dataset_id: datasetId,
      version_id: versionId,
      rows: version.rowCount,
      columns: version.columns.map((c) => ({ name: c.name, types: c.types })),
      mapping: version.mapping,
      text_columns: textColumns(sample),
      label_columns: labelColumns(sample),
      visual_column: embeddingColumn(
        sample.map((data) => ({ data })),
        version.mapping.input,
        undefined,
      ),
      row_properties: {
        text: rowLevel(TEXT_PROPERTIES).map((p) => `<text column>.${p}`),
        annotation: ['<label column>', 'labelled', 'agree'],
        visual: rowLevel(VISUAL_PROPERTIES),
      },
      latest_runs: latest,
      max_rows: MAX_ANALYSIS_ROWS,
    };
  }

  /** Rows whose properties (of the latest run of the kind) match a filter in the query language. */
  async queryRows(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    kind: AnalysisKind,
    body: AnalysisQueryRequest,
  ): Promise<Array<Record<string, unknown>>> {
    const { run } = await this.latest(access, datasetId, versionId, kind);
    const params = run.params as { text_columns?: string[]; label_columns?: string[] };
    const result = (await this.analysis.result(run.id, kind))!;
    const columns =
      kind === 'text'
        ? ((result.columns as Array<{ column: string }>) ?? []).map((c) => c.column)
        : kind === 'annotation'
          ? [...((result.label_columns as string[]) ?? params.label_columns ?? []), 'labelled', 'agree']
          : ['x', 'y', 'cluster'];
    const compiled = this.query.compileQuery(rowPropertiesContext(columns), body.filter, body.sort);
    const rows = await this.analysis.queryRowProperties(run.id, kind, compiled, body.limit ?? 100, body.offset ?? 0);
    return rows.map((r) => ({ row_id: r.row_id, ...r.props }));
  }

  async clusterAvailability(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
  ): Promise<DatasetClustersAvailability> {
    const { version } = await this.versions.require(access, datasetId, versionId);
    const rows = await this.analysis.versionRows(datasetId, version.number, MAX_ANALYSIS_ROWS);
    const candidates = textColumns(rows.map((r) => r.data)).map((name) => ({
      name,
      non_empty: rows.filter((r) => textOf(r.data[name]).trim()).length,
    }));
    const suggested = embeddingColumn(rows, version.mapping.input, undefined);
    const usable = candidates.filter((c) => c.non_empty >= MIN_CLUSTER_ROWS);
    const reason = !rows.length
      ? 'the version has no rows'
      : !candidates.length
        ? 'the version has no text column'
        : !usable.length
          ? `no text column has at least ${MIN_CLUSTER_ROWS} non-empty values`
          : null;
    return {
      dataset_id: datasetId,
      version_id: versionId,
      available: reason === null,
      reason,
      rows: version.rowCount,
      max_rows: MAX_ANALYSIS_ROWS,
      text_columns: candidates,
      suggested_column: reason ? null : suggested,
      embedder: (await this.embeddings.embedderFor(access.workspaceId)).name,
    };
  }

  async createClusterRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    body: CreateClusterRunRequest,
    caller: Principal,
  ): Promise<DatasetClustersRun> {
    const availability = await this.clusterAvailability(access, datasetId, versionId);
    const { version } = await this.versions.require(access, datasetId, versionId);
    if (body.column && !version.columns.some((c) => c.name === body.column))
      throw new DomainError(DatasetErrors.unknown_column, `Version ${version.number} has no column "${body.column}"`, {
        unknown: [body.column],
        available: version.columns.map((c) => c.name),
      });
    const column = body.column ?? availability.suggested_column;
    const usable = availability.text_columns.find((c) => c.name === column);
    if (!availability.available || !column || (usable?.non_empty ?? 0) < MIN_CLUSTER_ROWS)
      throw new DomainError(
        AnalysisErrors.not_clusterable,
        availability.reason ?? `column "${column}" has fewer than ${MIN_CLUSTER_ROWS} non-empty text values`,
      );
    const params = { version_number: version.number, column, k: body.k ?? null, seed: body.seed ?? DEFAULT_SEED };
    const id = await this.queueRun(access, caller, 'cluster_runs', CLUSTER_JOB, { datasetId, versionId, params });
    return clusterRunResponse((await this.analysis.find('cluster_runs', id))!);
  }

  async latestClusterRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
  ): Promise<DatasetClustersRun | null> {
    await this.versions.require(access, datasetId, versionId);
    const run = await this.analysis.latestCluster(versionId);
    return run ? clusterRunResponse(run) : null;
  }

  async clusterRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    runId: string,
  ): Promise<DatasetClustersRun> {
    return clusterRunResponse(await this.requireClusterRun(access, datasetId, versionId, runId));
  }

  async clusterResult(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    runId: string,
  ): Promise<DatasetClustersResult> {
    const run = await this.requireClusterRun(access, datasetId, versionId, runId);
    if (run.state !== 'succeeded' || !run.result)
      throw new DomainError(
        AnalysisErrors.cluster_run_not_finished,
        `Cluster run ${runId} is ${ANALYSIS_RUN_STATES.show(run.state)}${run.failure ? `: ${run.failure.message}` : ''}`,
      );
    const r = run.result as unknown as Omit<DatasetClustersResult, 'run_id'>;
    return {
      run_id: run.id,
      column: r.column,
      embedder: r.embedder,
      k: r.k,
      silhouette: r.silhouette,
      projection: r.projection,
      clusters: r.clusters,
      points: r.points,
    };
  }

  private async requireClusterRun(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    runId: string,
  ): Promise<ClusterRunRow> {
    await this.versions.require(access, datasetId, versionId);
    const run = await this.analysis.find('cluster_runs', runId);
    if (!run || run.version_id !== versionId) throw new NotFoundError('cluster run', runId);
    return run;
  }

  private async latest(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    kind: AnalysisKind,
  ): Promise<{ run: AnalysisRunRow; result: Record<string, unknown> }> {
    await this.versions.require(access, datasetId, versionId);
    const run = await this.analysis.latestWith(versionId, kind);
    const result = run ? await this.analysis.result(run.id, kind) : null;
    if (!run || !result)
      throw new DomainError(
        AnalysisErrors.analysis_not_computed,
        `No ${kind} analysis of this version has succeeded yet; POST /datasets/${datasetId}/versions/${versionId}/analysis-runs with kinds ["${kind}"]`,
      );
    return { run, result };
  }

  /** Records a run of the version and queues its job in one unit of work; the run's id. */
  private queueRun(
    access: WorkspaceAccess,
    caller: Principal,
    table: 'analysis_runs' | 'cluster_runs',
    job: typeof ANALYSIS_JOB | typeof CLUSTER_JOB,
    run: { datasetId: string; versionId: string; params: Record<string, unknown>; kinds?: AnalysisKind[] },
  ): Promise<string> {
    return this.transactions.run(async () => {
      const runId = await this.analysis.insertRun(table, {
        workspace_id: access.workspaceId,
        dataset_id: run.datasetId,
        version_id: run.versionId,
        params: run.params,
        created_by: caller.userId,
        kinds: run.kinds,
      });
      await this.queue.enqueue({
        type: job,
        payload: { run_id: runId },
        workspaceId: access.workspaceId,
        targetType: 'dataset',
        targetId: run.datasetId,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: table === 'analysis_runs' ? 'analysis_run.started' : 'cluster_run.started',
        targetType: 'dataset',
        targetId: run.datasetId,
        details: {
          run_id: runId,
          version_id: run.versionId,
          ...(run.kinds ? { kinds: run.kinds } : {}),
        },
      });
      return runId;
    });
  }
}
