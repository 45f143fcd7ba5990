import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsUrl, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { catalogueEntryRequest } from './catalogue-entry.dto.js';
import { NOTIFICATION_EVENTS, type NotificationEvent } from '../entities/notification-config.entity.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class ListNotificationConfigsQuery extends PageQueryDto {
  /** The workspace whose webhooks to list */
  @IsUUID()
  workspace_id: string;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: 'ci-alerts',
  description: 'Tell the release channel when a run fails',
  url: 'https://hooks.example.com/ews',
  events: ['run.failed', 'quality_check.failed'],
  enabled: true,
})
export class CreateNotificationConfigRequest extends catalogueEntryRequest({
  creator: 'admin',
  name: 'ci-alerts',
  description: 'Tell the release channel when a run fails',
}) {
  /** Where deliveries are POSTed (http or https) */
  @ApiProperty({ example: 'https://hooks.example.com/ews' })
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'], require_tld: false })
  @MaxLength(2000)
  url: string;

  @ApiProperty({
    maxItems: NOTIFICATION_EVENTS.length,
    enum: NOTIFICATION_EVENTS,
    isArray: true,
    example: ['run.failed', 'quality_check.failed'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(NOTIFICATION_EVENTS.length)
  @IsIn(NOTIFICATION_EVENTS, { each: true })
  events: NotificationEvent[];

  /** The workspace secret whose value signs deliveries; left out, the service creates one (`webhook-<name>`, 32 random bytes) you read with POST .../secrets/{id}/reveal */
  @ApiPropertyOptional({ example: EXAMPLE_ID.otherSecret })
  @ValidateIfPresent()
  @IsUUID()
  secret_id?: string;

  /** Default true */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  enabled?: boolean;
}

export class WebhookSigningDto {
  @ApiProperty({ enum: ['HMAC-SHA256'], example: 'HMAC-SHA256' })
  algorithm: 'HMAC-SHA256';
  /** The request header that carries the signature */
  @ApiProperty({ example: 'X-EWS-Signature' })
  header: string;
  /** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the secret's value>` */
  @ApiProperty({ example: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">' })
  format: string;
}

export class NotificationConfigResponse {
  @ApiProperty({ example: EXAMPLE_ID.notificationConfig })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'ci-alerts' })
  name: string;
  @ApiProperty({ example: 'Tell the release channel when a run fails' })
  description: string;
  @ApiProperty({ example: 'https://hooks.example.com/ews' })
  url: string;
  @ApiProperty({ enum: NOTIFICATION_EVENTS, isArray: true, example: ['run.failed', 'quality_check.failed'] })
  events: NotificationEvent[];
  @ApiProperty({ example: true })
  enabled: boolean;
  /** The workspace secret that signs deliveries (its value never appears here) */
  @ApiProperty({ example: EXAMPLE_ID.otherSecret })
  secret_id: string;
  /** Whether this call created that secret */
  @ApiPropertyOptional({ example: true })
  secret_created?: boolean;
  signing: WebhookSigningDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}
