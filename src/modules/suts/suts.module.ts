import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { ConnectionsController } from './connections.controller.js';
import { ConnectionsService } from './connections.service.js';
import { AdapterEntity } from './entities/adapter.entity.js';
import { ConnectionEntity } from './entities/connection.entity.js';
import { SutEntity } from './entities/sut.entity.js';
import { SutsController } from './suts.controller.js';
import { SutsRepository } from './suts.repository.js';
import { SutsService } from './suts.service.js';

/** Systems under test: connections, adapters, validate and test. */
@Module({
  imports: [TypeOrmModule.forFeature([SutEntity, ConnectionEntity, AdapterEntity]), SecretsModule],
  controllers: [SutsController, ConnectionsController],
  providers: [SutsService, SutsRepository, ConnectionsService],
  // SutsRepository only for runs/run-planner.service.ts, allowlisted in test/architecture/layering.spec.ts.
  exports: [SutsService],
})
export class SutsModule implements OnModuleInit {
  constructor(private readonly registry: WorkspaceResourceRegistry) {}

  onModuleInit(): void {
    this.registry.registerTable('sut', 'suts');
  }
}
