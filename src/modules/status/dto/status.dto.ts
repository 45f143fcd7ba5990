import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { EXAMPLE_ID } from '#libs/common/openapi-examples.js';

export class LiveResponse {
  /** Always `ok` when the process answers. */
  @ApiProperty({ example: 'ok' })
  status: 'ok';
  /** Seconds since the process started. */
  @ApiProperty({ example: 86400 })
  uptime_seconds: number;
  /** Service version (package.json). */
  @ApiProperty({ example: '0.1.0' })
  version: string;
}

/** The outcome of one readiness probe. */
export class ReadinessCheck {
  /** `up` when the dependency answered within the bound, else `down`. */
  // Explicit: the plugin orders a literal union as the compiler met its members, which differs between a cold and a warm ts-jest cache.
  @ApiProperty({ enum: ['up', 'down'], example: 'down' })
  status: 'up' | 'down';
  /** How long the probe took, in milliseconds (the bound when it timed out). */
  @ApiProperty({ example: 2000 })
  latency_ms: number;
  /** Why the dependency is down; absent when it is up. */
  @ApiPropertyOptional({ example: 'the database did not answer within 2 s' })
  error?: string;
}

export class ReadyResponse {
  /** Always `ready` on a 200 answer; a dependency that is down makes the answer 503. */
  @ApiProperty({ example: 'ready' })
  status: 'ready';
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(ReadinessCheck) },
    example: { database: { status: 'up', latency_ms: 2 }, queue: { status: 'up', latency_ms: 1 } },
    description: 'One entry per registered dependency (`database`, `queue`, …).',
  })
  checks: Record<string, ReadinessCheck>;
}

/** The 503 answer of GET /ready: problem+json carrying the same `checks` object. */
export class NotReadyProblem {
  @ApiProperty({ example: '/problems/service-unavailable' })
  type: string;
  @ApiProperty({ example: 'Service unavailable' })
  title: string;
  @ApiProperty({ example: 503 })
  status: number;
  @ApiProperty({ example: 'Not ready: database is down (the database did not answer within 2 s)' })
  detail: string;
  @ApiProperty({ example: 'service_unavailable' })
  error_code: string;
  /** Correlates with the X-Request-Id header and the server logs. */
  @ApiPropertyOptional({ example: EXAMPLE_ID.request })
  request_id?: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(ReadinessCheck) },
    example: {
      database: { status: 'down', latency_ms: 2000, error: 'the database did not answer within 2 s' },
      queue: { status: 'up', latency_ms: 1 },
    },
  })
  checks: Record<string, ReadinessCheck>;
}
