import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
} from 'class-validator';
import { NestedObject } from '#libs/common/record-validators.js';
import { ApiSchemaExample, EXAMPLE_ID, EXAMPLE_OUTPUT } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const MAX_UPLOAD_OUTPUTS = 10_000;

export class UploadedErrorDto {
  @ApiProperty({ example: 'timeout' })
  @IsString()
  @MaxLength(100)
  code: string;
  @ApiProperty({ example: 'The assistant did not answer within 30 s' })
  @IsString()
  @MaxLength(10_000)
  message: string;
}

@ApiSchemaExample({
  row_id: EXAMPLE_ID.rows[0],
  output: EXAMPLE_OUTPUT,
  latency_ms: 1040,
  usage: { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 },
  cost_usd: 0.00041,
  extras: { sources: ['kb/security/reset-password'] },
})
export class UploadedOutputDto {
  /** The dataset row (its `_row_id`) this output answers; every repetition of the row takes it */
  @ApiProperty({ example: EXAMPLE_ID.rows[0] })
  @IsUUID()
  row_id: string;

  /** What the system answered; null with `error` for a row it failed on */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_OUTPUT })
  @IsOptional()
  @IsString()
  @MaxLength(1_000_000)
  output: string | null;

  @ApiPropertyOptional({ type: 'number', nullable: true, example: 1040 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  latency_ms?: number | null;

  @ApiPropertyOptional({
    type: 'object',
    properties: {
      prompt_tokens: { type: 'number' },
      completion_tokens: { type: 'number' },
      total_tokens: { type: 'number' },
    },
    example: { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 },
  })
  @ValidateIfPresent()
  @IsObject()
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };

  @ApiPropertyOptional({ type: 'number', nullable: true, example: 0.00041 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  cost_usd?: number | null;

  /** Fields kept with the result (e.g. retrieved contexts) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { sources: ['kb/security/reset-password'] },
  })
  @ValidateIfPresent()
  @IsObject()
  extras?: Record<string, unknown>;

  /** Why the system gave no output for this row */
  @ValidateIfPresent()
  @NestedObject(() => UploadedErrorDto)
  error?: UploadedErrorDto;
}

export class UploadOutputsRequest {
  /** 1..10000 outputs per request (send more in several requests); rows never uploaded are recorded as errors when scoring starts */
  @ApiProperty({ maxItems: MAX_UPLOAD_OUTPUTS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_UPLOAD_OUTPUTS)
  @NestedObject(() => UploadedOutputDto, { each: true })
  results: UploadedOutputDto[];

  /** Score now (default true); false keeps the run awaiting more uploads */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  complete?: boolean;
}
