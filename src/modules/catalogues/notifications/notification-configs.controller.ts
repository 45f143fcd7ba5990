import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateNotificationConfigRequest,
  ListNotificationConfigsQuery,
  NotificationConfigResponse,
} from '../dto/notification-config.dto.js';
import { NotificationConfigsService } from './notification-configs.service.js';

@ApiTags('notifications')
@Controller('notifications/config')
export class NotificationConfigsController {
  constructor(private readonly configs: NotificationConfigsService) {}

  /** The workspace's webhooks (admins: they name where data is sent). */
  @Get()
  @ApiOperation({ operationId: 'listNotificationConfigs' })
  @WorkspaceRoleRequired('admin', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(NotificationConfigResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListNotificationConfigsQuery,
  ): Promise<Page<NotificationConfigResponse>> {
    return this.configs.list(access, query);
  }

  /** Adds a webhook for some events, signed with a workspace secret (created when none is named) (admins). */
  @Post()
  @ApiOperation({ operationId: 'createNotificationConfig' })
  @WorkspaceRoleRequired('admin', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: NotificationConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'notification_config_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateNotificationConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<NotificationConfigResponse> {
    return this.configs.create(access, body, caller);
  }

  /** Deletes a webhook (admins). */
  @Delete(':notification_config_id')
  @ApiOperation({ operationId: 'deleteNotificationConfig' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', { resource: 'notification_config', param: 'notification_config_id' })
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('notification_config_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.configs.delete(access, id, caller);
  }
}
