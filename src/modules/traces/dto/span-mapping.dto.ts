import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { NestedObject } from '#libs/common/record-validators.js';
import { SPAN_PICKS, type SpanFieldRef, type SpanPick, type TargetMapping } from '#libs/evaluation/online/targets.js';

/**
 * Where a scored field is read from a trace's spans: what online evaluators and runs over
 * recorded traces map (libs/evaluation/online/targets.ts says how a mapping reads).
 */
export class SpanFieldRefDto {
  /** Which spans: the first or last root (in time order), the first or last span, or all of them */
  @ApiProperty({ enum: SPAN_PICKS, example: 'last_root' })
  @IsIn(SPAN_PICKS)
  pick: SpanPick;

  /** Only spans of this kind (llm, chain, agent, tool, retriever…) */
  @ApiPropertyOptional({ type: 'string', nullable: true, example: null })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  kind?: string | null;

  /** Only spans of this name */
  @ApiPropertyOptional({ type: 'string', nullable: true, example: null })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  name?: string | null;

  /** A dotted path into the span: `output`, `input`, `retrieved_documents`, `attributes.answer` */
  @ApiProperty({ example: 'output' })
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  field: string;
}

export class TargetMappingDto {
  /** Default: the first root span's input */
  @ApiPropertyOptional({ type: SpanFieldRefDto, nullable: true })
  @IsOptional()
  @NestedObject(() => SpanFieldRefDto)
  input?: SpanFieldRefDto | null;

  /** Default: the last root span's output */
  @ApiPropertyOptional({ type: SpanFieldRefDto, nullable: true })
  @IsOptional()
  @NestedObject(() => SpanFieldRefDto)
  output?: SpanFieldRefDto | null;

  /** Default: the documents of every retriever span */
  @ApiPropertyOptional({ type: SpanFieldRefDto, nullable: true })
  @IsOptional()
  @NestedObject(() => SpanFieldRefDto)
  context?: SpanFieldRefDto | null;

  /** Default: none (production traces rarely carry one) */
  @ApiPropertyOptional({ type: SpanFieldRefDto, nullable: true })
  @IsOptional()
  @NestedObject(() => SpanFieldRefDto)
  expected_output?: SpanFieldRefDto | null;

  /** Default: the tool calls of every span */
  @ApiPropertyOptional({ type: SpanFieldRefDto, nullable: true })
  @IsOptional()
  @NestedObject(() => SpanFieldRefDto)
  tool_calls?: SpanFieldRefDto | null;
}

/** A mapping as given, in the form targets read (absent fields keep their defaults; null reads nothing). */
export function targetMapping(body: TargetMappingDto | undefined): TargetMapping {
  const mapping: TargetMapping = {};
  for (const [field, ref] of Object.entries(body ?? {}) as Array<[keyof TargetMapping, SpanFieldRefDto | null]>)
    if (ref !== undefined)
      mapping[field] =
        ref === null
          ? null
          : ({
              pick: ref.pick,
              kind: ref.kind ?? null,
              name: ref.name ?? null,
              field: ref.field,
            } satisfies SpanFieldRef);
  return mapping;
}
