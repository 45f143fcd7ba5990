import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { sendUnaryData, Server, ServerUnaryCall, ServiceDefinition, ServiceError } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { RateLimiter } from '#libs/auth/rate-limiter.js';
import { ApiKeyAccess } from '#libs/auth/workspace-access.js';
import { DomainError } from '#libs/common/domain-error.js';
import { errorCodeDefinition } from '#libs/common/error-codes.js';
import { requestContext } from '#libs/common/request-context.js';
import { AppConfig } from '#libs/config/app-config.js';
import {
  decodeExportRequest,
  encodeExportResponse,
  encodeStatus,
  grpcCode,
  OtlpDecodeError,
  type OtlpSignal,
} from '#libs/traces/otlp-codec.js';
import { decodeLogsRequest } from '#libs/traces/otlp-logs.js';
import {
  BACKPRESSURE_RETRY_SECONDS,
  DATASET_HEADER,
  LiveIngestService,
  otlpDatasetName,
} from './live-ingest.service.js';
import { TraceErrors } from './traces.errors.js';

/** The method an OTLP/gRPC exporter calls (opentelemetry-proto, collector/trace/v1/trace_service.proto). */
export const OTLP_GRPC_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
/** The log method (opentelemetry-proto, collector/logs/v1/logs_service.proto). */
export const OTLP_GRPC_LOGS_EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

const bytes = (value: Buffer): Buffer => value;
/**
 * A service with its one Export method. The request stays bytes here and is decoded by the codec
 * the HTTP receiver uses (OpenTelemetry's generated types), so a body that is not an export
 * request is the same INVALID_ARGUMENT and a bad record the same drop.
 */
const exportService = (path: string): ServiceDefinition => ({
  Export: {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
    originalName: 'export',
  },
});

/**
 * The OTLP/gRPC trace and log receiver, on its own port (OTLP_GRPC_PORT; OTLP's is 4317): what an
 * OpenTelemetry SDK's `exporter-trace-otlp-grpc` (`exporter-logs-otlp-grpc`) or a Collector's
 * `otlp` exporter sends. The same live landing as POST /v1/traces and /v1/logs: an API key in the `authorization` metadata (`Bearer ews_...`,
 * member or above; its workspace is the target), the dataset from the `x-ews-dataset` metadata
 * or each resource's `service.name`, spans durable before the answer, partial success for
 * rejected spans. Failures are gRPC statuses: UNAUTHENTICATED, PERMISSION_DENIED,
 * INVALID_ARGUMENT, RESOURCE_EXHAUSTED beyond OTLP_MAX_BYTES (grpc-js refuses the message), and
 * UNAVAILABLE with a google.rpc.RetryInfo while the dataset's landing lags or the key is over its
 * ingestion rate limit (RATE_LIMIT_INGESTION, shared with the HTTP receiver), which exporters retry.
 * Plaintext (h2c): terminate TLS in front of it, as for the HTTP port.
 */
