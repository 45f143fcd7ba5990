import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CompareJudgeValidationsRequest,
  JudgeValidationComparisonResponse,
  JudgeValidationResponse,
  JudgeValidationSummary,
  ListJudgeValidationsQuery,
} from '../dto/judge-validation.dto.js';
import { WorkspaceQuery } from '../dto/metric-config.dto.js';
import { JudgeValidationsService } from './judge-validations.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const IN_WORKSPACE = { query: 'workspace_id' } as const;
const VALIDATION = { resource: 'judge_validation', param: 'validation_id' } as const;

/**
 * Judge validations: how far a judged metric config version agrees with human labels
 * (recorded by POST /runs/{run_id}/judge-validations), read per version and compared pairwise.
 */
@ApiTags('metric configs')
@Controller()
export class JudgeValidationsController {
  constructor(private readonly validations: JudgeValidationsService) {}

  /** A metric config version's validations, newest first, without their per-item pairs (viewers). */
  @Get('metric-configs/:config_name/:config_version/validations')
  @ApiOperation({ operationId: 'listJudgeValidations' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: PageOf(JudgeValidationSummary) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_name', PATH_TEXT.name) name: string,
    @TextParam('config_version', PATH_TEXT.version) version: string,
    @Query() query: ListJudgeValidationsQuery,
  ): Promise<Page<JudgeValidationSummary>> {
    return this.validations.list(access, name, version, query);
  }

  /** One validation with the per-item pairs it was computed from (viewers). */
  @Get('judge-validations/:validation_id')
  @ApiOperation({ operationId: 'getJudgeValidation' })
  @WorkspaceRoleRequired('viewer', VALIDATION)
  @ApiOkResponse({ type: JudgeValidationResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('validation_id') id: string,
  ): Promise<JudgeValidationResponse> {
    return this.validations.get(access, id);
  }

  /**
   * Two validations (say, of two versions of a rubric) compared on the items both hold, against
   * the human labels they share: each judge's accuracy and McNemar's exact test (viewers).
   */
  @Post('judge-validations\\:compare')
  @ApiOperation({ operationId: 'getJudgeValidationComparison' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: JudgeValidationComparisonResponse })
  @ApiUnprocessableEntityResponse({ type: ProblemResponse, description: 'judge_validations_no_shared_items' })
  compare(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() _query: WorkspaceQuery,
    @Body() body: CompareJudgeValidationsRequest,
  ): Promise<JudgeValidationComparisonResponse> {
    return this.validations.compare(access, body);
  }
}
