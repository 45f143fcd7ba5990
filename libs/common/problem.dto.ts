import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { EXAMPLE_ID } from './openapi-examples.js';

export class ProblemFieldError {
  @ApiProperty({ example: 'email' })
  field: string;
  @ApiProperty({ example: 'email must be an email' })
  message: string;
}

/** RFC 9457 problem details; every error the service returns has this shape. */
@ApiExtraModels(ProblemFieldError)
export class ProblemResponse {
  @ApiProperty({ example: '/problems/validation-failed' })
  type: string;
  @ApiProperty({ example: 'Validation failed' })
  title: string;
  @ApiProperty({ example: 400 })
  status: number;
  @ApiProperty({ example: 'email must be an email' })
  detail: string;
  @ApiProperty({ example: 'validation_failed', description: 'Stable machine-readable code; see docs/errors.md' })
  error_code: string;
  @ApiPropertyOptional({
    description: 'Correlates with the X-Request-Id header and the server logs',
    example: EXAMPLE_ID.request,
  })
  request_id?: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { oneOf: [{ $ref: getSchemaPath(ProblemFieldError) }, { type: 'string' }] },
    description:
      'On validation_failed (and metric_params_invalid): one {field, message} per offending field. On the other codes whose description says "`errors` lists each problem" (project_dimensions_invalid, test_plan_invalid, rubric_invalid, report_content_invalid, …): one line per problem',
    example: [{ field: 'email', message: 'email must be an email' }],
  })
  errors?: Array<ProblemFieldError | string>;
}
