import { Body, Controller, Get, HttpCode, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import { AnalysisService } from './analysis.service.js';
import {
  AnalysisQueryRequest,
  AnalysisRunResponse,
  CreateAnalysisRunRequest,
  CreateClusterRunRequest,
  DatasetClustersAvailability,
  DatasetClustersResult,
  DatasetClustersRun,
  TextAnalysisResult,
  VisualAnalysisResult,
} from './dto/analysis.dto.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' } as const;
const OPEN = { type: 'object', additionalProperties: true } as const;
const ROWS = { type: 'array', items: OPEN } as const;

@ApiTags('analysis')
@Controller('datasets/:dataset_id/versions/:version_id')
export class AnalysisController {
  constructor(private readonly analysis: AnalysisService) {}

  /** The version's analysis runs, newest first (viewers). */
  @Get('analysis-runs')
  @ApiOperation({ operationId: 'listAnalysisRuns' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [AnalysisRunResponse] })
  listRuns(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<AnalysisRunResponse[]> {
    return this.analysis.listRuns(access, datasetId, versionId);
  }

  /** Starts text, annotation and visual analyses of the version through the queue (members); read them under analysis/* once it succeeds. */
  @Post('analysis-runs')
  @ApiOperation({ operationId: 'startAnalysisRun' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiCreatedResponse({ type: AnalysisRunResponse })
  createRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: CreateAnalysisRunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AnalysisRunResponse> {
    return this.analysis.createRun(access, datasetId, versionId, body, caller);
  }

  /** One analysis run with its state and progress (viewers). */
  @Get('analysis-runs/:run_id')
  @ApiOperation({ operationId: 'getAnalysisRun' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: AnalysisRunResponse })
  getRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('run_id') runId: string,
  ): Promise<AnalysisRunResponse> {
    return this.analysis.getRun(access, datasetId, versionId, runId);
  }

  /** Label distributions per label column, overall and per dimension value, and agreement (Cohen's or Fleiss' kappa) between columns labelling the same rows (viewers). */
  @Get('analysis/annotation')
  @ApiOperation({ operationId: 'getAnnotationAnalysis' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: OPEN })
  annotation(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<Record<string, unknown>> {
    return this.analysis.annotation(access, datasetId, versionId);
  }

  /** Rows by their annotation properties (viewers): the label columns, `labelled`, `agree`. */
  @Post('analysis/annotation/query')
  @ApiOperation({ operationId: 'queryAnnotationAnalysis' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: ROWS })
  annotationQuery(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: AnalysisQueryRequest,
  ): Promise<Array<Record<string, unknown>>> {
    return this.analysis.queryRows(access, datasetId, versionId, 'annotation', body);
  }

  /** What the analyses see in the version (viewers): text and label columns, the column embedded, row properties per analysis, the latest runs. */
  @Get('analysis/schema')
  @ApiOperation({ operationId: 'getAnalysisSchema' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: OPEN })
  schema(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<Record<string, unknown>> {
    return this.analysis.schema(access, datasetId, versionId);
  }

  /** Per text column: lengths in characters, words and tokens, languages, vocabulary, top terms, readability, empty rates, with histograms (viewers). */
  @Get('analysis/text')
  @ApiOperation({ operationId: 'getTextAnalysis' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: TextAnalysisResult })
  text(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<TextAnalysisResult> {
    return this.analysis.text(access, datasetId, versionId);
  }

  /** Rows by their text properties, e.g. `question.tokens` over 500 or `answer.language` not en (viewers). */
  @Post('analysis/text/query')
  @ApiOperation({ operationId: 'queryTextAnalysis' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: ROWS })
  textQuery(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: AnalysisQueryRequest,
  ): Promise<Array<Record<string, unknown>>> {
    return this.analysis.queryRows(access, datasetId, versionId, 'text', body);
  }

  /** A 2-D map of the rows' embeddings with cluster ids, for a scatter plot (viewers). */
  @Get('analysis/visual')
  @ApiOperation({ operationId: 'getVisualAnalysis' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: VisualAnalysisResult })
  visual(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<VisualAnalysisResult> {
    return this.analysis.visual(access, datasetId, versionId);
  }

  /** Rows by their map position or cluster (viewers). */
  @Post('analysis/visual/query')
  @ApiOperation({ operationId: 'queryVisualAnalysis' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: ROWS })
  visualQuery(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: AnalysisQueryRequest,
  ): Promise<Array<Record<string, unknown>>> {
    return this.analysis.queryRows(access, datasetId, versionId, 'visual', body);
  }

  /** Clusters a text column (members, 202): embedded with the workspace's embedder, k-means with k by silhouette, named by c-TF-IDF. */
  @Post('cluster-runs')
  @ApiOperation({ operationId: 'startClusterRun' })
  @WorkspaceRoleRequired('member', DATASET)
  @AcceptedAt({
    type: DatasetClustersRun,
    location: (run) => `/datasets/${run.dataset_id}/versions/${run.version_id}/cluster-runs/${run.id}`,
  })
  createClusterRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: CreateClusterRunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetClustersRun> {
    return this.analysis.createClusterRun(access, datasetId, versionId, body, caller);
  }

  /** Whether the version can be clustered, and why not (viewers). */
  @Get('cluster-runs/availability')
  @ApiOperation({ operationId: 'getClusteringAvailability' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetClustersAvailability })
  availability(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<DatasetClustersAvailability> {
    return this.analysis.clusterAvailability(access, datasetId, versionId);
  }

  /** The newest cluster run of the version, or null (viewers). */
  @Get('cluster-runs/latest')
  @ApiOperation({ operationId: 'getLatestClusterRun' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiExtraModels(DatasetClustersRun)
  @ApiOkResponse({
    description: 'The newest run, or null when there is none',
    schema: { nullable: true, allOf: [{ $ref: getSchemaPath(DatasetClustersRun) }] },
  })
  async latest(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Res() res: Response,
  ): Promise<void> {
    // Sent as JSON `null` when there is none (Nest would send an empty body).
    res.status(200).json(await this.analysis.latestClusterRun(access, datasetId, versionId));
  }

  /** One cluster run with its state (viewers). */
  @Get('cluster-runs/:run_id')
  @ApiOperation({ operationId: 'getClusterRun' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetClustersRun })
  clusterRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('run_id') runId: string,
  ): Promise<DatasetClustersRun> {
    return this.analysis.clusterRun(access, datasetId, versionId, runId);
  }

  /** The clusters (sizes, names, terms, exemplar rows) and every row's 2-D point (viewers). */
  @Get('cluster-runs/:run_id/result')
  @ApiOperation({ operationId: 'getClusterRunResult' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetClustersResult })
  @ApiConflictResponse({ type: ProblemResponse, description: 'cluster_run_not_finished' })
  clusterResult(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('run_id') runId: string,
  ): Promise<DatasetClustersResult> {
    return this.analysis.clusterResult(access, datasetId, versionId, runId);
  }
}
