import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { ThresholdDto, ThresholdResponse } from './test-plan.dto.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

const KEY = /^[a-z][a-z0-9_]{0,63}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/;

export class RecommendationWorkspaceQuery {
  /** The workspace whose recommendations (with the built-in ones) are read or changed */
  @IsUUID()
  workspace_id: string;
}

export class ListRecommendationsQuery extends RecommendationWorkspaceQuery {
  /** Only this use case (`rag_qa`, `customer_support`, …) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(64)
  @Matches(KEY, { message: 'use_case must be lower-case snake_case' })
  use_case?: string;

  /** `builtin`, `workspace` or both (default) */
  @ApiPropertyOptional({ enum: ['builtin', 'workspace'] })
  @ValidateIfPresent()
  @IsIn(['builtin', 'workspace'])
  source?: 'builtin' | 'workspace';
}

export class RecommendedMetricDto {
  /** The metric as runs name it */
  @ApiProperty({ example: 'faithfulness' })
  @IsString()
  @MaxLength(100)
  @Matches(NAME, { message: 'name must be 1..100 letters, digits, spaces or . _ : -' })
  name: string;

  @ApiProperty({ enum: ['deterministic', 'judged'], example: 'judged' })
  @IsIn(['deterministic', 'judged'])
  kind: 'deterministic' | 'judged';

  @ApiPropertyOptional({ example: 'Answers stay within the retrieved help-centre articles' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  description?: string;

  /** A starting pass rule (omit for an informative metric) */
  @ValidateIfPresent()
  @NestedObject(() => ThresholdDto)
  threshold?: ThresholdDto;
}

/** The whole definition of a workspace recommendation (PUT replaces it all). */
export class RecommendationDefinition {
  @ApiProperty({ example: 'Support RAG essentials' })
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(NAME, { message: 'name must be 1..100 letters, digits, spaces or . _ : - and start with a letter or digit' })
  name: string;

  /** The kind of application (snake_case), e.g. `rag_qa` */
  @ApiProperty({ example: 'rag_qa', pattern: KEY.source })
  @IsString()
  @MaxLength(64)
  @Matches(KEY, { message: 'use_case must be lower-case snake_case' })
  use_case: string;

  @ApiPropertyOptional({ example: 'What every retrieval-backed support assistant should be tested for' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Metrics of the package (at most 50) */
  @IsArray()
  @ArrayMaxSize(50)
  @NestedObject(() => RecommendedMetricDto, { each: true })
  metrics: RecommendedMetricDto[];

  /** Dataset quality checks to run (`exact_duplicates`, `pii`, …; at most 20) */
  @ApiPropertyOptional({ example: ['exact_duplicates', 'pii'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @Matches(KEY, { each: true, message: 'each check must be a check id' })
  checks?: string[];

  /** Dimensions to cover (snake_case names; at most 20) */
  @ApiPropertyOptional({ example: ['topic', 'customer_persona'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @Matches(KEY, { each: true, message: 'each dimension must be lower-case snake_case' })
  dimensions?: string[];
}

export class CreateRecommendationRequest extends RecommendationDefinition {
  /** The workspace that will own the recommendation (members) */
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;
}

export class RecommendedMetricResponse {
  @ApiProperty({ example: 'faithfulness' })
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged'], example: 'judged' })
  kind: 'deterministic' | 'judged';
  @ApiProperty({ example: 'Answers stay within the retrieved help-centre articles' })
  description: string;
  @ApiProperty({ type: ThresholdResponse, nullable: true })
  threshold: ThresholdResponse | null;
}

export class RecommendedCheckResponse {
  /** The quality check id (POST …/quality-checks:run) */
  @ApiProperty({ example: 'pii' })
  id: string;
  /** Why the check matters for the use case */
  @ApiProperty({ example: 'Support transcripts carry e-mail addresses and phone numbers' })
  reason: string;
}

/** A suggested package of metrics, quality checks and dimensions for a use case. */
export class TestPackageRecommendation {
  /** `builtin-<template>` for built-ins, a UUID for a workspace's own */
  @ApiProperty({ example: 'builtin-customer-support-assistant' })
  id: string;
  /** null for built-ins */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: null })
  workspace_id: string | null;
  /** Built-ins are read-only */
  @ApiProperty({ example: true })
  builtin: boolean;
  @ApiProperty({ example: 'Customer-support assistant' })
  name: string;
  @ApiProperty({ example: 'customer_support' })
  use_case: string;
  @ApiProperty({ example: 'Metrics, checks and dimensions for a support assistant' })
  description: string;
  /** The template a built-in is derived from */
  @ApiProperty({ type: 'string', nullable: true, example: 'customer-support-assistant' })
  template: string | null;
  @ApiProperty({ type: [RecommendedMetricResponse] })
  metrics: RecommendedMetricResponse[];
  @ApiProperty({ type: [RecommendedCheckResponse] })
  checks: RecommendedCheckResponse[];
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: ['topic', 'customer_persona', 'intent'] })
  dimensions: string[];
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  created_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  updated_at: Date | null;
}
