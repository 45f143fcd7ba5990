import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsUrl, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { CreateCatalogueEntryRequest } from './catalogue-entry.dto.js';
import { NOTIFICATION_EVENTS, type NotificationEvent } from '../entities/notification-config.entity.js';

const present = (_: object, value: unknown) => value !== undefined;

export class ListNotificationConfigsQuery extends PageQueryDto {
  /** The workspace whose webhooks to list */
  @IsUUID()
  workspace_id: string;
}

export class CreateNotificationConfigRequest extends CreateCatalogueEntryRequest {
  /** Where deliveries are POSTed (http or https) */
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'], require_tld: false }) @MaxLength(2000)
  url: string;

  @ApiProperty({ enum: NOTIFICATION_EVENTS, isArray: true })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(NOTIFICATION_EVENTS.length) @IsIn(NOTIFICATION_EVENTS, { each: true })
  events: NotificationEvent[];

  /** The workspace secret whose value signs deliveries; left out, the service creates one (`webhook-<name>`, 32 random bytes) you read with POST .../secrets/{id}/reveal */
  @ValidateIf(present) @IsUUID()
  secret_id?: string;

  /** Default true */
  @ValidateIf(present) @IsBoolean()
  enabled?: boolean;
}

export class WebhookSigningDto {
  @ApiProperty({ enum: ['HMAC-SHA256'] })
  algorithm: 'HMAC-SHA256';
  /** The request header that carries the signature */
  header: string;
  /** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the secret's value>` */
  format: string;
}

export class NotificationConfigResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  url: string;
  @ApiProperty({ enum: NOTIFICATION_EVENTS, isArray: true })
  events: NotificationEvent[];
  enabled: boolean;
  /** The workspace secret that signs deliveries (its value never appears here) */
  secret_id: string;
  /** Whether this call created that secret */
  @ApiPropertyOptional()
  secret_created?: boolean;
  signing: WebhookSigningDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
}
