import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets/secrets.module.js';
import { CustomOpsService } from './custom-ops.service.js';
import { CustomOpRevisionEntity } from './entities/custom-op-revision.entity.js';
import { CustomOpEntity } from './entities/custom-op.entity.js';
import { RegistryOpEntity } from './entities/registry-op.entity.js';
import { OpRegistry } from './op-registry.service.js';
import { OpsController } from './ops.controller.js';
import { OpsRepository } from './ops.repository.js';
import { WorkspaceOpsController } from './workspace-ops.controller.js';

/** The operation registry and the workspace's custom ops; exports OpRegistry for metric configs and runs, CustomOpsService for deleting an op no metric config uses. */
@Module({
  imports: [TypeOrmModule.forFeature([RegistryOpEntity, CustomOpEntity, CustomOpRevisionEntity]), SecretsModule],
  controllers: [OpsController, WorkspaceOpsController],
  providers: [OpRegistry, OpsRepository, CustomOpsService],
  exports: [OpRegistry, CustomOpsService],
})
export class OpsModule {}
