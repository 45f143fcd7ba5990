import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsString, IsUrl, IsUUID, Matches, MaxLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { NOTIFICATION_EVENTS, type NotificationEvent } from '../entities/notification-config.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const present = (_: object, value: unknown) => value !== undefined;

export class ListNotificationConfigsQuery extends PageQueryDto {
  /** The workspace whose webhooks to list */
  @IsUUID()
  workspace_id: string;
}

export class CreateNotificationConfigRequest {
  /** The workspace that will own the webhook (admins) */
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace, case-insensitively */
  @Transform(trim) @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, { message: 'name must be 1..100 letters, digits, spaces or . _ : - and start with a letter or digit' })
  name: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

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
