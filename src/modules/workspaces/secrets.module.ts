import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretCipher } from '../../../libs/crypto/secret-cipher.js';
import { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';
import { SecretsController } from './secrets.controller.js';
import { SecretsRepository } from './secrets.repository.js';
import { SecretsService } from './secrets.service.js';

/** Workspace secrets; exports SecretsService.resolveValue for families that call out with a key. */
@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceSecretEntity])],
  controllers: [SecretsController],
  providers: [SecretsService, SecretsRepository, SecretCipher],
  exports: [SecretsService],
})
export class SecretsModule {}
