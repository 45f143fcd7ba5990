import { Body, Controller, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { JudgeValidationResponse } from '../../catalogues/dto/judge-validation.dto.js';
import { CreateJudgeValidationRequest } from '../dto/judge-validation.dto.js';
import { JudgeValidityService } from './judge-validity.service.js';

const RUN = { resource: 'run', param: 'run_id' } as const;

@ApiTags('runs')
@Controller('runs')
export class JudgeValidityController {
  constructor(private readonly validity: JudgeValidityService) {}

  /**
   * Validates a judged metric of the run against human labels of its rows (members): a column of
   * the rows' data (`human.field`) or labels per row (`human.labels`). Each labelled row's first
   * repetition pairs the judge's verdict with the human label; the confusion matrix, true
   * positive and true negative rates (Wilson intervals), accuracy and Cohen's kappa (seeded
   * bootstrap), Spearman's rho and the mean absolute error on numeric scales, per dimension value
   * with `by_dimension`, are kept with the metric's config version. Runs scored by that version
   * then report corrected pass rates, and the release gate can require the validation.
   */
  @Post(':run_id/judge-validations')
  @ApiOperation({ operationId: 'createRunJudgeValidation' })
  @WorkspaceRoleRequired('member', RUN)
  @ApiCreatedResponse({ type: JudgeValidationResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, validation_labels_invalid' })
  @ApiUnprocessableEntityResponse({
    type: ProblemResponse,
    description:
      'validation_metric_invalid, validation_no_overlap, validation_too_few_pairs, validation_too_many_pairs',
  })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
    @Body() body: CreateJudgeValidationRequest,
    @CurrentUser() caller: Principal,
  ): Promise<JudgeValidationResponse> {
    return this.validity.validate(access, runId, body, caller);
  }
}
