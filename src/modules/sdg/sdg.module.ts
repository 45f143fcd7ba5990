import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { CataloguesModule } from '../catalogues/catalogues.module.js';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { SdgAdapterEntity } from './entities/sdg-adapter.entity.js';
import { SdgRunEntity } from './entities/sdg-run.entity.js';
import { SdgController } from './sdg.controller.js';
import { SdgGenerator } from './sdg-generator.job.js';
import { SdgRepository } from './sdg.repository.js';
import { SdgService } from './sdg.service.js';

/** Synthetic data generation: adapters and queued runs writing new candidate versions. */
@Module({
  imports: [
    TypeOrmModule.forFeature([SdgAdapterEntity, SdgRunEntity]),
    DatasetsModule,
    CataloguesModule,
    SecretsModule,
  ],
  controllers: [SdgController],
  providers: [SdgService, SdgRepository, SdgGenerator],
})
export class SdgModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('sdg_adapter', 'sdg_adapters');
  }
}
