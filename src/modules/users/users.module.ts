import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AdminBootstrapService } from './admin-bootstrap.service.js';
import { PasswordResetTokenEntity } from './entities/password-reset-token.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, PasswordResetTokenEntity]), ApiKeysModule],
  controllers: [UsersController],
  providers: [UsersRepository, UsersService, AdminBootstrapService],
  exports: [UsersService],
})
export class UsersModule {}
