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
import { decodeExportRequest, encodeExportResponse, OtlpDecodeError, otlpEncoding } from '#libs/traces/otlp-codec.js';
import { OtlpExportResponse } from './dto/live.dto.js';
import { DATASET_HEADER, LiveIngestService, otlpDatasetName } from './live-ingest.service.js';
import { unsupportedOtlpType } from './otlp-http.js';
import { TraceErrors } from './traces.errors.js';

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
  @WorkspaceRoleRequired('member', { apiKeyOrHeader: WORKSPACE_HEADER })
  @ApiConsumes('application/x-protobuf', 'application/json')
  @ApiProduces('application/x-protobuf', 'application/json')
  @ApiHeader({
    name: DATASET_HEADER,
    required: false,
    description:
      "The trace dataset the spans land in (created as one when the workspace has none of this name); default: each resource's service.name",
    example: 'support-bot-production-traces',
  })
  @ApiHeader({
    name: WORKSPACE_HEADER,
    required: false,
    description:
      "The workspace, when authenticating with a user's token (an API key's own workspace is used otherwise)",
    example: '0b5e6d9c-8a51-4f6e-9d36-2f0c7c3c1a11',
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
    const items = await decodeExportRequest(req.body, encoding).catch((err: unknown) => {
      if (err instanceof OtlpDecodeError)
        throw new DomainError(
          TraceErrors.otlp_body_undecodable,
          `The body is not an OTLP ExportTraceServiceRequest (${encoding === 'protobuf' ? 'binary protobuf' : 'OTLP JSON'}): ${err.message}`,
        );
      throw err;
    });
    const outcome = await this.ingest.export(caller, access.workspaceId, datasetName, items);
    const answer = encodeExportResponse(outcome.rejected, outcome.message, encoding);
    // Written here, not returned: an empty protobuf answer is zero bytes, which Nest would serialise as JSON.
    if (answer instanceof Uint8Array)
      res
        .status(200)
        .type('application/x-protobuf')
        .send(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
    else res.status(200).json(answer);
  }
}