@Injectable()
export class OtlpGrpcReceiver implements OnApplicationShutdown {
  private readonly logger = new Logger('OtlpGrpc');
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly ingest: LiveIngestService,
    private readonly keys: ApiKeyAccess,
    private readonly limits: RateLimiter,
  ) {}

  /** Starts serving on host:port (port 0: any free one); answers the bound port. */
  async listen(port: number, host: string): Promise<number> {
    if (this.server) throw new Error('the OTLP/gRPC receiver is already listening');
    // grpc-js (some 70 modules) loads only when OTLP_GRPC_PORT asks for the receiver.
    const grpc = await import('@grpc/grpc-js');
    const server = new grpc.Server({ 'grpc.max_receive_message_length': this.config.env.OTLP_MAX_BYTES });
    const handler =
      (signal: OtlpSignal) => (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        this.export(call, signal).then(
          (answer) => callback(null, answer),
          (err: unknown) => callback(this.failure(err, grpc)),
        );
      };
    server.addService(exportService(OTLP_GRPC_EXPORT_PATH), { Export: handler('traces') });
    server.addService(exportService(OTLP_GRPC_LOGS_EXPORT_PATH), { Export: handler('logs') });
    const bound = await new Promise<number>((resolve, reject) => {
      server.bindAsync(
        `${host.includes(':') ? `[${host}]` : host}:${port}`,
        grpc.ServerCredentials.createInsecure(),
        (err, actual) => (err ? reject(err) : resolve(actual)),
      );
    });
    this.server = server;
    return bound;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    // Calls in flight finish (their spans are acknowledged only once durable); past the grace, cut.
    await new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, this.config.env.SHUTDOWN_GRACE_SECONDS * 1000);
      cut.unref();
      server.tryShutdown(() => {
        clearTimeout(cut);
        resolve();
      });
    });
  }

  private async export(call: ServerUnaryCall<Buffer, Buffer>, signal: OtlpSignal): Promise<Buffer> {
    const first = (key: string): string | undefined => {
      const value = call.metadata.get(key)[0];
      return value === undefined ? undefined : String(value);
    };
    const ip = /^(?:ipv4:)?([^:]+|\[[^\]]+\])/.exec(call.getPeer())?.[1];
    const { principal, access } = await this.keys.authorize(first('authorization'), { ip }, 'member');
    // The key's ingestion quota, shared with POST /v1/traces and /v1/logs.
    await this.limits.admit(
      'ingestion',
      principal.apiKey ? { apiKeyId: principal.apiKey.id } : { userId: principal.userId },
    );
    return requestContext.run(
      { requestId: randomUUID(), userId: principal.userId, apiKeyId: principal.apiKey?.id },
      async () => {
        const datasetName = otlpDatasetName(first(DATASET_HEADER));
        const undecodable = (err: unknown) => {
          if (err instanceof OtlpDecodeError)
            return new DomainError(
              TraceErrors.otlp_body_undecodable,
              `The message is not an OTLP ${signal === 'traces' ? 'ExportTraceServiceRequest' : 'ExportLogsServiceRequest'}: ${err.message}`,
            );
          return err;
        };
        let outcome;
        if (signal === 'traces') {
          const items = await decodeExportRequest(call.request, 'protobuf').catch((err: unknown) => {
            throw undecodable(err);
          });
          outcome = await this.ingest.export(principal, access.workspaceId, datasetName, items);
        } else {
          let items;
          try {
            items = decodeLogsRequest(call.request, 'protobuf');
          } catch (err) {
            throw undecodable(err);
          }
          outcome = await this.ingest.exportLogs(principal, access.workspaceId, datasetName, items);
        }
        return Buffer.from(encodeExportResponse(outcome.rejected, outcome.message, 'protobuf', signal) as Uint8Array);
      },
    );
  }

  /** A DomainError as the gRPC status OTLP asks for; anything else is INTERNAL, logged, its text kept in. */
  private failure(err: unknown, grpc: typeof import('@grpc/grpc-js')): Partial<ServiceError> {
    if (!(err instanceof DomainError)) {
      this.logger.error(`OTLP/gRPC export failed: ${(err as Error)?.stack ?? err}`);
      return { code: grpc.status.INTERNAL, details: 'internal error' };
    }
    const status = errorCodeDefinition(err.code)!.status;
    const message = `${err.code}: ${err.detail}`;
    // Backpressure and rate limits are UNAVAILABLE with RetryInfo (the OTLP/gRPC throttling rule),
    // which exporters retry after the delay: the Retry-After the HTTP receiver would send.
    const code = status === 429 ? grpc.status.UNAVAILABLE : grpcCode(status);
    const retry = status === 429 ? Number(err.headers['Retry-After']) || BACKPRESSURE_RETRY_SECONDS : undefined;
    const metadata = new grpc.Metadata();
    metadata.set('grpc-status-details-bin', Buffer.from(encodeStatus(code, message, retry)));
    return { code, details: message, metadata };
  }
}
