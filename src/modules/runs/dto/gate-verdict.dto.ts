import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNumber, IsString, IsUUID, Matches, Max, Min, MaxLength } from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { TAG_PATTERN } from '#libs/common/labelled-record.dto.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { GateResponse } from './gate.dto.js';

/** A label names the line of runs a verdict belongs to (a branch, an environment): a tag's characters. */
export const GATE_LABEL_PATTERN = TAG_PATTERN;
export const GATE_LABEL_RULE = 'a label is 1..64 letters, digits or . _ : / - starting with a letter or digit';
export const GATE_VERDICTS = ['pass', 'fail'] as const;
export type GateVerdict = (typeof GATE_VERDICTS)[number];

/** The gate's inputs, as GET /runs/{run_id}/gate takes them, and the label to record the verdict with (a JSON body: no field takes null). */
export class RecordGateRequest {
  /** The project whose test plan judges the run (default: the one project with a test plan linking the run's SUT or dataset; without one, the run's own pass rule judges) */
  @ApiPropertyOptional({ example: EXAMPLE_ID.project })
  @ValidateIfPresent()
  @IsUUID()
  project_id?: string;

  /** A run to compare against (the last release): the gate fails on a significant regression of a gating metric or the row verdict, overall or on a dimension value */
  @ApiPropertyOptional({ example: EXAMPLE_ID.baseRun })
  @ValidateIfPresent()
  @IsUUID()
  baseline_run_id?: string;

  /** Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05) */
  @ApiPropertyOptional({ example: 0.05 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0.0001)
  @Max(0.5)
  alpha?: number;

  /** Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10) */
  @ApiPropertyOptional({ example: 10 })
  @ValidateIfPresent()
  @IsInt()
  @Min(2)
  @Max(10_000)
  min_rows?: number;

  /** The line of runs the verdict belongs to, e.g. the branch `main` (1..64 letters, digits or . _ : / -); `--baseline latest --baseline-label main` finds the newest run whose verdict with this label passed */
  @ApiPropertyOptional({ example: 'main' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(64)
  @Matches(GATE_LABEL_PATTERN, { message: GATE_LABEL_RULE })
  label?: string;
}

/** A recorded verdict of the release gate: what judged the run, against what, the outcome and the checks' counts. */
export class GateVerdictResponse {
  @ApiProperty({ example: EXAMPLE_ID.gateVerdict })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  /** The label the verdict was recorded with (a branch such as `main`); null without one */
  @ApiProperty({ type: 'string', nullable: true, example: 'main' })
  label: string | null;
  /** The project whose test plan judged the run; null when none did */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.project })
  project_id: string | null;
  /** The test plan version that judged the run; all three null: the run's own pass rule did */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.testPlan })
  test_plan_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.testPlan })
  test_plan_name: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  test_plan_version: number | null;
  /** The run compared with; null without a baseline (or when that run was deleted since) */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.baseRun })
  baseline_run_id: string | null;
  @ApiProperty({ example: 0.05 })
  alpha: number;
  /** The minimum of matched rows asked for (null: the default, 10) */
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  min_rows: number | null;
  @ApiProperty({ enum: GATE_VERDICTS, example: 'pass' })
  verdict: GateVerdict;
  /** Blocking checks that failed */
  @ApiProperty({ example: 0 })
  failures: number;
  /** Non-blocking checks that failed */
  @ApiProperty({ example: 1 })
  warnings: number;
  @ApiProperty({ example: 8 })
  passed: number;
  @ApiProperty({ example: 1 })
  skipped: number;
  /** Who recorded it (the user, or the creator of the API key used) */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.user })
  recorded_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  recorded_at: string;
}

/** The gate's answer, as GET /runs/{run_id}/gate gives it, and the verdict as recorded. */
export class RecordedGateResponse extends GateResponse {
  @ApiProperty({ type: () => GateVerdictResponse })
  record: GateVerdictResponse;
}
