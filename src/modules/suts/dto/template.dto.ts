import { ApiProperty } from '@nestjs/swagger';
import type { SutTemplate } from '#libs/evaluation/sut/templates.js';
import { CONNECTION_KINDS } from '#libs/evaluation/sut/sut.types.js';
import { CreateAdapterRequest } from './adapter.dto.js';

export class SutTemplateConnectionDto {
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'openai_chat' })
  kind: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'For kind http: {url, method, headers}',
    example: null,
  })
  http?: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'For kind openai_chat: {base_url, model, parameters, headers}',
    example: {
      base_url: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      parameters: { temperature: 0 },
      headers: {},
    },
  })
  openai_chat?: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Where the key goes ({scheme, header?, prefix?, param?}); add your secret_id',
    example: { scheme: 'bearer' },
  })
  auth: Record<string, unknown> | null;
  @ApiProperty({ example: 60000 })
  timeout_ms: number;
  @ApiProperty({ example: 4 })
  max_concurrency: number;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  requests_per_second: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      max_attempts: 3,
      initial_backoff_ms: 500,
      max_backoff_ms: 10000,
      retry_on_status: [408, 409, 425, 429, 500, 502, 503, 504],
      retry_on_timeout: true,
    },
  })
  retry: Record<string, unknown>;
}

/** A ready connection and adapter: POST the connection (with your URL and secret), then the adapter. */
export class SutTemplateDto {
  @ApiProperty({ example: 'openai_chat' })
  id: string;
  @ApiProperty({ example: 'OpenAI-compatible chat' })
  name: string;
  @ApiProperty({
    example:
      'Any /chat/completions endpoint: OpenAI, vLLM, Ollama, LiteLLM, OpenRouter… The earlier turns of a session are sent as history.',
  })
  description: string;
  connection: SutTemplateConnectionDto;
  adapter: CreateAdapterRequest;
  /** Which dataset columns the adapter reads */
  @ApiProperty({
    example: 'Map the column with the user message to input; expected_output is used by the metrics, not sent.',
  })
  row_mapping_hint: string;
}

export class SutTemplateList {
  @ApiProperty({ type: () => [SutTemplateDto] })
  items: SutTemplate[];
  @ApiProperty({ example: 3 })
  total: number;
}
