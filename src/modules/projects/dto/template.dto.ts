import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsString, Matches, MaxLength } from 'class-validator';
import { NestedObject } from '#libs/common/record-validators.js';

/** Dimension names and values are identifiers: lower-case snake_case, 1-64 characters. */
export const DIMENSION_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_DIMENSION_VALUES = 50;

/**
 * One value of a dimension. Validated like a request body so that project creation can take
 * a template's dimension list as it is (or edited) and nest this class in its own DTO.
 */
export class DimensionValueDefinition {
  /** snake_case identifier, unique within its dimension. */
  @ApiProperty({ example: 'billing', pattern: DIMENSION_KEY_PATTERN.source })
  @IsString()
  @MaxLength(64)
  @Matches(DIMENSION_KEY_PATTERN, {
    message: 'value must be lower-case snake_case (a-z, 0-9, _), 1-64 characters, starting with a letter',
  })
  value: string;

  /** What a row with this value is about; guides people (and rules) assigning values. */
  @ApiProperty({ example: 'Invoices, charges, refunds and payment methods.' })
  @IsString()
  @MaxLength(500)
  description: string;
}

/** A coverage axis: the values a team wants its test data to cover (topic, intent, persona, …). */
export class DimensionDefinition {
  /** snake_case identifier, unique within the list. */
  @ApiProperty({ example: 'topic', pattern: DIMENSION_KEY_PATTERN.source })
  @IsString()
  @MaxLength(64)
  @Matches(DIMENSION_KEY_PATTERN, {
    message: 'name must be lower-case snake_case (a-z, 0-9, _), 1-64 characters, starting with a letter',
  })
  name: string;

  @ApiProperty({ example: 'What the customer is contacting support about.' })
  @IsString()
  @MaxLength(500)
  description: string;

  @ApiProperty({ type: [DimensionValueDefinition], minItems: 1, maxItems: MAX_DIMENSION_VALUES })
  @NestedObject(() => DimensionValueDefinition, { each: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_DIMENSION_VALUES)
  values: DimensionValueDefinition[];
}

/** A pass rule a template suggests for a metric. */
export class SuggestedThreshold {
  @ApiProperty({ enum: ['>=', '<='], example: '>=' })
  operator: '>=' | '<=';
  @ApiProperty({ example: 0.8 })
  value: number;
}

/** A metric a template suggests for its use case, with a starting threshold. */
export class SuggestedMetric {
  /** Metric name as the metric catalogue knows it (e.g. `faithfulness`, `rouge_l`, `latency_p95_ms`). */
  @ApiProperty({ example: 'faithfulness' })
  name: string;
  /** `deterministic` metrics are computed; `judged` ones are graded by an LLM judge with a rubric. */
  @ApiProperty({ enum: ['deterministic', 'judged'], example: 'judged' })
  kind: 'deterministic' | 'judged';
  /** What it measures and why it matters for this use case. */
  @ApiProperty({ example: 'Answers stay within the retrieved help-centre articles' })
  description: string;
  @ApiPropertyOptional({
    type: SuggestedThreshold,
    nullable: true,
    description: 'A starting pass rule; null when the metric is informative only',
  })
  threshold: SuggestedThreshold | null;
}

/** A built-in project template as GET /templates lists it. */
export class TemplateSummary {
  /** Identifier to pass to GET /templates/{name}. */
  @ApiProperty({ example: 'customer-support-assistant' })
  name: string;
  @ApiProperty({ example: 'Customer-support assistant' })
  title: string;
  @ApiProperty({ example: 'A chat assistant answering customer questions from a help centre' })
  description: string;
  /** The kind of application: `customer_support`, `rag_qa`, `summarisation`, `code_assistant`, `agentic_workflow`, … */
  @ApiProperty({ example: 'customer_support' })
  use_case: string;
  @ApiProperty({ example: 6 })
  dimension_count: number;
}

/** A built-in project template with its full dimension list, ready to pass to project creation. */
export class TemplateDetail {
  @ApiProperty({ example: 'customer-support-assistant' })
  name: string;
  @ApiProperty({ example: 'Customer-support assistant' })
  title: string;
  @ApiProperty({ example: 'A chat assistant answering customer questions from a help centre' })
  description: string;
  @ApiProperty({ example: 'customer_support' })
  use_case: string;
  @ApiProperty({
    type: [DimensionDefinition],
    description:
      'The coverage dimensions, each with its values. Project creation accepts this list as it is, or edited.',
  })
  dimensions: DimensionDefinition[];
  @ApiProperty({ type: [SuggestedMetric] })
  suggested_metrics: SuggestedMetric[];
}
