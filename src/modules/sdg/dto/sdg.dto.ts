import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsString, IsUUID, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { IsBoundedJson, IsStringRecord, NestedObject } from '../../../../libs/common/record-validators.js';
import { CreateCatalogueEntryRequest } from '../../catalogues/dto/catalogue-entry.dto.js';

const present = (_: object, value: unknown) => value !== undefined;
export const SDG_KINDS = ['template', 'llm'] as const;
export const SDG_RUN_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;

export class ListSdgAdaptersQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;
}

export class CreateSdgAdapterRequest extends CreateCatalogueEntryRequest {
  /** `template`: rows rendered from templates over seed rows and dimension values; `llm`: a judge connection generates (or paraphrases) rows from a prompt */
  @ApiProperty({ enum: SDG_KINDS })
  @IsIn(SDG_KINDS)
  kind: (typeof SDG_KINDS)[number];

  /** template: column -> template over {{seed.<column>}}, {{dim.<name>}}, {{index}} */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { input: 'How do I {{dim.task}} in {{seed.product}}?', expected_output: '{{seed.answer}}' } })
  @ValidateIf(present) @IsStringRecord(50)
  columns?: Record<string, string>;

  /** llm: the instruction, a template over {{seed.<column>}} and {{dim.<name>}} */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(20_000)
  prompt?: string;

  /** llm: the columns each generated row must have */
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(200, { each: true })
  output_columns?: string[];

  /** llm: rows asked for per prompt, 1..20 (default 5) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(20)
  count?: number;

  /** Dimension -> values, combined with every seed row */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, example: { task: ['reset a password', 'change plan'] } })
  @ValidateIf(present) @IsObject() @IsBoundedJson(64_000)
  dimensions?: Record<string, string[]>;

  /** Write each dimension's value as a column too (default true) */
  @ValidateIf(present) @IsBoolean()
  dimension_columns?: boolean;

  /** llm: the judge connection that generates */
  @ValidateIf(present) @IsUUID()
  judge_id?: string;
}

export class SdgSeedDto {
  /** Seed rows come from this dataset (its current version, or `version_id`) */
  @IsUUID()
  dataset_id: string;

  @ValidateIf(present) @IsUUID()
  version_id?: string;

  /** Seed rows used at most, in dataset order (1..1000, default 100) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

export class StartSdgRunRequest {
  /** The dataset that gets the generated rows as a new candidate version (the newest version's rows plus them) */
  @IsUUID()
  target_dataset_id: string;

  @ValidateIf(present) @NestedObject(() => SdgSeedDto)
  seed?: SdgSeedDto;

  /** Rows generated at most (1..10000, default 1000) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10_000)
  max_rows?: number;

  /** The new version's message */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  message?: string;
}

export class SdgRunResponse {
  id: string;
  adapter_id: string;
  workspace_id: string;
  @ApiProperty({ enum: SDG_RUN_STATES })
  state: string;
  @ApiProperty({ type: 'string', nullable: true })
  state_reason: string | null;
  target_dataset_id: string;
  /** The candidate version made, once succeeded */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  version_id: string | null;
  generated: number;
  /** Candidates left out (a seed column missing, an LLM row without the columns asked for) */
  dropped: number;
  /** The first reasons rows were dropped or a call failed */
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  errors: string[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at: Date | null;
}

export class SdgAdapterResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  @ApiProperty({ enum: SDG_KINDS })
  kind: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  columns: Record<string, string> | null;
  @ApiProperty({ type: 'string', nullable: true })
  prompt: string | null;
  @ApiProperty({ type: 'array', items: { type: 'string' }, nullable: true })
  output_columns: string[] | null;
  @ApiProperty({ type: 'integer', nullable: true })
  count: number | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  dimensions: Record<string, string[]>;
  dimension_columns: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  judge_id: string | null;
  /** The latest runs, newest first (up to 5) */
  @ApiProperty({ type: () => [SdgRunResponse] })
  recent_runs: SdgRunResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}
