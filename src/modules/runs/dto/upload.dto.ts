import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsNumber, IsObject, IsString, IsUUID, MaxLength, Min, ValidateIf } from 'class-validator';
import { NestedObject } from '../../../../libs/common/record-validators.js';

const present = (_: object, value: unknown) => value !== undefined;
const nullable = (_: object, value: unknown) => value !== undefined && value !== null;
export const MAX_UPLOAD_OUTPUTS = 10_000;

export class UploadedErrorDto {
  @IsString() @MaxLength(100)
  code: string;
  @IsString() @MaxLength(10_000)
  message: string;
}

export class UploadedOutputDto {
  /** The dataset row (its `_row_id`) this output answers; every repetition of the row takes it */
  @IsUUID()
  row_id: string;

  /** What the system answered; null with `error` for a row it failed on */
  @ApiProperty({ type: 'string', nullable: true })
  @ValidateIf(nullable) @IsString() @MaxLength(1_000_000)
  output: string | null;

  @ApiPropertyOptional({ type: 'number', nullable: true })
  @ValidateIf(nullable) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  latency_ms?: number | null;

  @ApiPropertyOptional({ type: 'object', properties: { prompt_tokens: { type: 'number' }, completion_tokens: { type: 'number' }, total_tokens: { type: 'number' } } })
  @ValidateIf(present) @IsObject()
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };

  @ApiPropertyOptional({ type: 'number', nullable: true })
  @ValidateIf(nullable) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  cost_usd?: number | null;

  /** Fields kept with the result (e.g. retrieved contexts) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject()
  extras?: Record<string, unknown>;

  /** Why the system gave no output for this row */
  @ValidateIf(present) @NestedObject(() => UploadedErrorDto)
  error?: UploadedErrorDto;
}

export class UploadOutputsRequest {
  /** 1..10000 outputs per request (send more in several requests); rows never uploaded are recorded as errors when scoring starts */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_UPLOAD_OUTPUTS) @NestedObject(() => UploadedOutputDto, { each: true })
  results: UploadedOutputDto[];

  /** Score now (default true); false keeps the run awaiting more uploads */
  @ValidateIf(present) @IsBoolean()
  complete?: boolean;
}
