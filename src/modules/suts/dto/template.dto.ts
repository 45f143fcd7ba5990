import { ApiProperty } from '@nestjs/swagger';
import type { SutTemplate } from '../../../../libs/evaluation/sut/templates.js';
import { CONNECTION_KINDS } from '../../../../libs/evaluation/sut/sut.types.js';
import { CreateAdapterRequest } from './adapter.dto.js';

export class SutTemplateConnectionDto {
  @ApiProperty({ enum: CONNECTION_KINDS })
  kind: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'For kind http: {url, method, headers}' })
  http?: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'For kind openai_chat: {base_url, model, parameters, headers}' })
  openai_chat?: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'Where the key goes ({scheme, header?, prefix?, param?}); add your secret_id' })
  auth: Record<string, unknown> | null;
  timeout_ms: number;
  max_concurrency: number;
  @ApiProperty({ type: 'number', nullable: true })
  requests_per_second: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  retry: Record<string, unknown>;
}

/** A ready connection and adapter: POST the connection (with your URL and secret), then the adapter. */
export class SutTemplateDto {
  id: string;
  name: string;
  description: string;
  connection: SutTemplateConnectionDto;
  adapter: CreateAdapterRequest;
  /** Which dataset columns the adapter reads */
  row_mapping_hint: string;
}

export class SutTemplateList {
  @ApiProperty({ type: () => [SutTemplateDto] })
  items: SutTemplate[];
  total: number;
}
