import { Module, OnModuleInit } from '@nestjs/common';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { FileUploadInterceptor } from '#libs/common/upload.interceptor.js';
import { BulkWriter } from '#libs/database/bulk-writer.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { FeedbackController } from './feedback/feedback.controller.js';
import { FeedbackRepository } from './feedback/feedback.repository.js';
import { TraceFeedbackService } from './feedback/feedback.service.js';
import { LandingListeners } from './landing-listeners.service.js';
import { LiveIngestService } from './live-ingest.service.js';
import { LiveLanding } from './live-landing.job.js';
import { LiveStreamsController } from './live-streams.controller.js';
import { LiveStreamsService } from './live-streams.service.js';
import { LiveRepository } from './live.repository.js';
import { LiveLogsRepository } from './logs/live-logs.repository.js';
import { OtlpController } from './otlp.controller.js';
import { OtlpGrpcReceiver } from './otlp-grpc.receiver.js';
import { RetentionController } from './retention.controller.js';
import { RetentionRepository } from './retention.repository.js';
import { TraceRetentionService } from './retention.service.js';
import { TraceDataController } from './trace-data.controller.js';
import { SpanTreeController } from './span-tree/span-tree.controller.js';
import { SpanTreeService } from './span-tree/span-tree.service.js';
import { ScoresController } from './scores/scores.controller.js';
import { TraceScoresRepository } from './scores/scores.repository.js';
import { TraceScoresService } from './scores/scores.service.js';
import { TraceEnricher } from './trace-enrichment.job.js';
import { TraceDatasets } from './trace-datasets.service.js';
import { TraceLanding } from './trace-landing.job.js';
import { TraceVersionsService } from './trace-versions.service.js';
import { TracesController } from './traces.controller.js';
import { TracesRepository } from './traces.repository.js';
import { TracesService } from './traces.service.js';
import './traces.errors.js';

/** Trace ingestion: detection, uploads, landing, drops, ground truth, topology, enrichment, tags, end users' feedback and the scores of online evaluation. */
@Module({
  imports: [DatasetsModule, SecretsModule],
  controllers: [
    TracesController,
    TraceDataController,
    SpanTreeController,
    LiveStreamsController,
    OtlpController,
    RetentionController,
    FeedbackController,
    ScoresController,
  ],
  providers: [
    TracesService,
    TraceVersionsService,
    SpanTreeService,
    TracesRepository,
    TraceLanding,
    TraceDatasets,
    TraceEnricher,
    LiveRepository,
    LiveLogsRepository,
    LiveIngestService,
    OtlpGrpcReceiver,
    LiveLanding,
    LiveStreamsService,
    RetentionRepository,
    TraceRetentionService,
    BulkWriter,
    FileUploadInterceptor,
    FeedbackRepository,
    TraceFeedbackService,
    TraceScoresRepository,
    TraceScoresService,
    LandingListeners,
  ],
  exports: [TraceFeedbackService, TraceVersionsService, TraceScoresService, TraceDatasets, LandingListeners],
})
export class TracesModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('trace_connection', 'trace_connections');
    this.registry.registerTable('trace_upload', 'trace_uploads');
    this.registry.registerTable('trace_ingest_run', 'trace_ingest_runs');
    this.registry.registerTable('trace_feedback', 'trace_feedback');
  }
}
