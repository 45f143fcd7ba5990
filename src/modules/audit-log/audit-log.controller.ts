import { Body, Controller, Get, Headers, Put, Query, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentUser, CurrentWorkspace, SystemAdmin, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { sendFile } from '#libs/common/file-answer.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AuditLogService } from './audit-log.service.js';
import {
  AuditEventPageResponse,
  AuditRetentionResponse,
  ExportAuditEventsQuery,
  ListAuditEventsQuery,
  PutAuditRetentionRequest,
} from './dto/audit-log.dto.js';

const WORKSPACE = { param: 'workspace_id' } as const;
const EXPORT_FILE = {
  description: 'The events, newest first: JSON Lines (`format=jsonl`, the default) or CSV (`format=csv`)',
  content: {
    'application/x-ndjson': {
      schema: {
        type: 'string',
        example:
          '{"id":"4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d","action":"secret.revealed","actor_email":"ada@example.com",…}\n',
      },
    },
    'text/csv': {
      schema: {
        type: 'string',
        example:
          'created_at,id,workspace_id,action,actor_id,actor_email,target_type,target_id,request_id,details\n' +
          '2025-05-12T09:30:00.000Z,4d3c…,8b1f…,secret.revealed,2f4e…,ada@example.com,secret,7571…,3f0c…,"{""name"":""OPENAI_API_KEY""}"\n',
      },
    },
  },
};

/** The audit log: a workspace's (admins) and the system's (system admins). An addition beside the specification. */
@ApiTags('audit')
@Controller()
export class AuditLogController {
  constructor(private readonly auditLog: AuditLogService) {}

  /** The workspace's audit events, newest first, filtered by actor, action (or its prefix), target and time, a page at a time by cursor (admins). */
  @Get('workspaces/:workspace_id/audit-events')
  @ApiOperation({ operationId: 'listAuditEvents' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: AuditEventPageResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, audit_cursor_invalid' })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
    @Query() query: ListAuditEventsQuery,
  ): Promise<AuditEventPageResponse> {
    return this.auditLog.list(access.workspaceId, query);
  }

  /** Every audit event of the workspace the filters match, streamed as JSON Lines or CSV (admins). Audited as audit_log.exported. */
  @Get('workspaces/:workspace_id/audit-events/export')
  @ApiOperation({ operationId: 'exportAuditEvents' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiProduces('application/x-ndjson', 'text/csv')
  @ApiOkResponse(EXPORT_FILE)
  async export(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
    @Query() query: ExportAuditEventsQuery,
    @Headers('accept') accept: string | undefined,
    @CurrentUser() caller: Principal,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.auditLog.export(access.workspaceId, query, accept, caller));
  }

  /** How long the workspace keeps its audit events: its own setting, the service's default and what applies (admins). */
  @Get('workspaces/:workspace_id/audit-retention')
  @ApiOperation({ operationId: 'getAuditRetention' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: AuditRetentionResponse })
  getRetention(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
  ): Promise<AuditRetentionResponse> {
    return this.auditLog.retention(access);
  }

  /** Sets how many days the workspace keeps its audit events (30 to 36500); null follows the service's default (admins). Audited as audit_retention.updated. */
  @Put('workspaces/:workspace_id/audit-retention')
  @ApiOperation({ operationId: 'setAuditRetention' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: AuditRetentionResponse })
  putRetention(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
    @Body() body: PutAuditRetentionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AuditRetentionResponse> {
    return this.auditLog.putRetention(access, body.retention_days, caller);
  }

  /** The system's own audit events, those of no workspace (users created and changed, logins, system roles, branding), newest first, by cursor (system admins). */
  @Get('audit-events')
  @ApiOperation({ operationId: 'listSystemAuditEvents' })
  @SystemAdmin()
  @ApiOkResponse({ type: AuditEventPageResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, audit_cursor_invalid' })
  listSystem(@Query() query: ListAuditEventsQuery): Promise<AuditEventPageResponse> {
    return this.auditLog.list(null, query);
  }

  /** Every system audit event the filters match, streamed as JSON Lines or CSV (system admins). Audited as audit_log.exported. */
  @Get('audit-events/export')
  @ApiOperation({ operationId: 'exportSystemAuditEvents' })
  @SystemAdmin()
  @ApiProduces('application/x-ndjson', 'text/csv')
  @ApiOkResponse(EXPORT_FILE)
  async exportSystem(
    @Query() query: ExportAuditEventsQuery,
    @Headers('accept') accept: string | undefined,
    @CurrentUser() caller: Principal,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.auditLog.export(null, query, accept, caller));
  }
}
