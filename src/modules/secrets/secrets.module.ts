import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretCipher } from '#libs/crypto/secret-cipher.js';
import { WorkspaceSecretEntity } from './entities/workspace-secret.entity.js';
import { SecretReferences } from './secret-references.service.js';
import { SecretsController } from './secrets.controller.js';
import { SecretsRepository } from './secrets.repository.js';
import { SecretsService } from './secrets.service.js';

/** Workspace secrets; exports SecretsService.resolveValue and SecretReferences for families that call out with a key. */
@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceSecretEntity])],
  controllers: [SecretsController],
  providers: [SecretsService, SecretsRepository, SecretCipher, SecretReferences],
  exports: [SecretsService, SecretReferences],
})
export class SecretsModule {}
