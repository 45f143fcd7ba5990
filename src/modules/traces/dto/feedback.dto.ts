import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDateString,
  IsIn,
  IsNumber,
  IsObject,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_TRACE } from '#libs/common/openapi-examples.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { IsBoundedJson, NestedObject } from '#libs/common/record-validators.js';
import { checkId } from '#libs/traces/conventions.js';

/** The limits of one feedback, enforced with 400 and listed in docs/traces.md. */
export const FEEDBACK_LIMITS = {
  idLength: 128,
  nameLength: 100,
  stringValueLength: 200,
  commentLength: 4000,
  userRefLength: 200,
  metadataBytes: 8192,
  metadataKeys: 50,
  clientKeyLength: 200,
  batchItems: 100,
} as const;

/** Names: a letter or digit, then letters, digits and `- _ . : /` (as trace tags). */
export const FEEDBACK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
const PRINTABLE = /^[\x21-\x7E]+$/;

export type FeedbackValue = number | boolean | string;

export const FEEDBACK_VALUE_SCHEMA = {
  oneOf: [
    { type: 'number' },
    { type: 'boolean' },
    { type: 'string', minLength: 1, maxLength: FEEDBACK_LIMITS.stringValueLength },
  ],
};

/** A finite number, a boolean, or a string of 1 .. 200 characters. */
export function IsFeedbackValue(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFeedbackValue',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be a finite number, a boolean, or a string of 1 to ${FEEDBACK_LIMITS.stringValueLength} characters`,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value === 'boolean') return true;
          if (typeof value === 'number') return Number.isFinite(value);
          return typeof value === 'string' && value.length > 0 && value.length <= FEEDBACK_LIMITS.stringValueLength;
        },
      },
    });
}

/** A trace (32) or span (16) id as the traces family stores it: OTLP hex, or a source's own id of up to 128 characters. */
function IsTraceRef(width: 32 | 16): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTraceRef',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate(value: unknown) {
          return (
            typeof value === 'string' &&
            value.length <= FEEDBACK_LIMITS.idLength &&
            PRINTABLE.test(value) &&
            checkId(value, width).ok
          );
        },
        defaultMessage(args: ValidationArguments) {
          return `${args.property} must be ${width} hex characters (not all zeros) as OpenTelemetry writes it, or another id of 1 to ${FEEDBACK_LIMITS.idLength} printable characters without spaces`;
        },
      },
    });
}

/** A plain object of at most 50 members, 8 KiB as JSON. */
function IsSmallObject(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSmallObject',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be an object of at most ${FEEDBACK_LIMITS.metadataKeys} members` },
      validator: {
        validate(value: unknown) {
          return (
            value !== null &&
            typeof value === 'object' &&
            !Array.isArray(value) &&
            Object.keys(value).length <= FEEDBACK_LIMITS.metadataKeys
          );
        },
      },
    });
}

/** One end user's judgement of a trace (or one of its spans). */
export class FeedbackItem {
  /** The trace: 32 hex characters as OpenTelemetry writes it (upper case is lowered), or a source's own id */
  @ApiProperty({ minLength: 1, maxLength: FEEDBACK_LIMITS.idLength, example: EXAMPLE_TRACE.trace })
  @IsString()
  @IsTraceRef(32)
  trace_id: string;
  /** One span of the trace: 16 hex characters, or a source's own id */
  @ApiPropertyOptional({ minLength: 1, maxLength: FEEDBACK_LIMITS.idLength, example: EXAMPLE_TRACE.span })
  @ValidateIfPresent()
  @IsString()
  @IsTraceRef(16)
  span_id?: string;
  /** What is judged (`thumbs`, `user_rating`, `resolved`): a letter or digit, then letters, digits and - _ . : / */
  @ApiProperty({
    minLength: 1,
    maxLength: FEEDBACK_LIMITS.nameLength,
    pattern: FEEDBACK_NAME.source,
    example: 'thumbs',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(FEEDBACK_LIMITS.nameLength)
  @Matches(FEEDBACK_NAME, {
    message: 'name must start with a letter or digit and hold only letters, digits and - _ . : /',
  })
  name: string;
  /** A boolean (thumbs up: true), a finite number (a score) or a string of 1 .. 200 characters (a category) */
  @ApiProperty({ ...FEEDBACK_VALUE_SCHEMA, example: false })
  @IsFeedbackValue()
  value: FeedbackValue;
  /** The end user's words, up to 4000 characters */
  @ApiPropertyOptional({
    maxLength: FEEDBACK_LIMITS.commentLength,
    example: 'The reset link in the answer had expired.',
  })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.commentLength)
  comment?: string;
  /** The end user's id in the application (not a user of this service) */
  @ApiPropertyOptional({ minLength: 1, maxLength: FEEDBACK_LIMITS.userRefLength, example: 'customer-40912' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(FEEDBACK_LIMITS.userRefLength)
  user_ref?: string;
  /** A small object kept as it is (at most 50 members, 8 KiB as JSON) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { channel: 'web-widget', app_version: '3.14.0' },
  })
  @ValidateIfPresent()
  @IsObject()
  @IsSmallObject()
  @IsBoundedJson(FEEDBACK_LIMITS.metadataBytes, { message: 'metadata must be at most 8192 bytes as JSON' })
  metadata?: Record<string, unknown>;
  /** Makes the post safe to retry: the same key with the same content answers the stored feedback again (1 .. 200 printable characters) */
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: FEEDBACK_LIMITS.clientKeyLength,
    pattern: PRINTABLE.source,
    example: 'fb-7f3c9a2e-0d41-4b8e-9a6c-2e5d1f0b7c34',
  })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(FEEDBACK_LIMITS.clientKeyLength)
  @Matches(PRINTABLE, { message: 'client_key must be printable ASCII without spaces' })
  client_key?: string;
}

/** Feedback on one trace; `workspace_id` only with a user's token (an API key names its own workspace). */
export class CreateTraceFeedbackRequest extends FeedbackItem {
  /** The workspace, with a user's token (an API key's own workspace is used otherwise) */
  @ApiPropertyOptional({ format: 'uuid', example: EXAMPLE_ID.workspace })
  @ValidateIfPresent()
  @IsUUID()
  workspace_id?: string;
}

/** Up to 100 feedbacks at once, each handled as POST /traces/feedback would. */
export class CreateTraceFeedbackBatchRequest {
  /** The workspace, with a user's token (an API key's own workspace is used otherwise) */
  @ApiPropertyOptional({ format: 'uuid', example: EXAMPLE_ID.workspace })
  @ValidateIfPresent()
  @IsUUID()
  workspace_id?: string;
  @ApiProperty({ type: [FeedbackItem], minItems: 1, maxItems: FEEDBACK_LIMITS.batchItems })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(FEEDBACK_LIMITS.batchItems)
  @NestedObject(() => FeedbackItem, { each: true })
  items: FeedbackItem[];
}

export class TraceFeedbackResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceFeedback })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_TRACE.trace })
  trace_id: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_TRACE.span })
  span_id: string | null;
  @ApiProperty({ example: 'thumbs' })
  name: string;
  @ApiProperty({ ...FEEDBACK_VALUE_SCHEMA, example: false })
  value: FeedbackValue;
  @ApiProperty({ type: 'string', nullable: true, example: 'The reset link in the answer had expired.' })
  comment: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'customer-40912' })
  user_ref: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { channel: 'web-widget' } })
  metadata: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true, example: 'fb-7f3c9a2e-0d41-4b8e-9a6c-2e5d1f0b7c34' })
  client_key: string | null;
  /** The user whose token or API key posted it */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  /** True when this answers a retry: the feedback was already stored under its client_key */
  @ApiProperty({ example: false })
  replayed: boolean;
}

