import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EmbeddingConfigsController } from './embedding-configs.controller.js';
import { EmbeddingConfigsRepository } from './embedding-configs.repository.js';
import { EmbeddingConfigsService } from './embedding-configs.service.js';
import { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import { MetricCatalogueController } from './metric-catalogue.controller.js';
import { MetricCatalogueService } from './metric-catalogue.service.js';

/** Configuration catalogues: embedding configs and the workspace metric catalogue so far; judges, metric and eval configs come with issue 5. */
@Module({
  imports: [TypeOrmModule.forFeature([EmbeddingConfigEntity])],
  controllers: [EmbeddingConfigsController, MetricCatalogueController],
  providers: [EmbeddingConfigsService, EmbeddingConfigsRepository, MetricCatalogueService],
  exports: [EmbeddingConfigsService],
})
export class CataloguesModule {}
