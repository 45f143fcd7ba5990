import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import {
  IsBoundedJson,
  IsStringRecord,
  NestedObject,
  stringRecordSchema,
  IsStringListRecord,
  stringListRecordSchema,
} from '#libs/common/record-validators.js';
import { catalogueEntryRequest } from '../../catalogues/dto/catalogue-entry.dto.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { TrackedRunProperty } from '#libs/queue/dto/tracked-run.dto.js';
import { UNCANCELLABLE_VOCABULARY } from '#libs/queue/tracked-job.js';

export const SDG_KINDS = ['template', 'llm'] as const;
/** The documented states of an SDG run: no `cancelled` (a cancelled job shows as `failed`). */
export const SDG_RUN_STATES = UNCANCELLABLE_VOCABULARY;

/** Dimension -> values an adapter combines with every seed row (and within 64 KB of JSON). */
const SDG_DIMENSIONS = { maxKeys: 50, maxItems: 1000, maxLength: 1000 };

export class ListSdgAdaptersQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: 'faq-paraphrases',
  description: 'Paraphrases the golden questions per task',
  kind: 'template',
  columns: { input: 'How do I {{dim.task}} in {{seed.product}}?', expected_output: '{{seed.answer}}' },
  dimensions: { task: ['reset a password', 'change plan'] },
  dimension_columns: true,
})
export class CreateSdgAdapterRequest extends catalogueEntryRequest({
  creator: 'member',
  name: 'faq-paraphrases',
  description: 'Paraphrases the golden questions per task',
}) {
  /** `template`: rows rendered from templates over seed rows and dimension values; `llm`: a judge connection generates (or paraphrases) rows from a prompt */
  @ApiProperty({ enum: SDG_KINDS, example: 'template' })
  @IsIn(SDG_KINDS)
  kind: (typeof SDG_KINDS)[number];

  /** template: column -> template over {{seed.<column>}}, {{dim.<name>}}, {{index}} */
  @ApiPropertyOptional({
    ...stringRecordSchema(50),
    example: { input: 'How do I {{dim.task}} in {{seed.product}}?', expected_output: '{{seed.answer}}' },
  })
  @ValidateIfPresent()
  @IsStringRecord(50)
  columns?: Record<string, string>;

  /** llm: the instruction, a template over {{seed.<column>}} and {{dim.<name>}} */
  @ApiPropertyOptional({
    example:
      'Write {{count}} questions a customer could ask about {{dim.task}}, each with the answer from: {{seed.answer}}',
  })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(20_000)
  prompt?: string;

  /** llm: the columns each generated row must have */
  @ApiPropertyOptional({ example: ['question', 'answer'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  output_columns?: string[];

  /** llm: rows asked for per prompt, 1..20 (default 5) */
  @ApiPropertyOptional({ example: 5 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(20)
  count?: number;

  /** Dimension -> values, combined with every seed row */
  @ApiPropertyOptional({
    ...stringListRecordSchema(SDG_DIMENSIONS),
    example: { task: ['reset a password', 'change plan'] },
  })
  @ValidateIfPresent()
  @IsStringListRecord(SDG_DIMENSIONS)
  @IsBoundedJson(64_000)
  dimensions?: Record<string, string[]>;

  /** Write each dimension's value as a column too (default true) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  dimension_columns?: boolean;

  /** llm: the judge connection that generates */
  @ApiPropertyOptional({ example: EXAMPLE_ID.judge })
  @ValidateIfPresent()
  @IsUUID()
  judge_id?: string;
}

export class SdgSeedDto {
  /** Seed rows come from this dataset (its current version, or `version_id`) */
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  @IsUUID()
  dataset_id: string;

  @ApiPropertyOptional({ example: EXAMPLE_ID.version })
  @ValidateIfPresent()
  @IsUUID()
  version_id?: string;

  /** Seed rows used at most, in dataset order (1..1000, default 100) */
  @ApiPropertyOptional({ example: 100 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class StartSdgRunRequest {
  /** The dataset that gets the generated rows as a new candidate version (the newest version's rows plus them) */
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  @IsUUID()
  target_dataset_id: string;

  @ValidateIfPresent()
  @NestedObject(() => SdgSeedDto)
  seed?: SdgSeedDto;

  /** Rows generated at most (1..10000, default 1000) */
  @ApiPropertyOptional({ example: 500 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10_000)
  max_rows?: number;

  /** The new version's message */
  @ApiPropertyOptional({ example: 'Paraphrased questions for the May release' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

export class SdgRunResponse {
  @ApiProperty({ example: EXAMPLE_ID.sdgRun })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.sdgAdapter })
  adapter_id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @TrackedRunProperty.state(SDG_RUN_STATES)
  state: string;
  @TrackedRunProperty.stateReason()
  state_reason: string | null;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  target_dataset_id: string;
  /** The candidate version made, once succeeded */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.version })
  version_id: string | null;
  @ApiProperty({ example: 428 })
  generated: number;
  /** Candidates left out (a seed column missing, an LLM row without the columns asked for) */
  @ApiProperty({ example: 4 })
  dropped: number;
  /** The first reasons rows were dropped or a call failed */
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: ['seed row 17 has no column product'] })
  errors: string[];
  @TrackedRunProperty.jobId()
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @TrackedRunProperty.createdAt()
  created_at: Date;
  @TrackedRunProperty.finishedAt()
  finished_at: Date | null;
}

export class SdgAdapterResponse {
  @ApiProperty({ example: EXAMPLE_ID.sdgAdapter })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'faq-paraphrases' })
  name: string;
  @ApiProperty({ example: 'Paraphrases the golden questions per task' })
  description: string;
  @ApiProperty({ enum: SDG_KINDS, example: 'template' })
  kind: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { input: 'How do I {{dim.task}} in {{seed.product}}?', expected_output: '{{seed.answer}}' },
  })
  columns: Record<string, string> | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  prompt: string | null;
  @ApiProperty({ type: 'array', items: { type: 'string' }, nullable: true, example: null })
  output_columns: string[] | null;
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  count: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { task: ['reset a password', 'change plan'] },
  })
  dimensions: Record<string, string[]>;
  @ApiProperty({ example: true })
  dimension_columns: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  judge_id: string | null;
  /** The latest runs, newest first (up to 5) */
  @ApiProperty({ type: () => [SdgRunResponse] })
  recent_runs: SdgRunResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