/** What became of one item of a batch. */
export class TraceFeedbackBatchItem {
  @ApiProperty({ minimum: 0, example: 0 })
  index: number;
  /** `created`, `replayed` (stored before under its client_key) or `conflict` (its client_key holds other content) */
  @ApiProperty({ enum: ['created', 'replayed', 'conflict'], example: 'created' })
  outcome: 'created' | 'replayed' | 'conflict';
  /** 201, 200 or 409: what POST /traces/feedback would have answered */
  @ApiProperty({ example: 201 })
  status: number;
  @ApiProperty({ type: TraceFeedbackResponse, nullable: true })
  feedback: TraceFeedbackResponse | null;
  /** The conflict's error code */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  error_code: string | null;
}

export class TraceFeedbackBatchResponse {
  @ApiProperty({ type: [TraceFeedbackBatchItem] })
  items: TraceFeedbackBatchItem[];
}

/** GET /traces/feedback: filters, newest first. */
export class TraceFeedbackQuery extends PageQueryDto {
  /** The workspace, with a user's token (an API key's own workspace is used otherwise) */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIfPresent()
  @IsUUID()
  workspace_id?: string;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.idLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.idLength)
  trace_id?: string;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.idLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.idLength)
  span_id?: string;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.nameLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.nameLength)
  name?: string;
  /** Equal to this value: `true`/`false` match thumbs, a number matches scores, any text matches categories */
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.stringValueLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.stringValueLength)
  value?: string;
  /** Scores at least this */
  @ApiPropertyOptional({ type: 'number' })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  min_value?: number;
  /** Scores at most this */
  @ApiPropertyOptional({ type: 'number' })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  max_value?: number;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.userRefLength })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(FEEDBACK_LIMITS.userRefLength)
  user_ref?: string;
  /** Posted at or after this instant */
  @ApiPropertyOptional({ format: 'date-time' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsDateString({ strict: true })
  created_after?: string;
  /** Posted before this instant */
  @ApiPropertyOptional({ format: 'date-time' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsDateString({ strict: true })
  created_before?: string;
  /** `-created_at` (default, newest first) or `created_at` */
  @ApiPropertyOptional({ enum: ['created_at', '-created_at'] })
  @ValidateIfPresent()
  @IsIn(['created_at', '-created_at'])
  sort?: 'created_at' | '-created_at';
}

/** What a trace's feedback under one name adds up to. */
export class TraceFeedbackSummary {
  @ApiProperty({ example: 3 })
  count: number;
  /** The mean of the scores (null when none is a number) */
  @ApiProperty({ type: 'number', nullable: true, example: null })
  mean: number | null;
  @ApiProperty({ example: 1 })
  thumbs_up: number;
  @ApiProperty({ example: 2 })
  thumbs_down: number;
}

/** The selection `TraceFeedbackService.traceIdsWithFeedback` answers. */
export interface FeedbackSelection {
  name: string;
  /** Equal to this value (a thumbs' boolean, a score, a category). */
  value?: FeedbackValue;
  /** Scores at least / at most. */
  min?: number;
  max?: number;
  limit: number;
}

export const MAX_SELECTION = 10_000;
