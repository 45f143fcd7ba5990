import { Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConsumes,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  decodeExportRequest,
  encodeExportResponse,
  OtlpDecodeError,
  otlpEncoding,
  type OtlpEncoding,
  type OtlpSignal,
} from '#libs/traces/otlp-codec.js';
import { decodeLogsRequest } from '#libs/traces/otlp-logs.js';
import { OtlpExportResponse, OtlpLogsExportResponse } from './dto/live.dto.js';
import type { ExportOutcome } from './live-ingest.service.js';
import { DATASET_HEADER, LiveIngestService, MAX_DATASET_NAME, otlpDatasetName } from './live-ingest.service.js';
import { UUID_LENGTH } from '#libs/common/openapi-bounds.js';
import { unsupportedOtlpType } from './otlp-http.js';
import { TraceErrors } from './traces.errors.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

export const WORKSPACE_HEADER = 'x-ews-workspace';

/**
 * The OTLP/HTTP trace receiver: what an OpenTelemetry SDK's OTLP exporter, or a Collector's
 * `otlphttp` exporter, sends to `<endpoint>/v1/traces`. An addition beside the specification.
 */
@ApiTags('traces')
@Controller('v1')
export class OtlpController {
  constructor(private readonly ingest: LiveIngestService) {}

  /**
   * Receives an OTLP/HTTP trace export (binary protobuf or OTLP JSON, gzip or not) into trace
   * datasets: the `x-ews-dataset` header names the dataset, else each resource's `service.name`
   * does (created as a trace dataset on first use). Authenticated by an API key (its workspace is
   * the target) or a user's token with `x-ews-workspace`. The spans are durable when this
   * answers 200, and land in the dataset's open head version within moments; an exporter's
   * retry never lands a span twice (members).
   */
  @Post('traces')
  @HttpCode(200)
  @ApiOperation({ operationId: 'exportOtlpTraces' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { apiKeyOrHeader: WORKSPACE_HEADER })
  @ApiConsumes('application/x-protobuf', 'application/json')
  @ApiProduces('application/x-protobuf', 'application/json')
  @ApiHeader({
    name: DATASET_HEADER,
    required: false,
    description:
      "The trace dataset the spans land in (created as one when the workspace has none of this name); default: each resource's service.name",
    example: 'support-bot-production-traces',
    schema: { type: 'string', maxLength: MAX_DATASET_NAME },
  })
  @ApiHeader({
    name: WORKSPACE_HEADER,
    required: false,
    description:
      "The workspace, when authenticating with a user's token (an API key's own workspace is used otherwise)",
    example: '0b5e6d9c-8a51-4f6e-9d36-2f0c7c3c1a11',
    schema: { type: 'string', format: 'uuid', maxLength: UUID_LENGTH },
  })
  @ApiOkResponse({
    type: OtlpExportResponse,
    description:
      "An ExportTraceServiceResponse in the request's encoding; `partialSuccess` counts the spans rejected and says why",
  })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description:
      "otlp_body_undecodable, otlp_dataset_header_invalid, trace_dataset_invalid (the name is a test-case dataset's), validation_failed (x-ews-workspace missing or not a UUID with a user's token). A protobuf request gets a google.rpc.Status (application/x-protobuf) instead",
  })
  @ApiPayloadTooLargeResponse({
    type: ProblemResponse,
    description: 'payload_too_large: over OTLP_MAX_BYTES once decompressed',
  })
  @ApiUnsupportedMediaTypeResponse({
    type: ProblemResponse,
    description:
      'unsupported_media_type: a Content-Type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip or deflate',
  })
  @ApiTooManyRequestsResponse({
    type: ProblemResponse,
    description:
      'otlp_backpressure: the dataset has more acknowledged spans landing than OTLP_MAX_PENDING_SPANS; retry after Retry-After seconds',
  })
  async export(
    @CurrentWorkspace() access: WorkspaceAccess,
    @CurrentUser() caller: Principal,
    @Headers(DATASET_HEADER) datasetHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const encoding = otlpEncoding(req.headers['content-type']);
    if (!encoding) throw unsupportedOtlpType(req.headers['content-type']);
    const datasetName = otlpDatasetName(datasetHeader);
    const items = await decodedAs('ExportTraceServiceRequest', encoding, () => decodeExportRequest(req.body, encoding));
    const outcome = await this.ingest.export(caller, access.workspaceId, datasetName, items);
    answerExport(res, outcome, encoding, 'traces');
  }

  /**
   * Receives an OTLP/HTTP log export (binary protobuf or OTLP JSON, gzip or not), such as the
   * GenAI events OpenTelemetry's instrumentations of model clients emit. Each record with trace
   * context is kept for its span, in the dataset its spans land in (`x-ews-dataset`, else each
   * resource's `service.name`), and joined to the span's row: GenAI events fill its `input`,
   * `output` and `tool_calls` where the span lacks them, every record stays on the row as
   * `log.records`. A record without trace context is rejected (partial success). Durable when
   * this answers 200, authenticated and throttled as POST /v1/traces (members).
   */
  @Post('logs')
  @HttpCode(200)
  @ApiOperation({ operationId: 'exportOtlpLogs' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { apiKeyOrHeader: WORKSPACE_HEADER })
  @ApiConsumes('application/x-protobuf', 'application/json')
  @ApiProduces('application/x-protobuf', 'application/json')
  @ApiHeader({
    name: DATASET_HEADER,
    required: false,
    description:
      "The trace dataset whose spans the records join (created as one when the workspace has none of this name); default: each resource's service.name",
    example: 'support-bot-production-traces',
    schema: { type: 'string', maxLength: MAX_DATASET_NAME },
  })
  @ApiHeader({
    name: WORKSPACE_HEADER,
    required: false,
    description:
      "The workspace, when authenticating with a user's token (an API key's own workspace is used otherwise)",
    example: '0b5e6d9c-8a51-4f6e-9d36-2f0c7c3c1a11',
    schema: { type: 'string', format: 'uuid', maxLength: UUID_LENGTH },
  })
  @ApiOkResponse({
    type: OtlpLogsExportResponse,
    description:
      "An ExportLogsServiceResponse in the request's encoding; `partialSuccess` counts the log records rejected and says why",
  })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description:
      "otlp_body_undecodable, otlp_dataset_header_invalid, trace_dataset_invalid (the name is a test-case dataset's), validation_failed (x-ews-workspace missing or not a UUID with a user's token). A protobuf request gets a google.rpc.Status (application/x-protobuf) instead",
  })
  @ApiPayloadTooLargeResponse({
    type: ProblemResponse,
    description: 'payload_too_large: over OTLP_MAX_BYTES once decompressed, or more than 10,000 log records',
  })
  @ApiUnsupportedMediaTypeResponse({
    type: ProblemResponse,
    description:
      'unsupported_media_type: a Content-Type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip or deflate',
  })
  @ApiTooManyRequestsResponse({
    type: ProblemResponse,
    description:
      'otlp_backpressure: the dataset has more log records waiting for their spans than OTLP_MAX_PENDING_SPANS; retry after Retry-After seconds',
  })
  async exportLogs(
    @CurrentWorkspace() access: WorkspaceAccess,
    @CurrentUser() caller: Principal,
    @Headers(DATASET_HEADER) datasetHeader: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const encoding = otlpEncoding(req.headers['content-type']);
    if (!encoding) throw unsupportedOtlpType(req.headers['content-type']);
    const datasetName = otlpDatasetName(datasetHeader);
    const items = await decodedAs('ExportLogsServiceRequest', encoding, () => decodeLogsRequest(req.body, encoding));
    const outcome = await this.ingest.exportLogs(caller, access.workspaceId, datasetName, items);
    answerExport(res, outcome, encoding, 'logs');
  }
}

/** A body decoded as the OTLP request it should be; an undecodable one is a 400 naming what it is not. */
async function decodedAs<T>(request: string, encoding: OtlpEncoding, decode: () => T | Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (err) {
    if (err instanceof OtlpDecodeError)
      throw new DomainError(
        TraceErrors.otlp_body_undecodable,
        `The body is not an OTLP ${request} (${encoding === 'protobuf' ? 'binary protobuf' : 'OTLP JSON'}): ${err.message}`,
      );
    throw err;
  }
}

/** The 200 of an export, written here, not returned: an empty protobuf answer is zero bytes, which Nest would serialise as JSON. */
function answerExport(res: Response, outcome: ExportOutcome, encoding: OtlpEncoding, signal: OtlpSignal): void {
  const answer = encodeExportResponse(outcome.rejected, outcome.message, encoding, signal);
  if (answer instanceof Uint8Array)
    res
      .status(200)
      .type('application/x-protobuf')
      .send(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
  else res.status(200).json(answer);
}
