import { Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { endIdleThreads } from '#libs/common/thread-generator.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { FileUploadInterceptor } from '#libs/common/upload.interceptor.js';
import { UrlSigner } from '#libs/common/signed-url.js';
import { BulkWriter } from '#libs/database/bulk-writer.js';
import { DatasetsController } from './datasets.controller.js';
import { DimensionAssignController, VersionDimensionsController } from './dimensions/dimensions.controller.js';
import { DimensionsRepository } from './dimensions/dimensions.repository.js';
import { DimensionsService } from './dimensions/dimensions.service.js';
import { PartitionsRepository } from './dimensions/partitions.repository.js';
import { PartitionsService } from './dimensions/partitions.service.js';
import { DatasetsRepository } from './datasets.repository.js';
import { DatasetsService } from './datasets.service.js';
import { BulkRowsRepository } from './bulk-rows.repository.js';
import { TreeRowsRepository } from './tree-rows.repository.js';
import { DatasetWritesService } from './dataset-writes.service.js';
import { KeyedRowsService } from './keyed-rows.service.js';
import { DownloadService } from './versions/download.service.js';
import { DatasetVersionEntity } from './entities/dataset-version.entity.js';
import { DatasetEntity } from './entities/dataset.entity.js';
import { FilesController } from './versions/files.controller.js';
import { DatasetIndexMaintenance } from './index-maintenance.job.js';
import { QueryService } from './rows/query.service.js';
import { QualityController } from './quality/quality.controller.js';
import { QualityRepository } from './quality/quality.repository.js';
import { QualityService } from './quality/quality.service.js';
import { RowsController } from './rows/rows.controller.js';
import { RowsRepository } from './rows/rows.repository.js';
import { RowsService } from './rows/rows.service.js';
import { GeneratedRowsService } from './rows/generated-rows.service.js';
import { RunSourceService } from './run-source.service.js';
import { DatasetVersionsController, VersionsController } from './versions/versions.controller.js';
import { VersionsService } from './versions/versions.service.js';

/** Datasets, their versions and rows: upload, staged edits and commits, query, download. */
@Module({
  imports: [TypeOrmModule.forFeature([DatasetEntity, DatasetVersionEntity])],
  controllers: [
    DatasetsController,
    RowsController,
    VersionsController,
    DatasetVersionsController,
    DimensionAssignController,
    VersionDimensionsController,
    QualityController,
    FilesController,
  ],
  providers: [
    DatasetsService,
    DatasetIndexMaintenance,
    QualityService,
    QualityRepository,
    DimensionsRepository,
    DimensionsService,
    PartitionsService,
    PartitionsRepository,
    DatasetsRepository,
    RowsRepository,
    BulkRowsRepository,
    TreeRowsRepository,
    RowsService,
    DatasetWritesService,
    KeyedRowsService,
    VersionsService,
    QueryService,
    DownloadService,
    BulkWriter,
    UrlSigner,
    FileUploadInterceptor,
    RunSourceService,
    GeneratedRowsService,
  ],
  exports: [
    DatasetsService,
    VersionsService,
    QueryService,
    DimensionsService,
    RunSourceService,
    GeneratedRowsService,
    PartitionsService,
    DatasetWritesService,
    KeyedRowsService,
    RowsService,
  ],
})
export class DatasetsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('dataset', 'datasets');
    this.registry.registerTable('dataset_version', 'dataset_versions');
  }

  /** The upload thread kept warm ends with the application (ingest/upload-thread.ts). */
  onApplicationShutdown(): Promise<void> {
    return endIdleThreads();
  }
}
