import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, PageQueryDto, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  AlertCheckResponse,
  AlertEventResponse,
  AlertRuleResponse,
  CreateAlertRuleRequest,
  UpdateAlertRuleRequest,
} from './dto/online-alerts.dto.js';
import { OnlineAlertRulesService } from './alert-rules.service.js';

const EVALUATOR = { resource: 'online_evaluator', param: 'evaluator_id' } as const;
const RULE = { resource: 'online_alert_rule', param: 'alert_rule_id' } as const;

/** Alert rules on an online evaluator's scores: a recent window's pass rate tested against a reference, with hysteresis. */
@ApiTags('online alerts')
@Controller()
export class OnlineAlertsController {
  constructor(private readonly rules: OnlineAlertRulesService) {}

  /** Makes an alert rule on one of the evaluator's metrics and queues its first check (members). */
  @Post('online-evaluators/:evaluator_id/alert-rules')
  @ApiOperation({ operationId: 'createOnlineAlertRule' })
  @WorkspaceRoleRequired('member', EVALUATOR)
  @ApiCreatedResponse({ type: AlertRuleResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'alert_rule_invalid, validation_failed' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'alert_rule_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') evaluatorId: string,
    @Body() body: CreateAlertRuleRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AlertRuleResponse> {
    return this.rules.create(access, evaluatorId, body, caller);
  }

  /** The evaluator's alert rules with their alerts' state, newest first (viewers). */
  @Get('online-evaluators/:evaluator_id/alert-rules')
  @ApiOperation({ operationId: 'listOnlineAlertRules' })
  @WorkspaceRoleRequired('viewer', EVALUATOR)
  @ApiOkResponse({ type: PageOf(AlertRuleResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') evaluatorId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<AlertRuleResponse>> {
    return this.rules.list(access, evaluatorId, query);
  }

  /** One alert rule with its alert's state and last evaluation (viewers). */
  @Get('online-alert-rules/:alert_rule_id')
  @ApiOperation({ operationId: 'getOnlineAlertRule' })
  @WorkspaceRoleRequired('viewer', RULE)
  @ApiOkResponse({ type: AlertRuleResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('alert_rule_id') id: string): Promise<AlertRuleResponse> {
    return this.rules.get(access, id);
  }

  /** Changes an alert rule (members); a change of its statistics starts the alert again from ok. */
  @Patch('online-alert-rules/:alert_rule_id')
  @ApiOperation({ operationId: 'updateOnlineAlertRule' })
  @WorkspaceRoleRequired('member', RULE)
  @ApiOkResponse({ type: AlertRuleResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'alert_rule_invalid, validation_failed' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'alert_rule_name_taken' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('alert_rule_id') id: string,
    @Body() body: UpdateAlertRuleRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AlertRuleResponse> {
    return this.rules.update(access, id, body, caller);
  }

  /** Deletes an alert rule with its history (admins). */
  @Delete('online-alert-rules/:alert_rule_id')
  @ApiOperation({ operationId: 'deleteOnlineAlertRule' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', RULE)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('alert_rule_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.rules.delete(access, id, caller);
  }

  /** The rule's firings and resolutions with their evidence, newest first (viewers). */
  @Get('online-alert-rules/:alert_rule_id/events')
  @ApiOperation({ operationId: 'listOnlineAlertEvents' })
  @WorkspaceRoleRequired('viewer', RULE)
  @ApiOkResponse({ type: PageOf(AlertEventResponse) })
  events(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('alert_rule_id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<AlertEventResponse>> {
    return this.rules.events(access, id, query);
  }

  /** Checks the rule now as its schedule does (members): the evaluation, and the alert's state moved by it. */
  @Post('online-alert-rules/:alert_rule_id\\:check')
  @ApiOperation({ operationId: 'runOnlineAlertCheck' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', RULE)
  @ApiOkResponse({ type: AlertCheckResponse })
  check(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('alert_rule_id') id: string,
  ): Promise<AlertCheckResponse> {
    return this.rules.checkNow(access, id);
  }
}
