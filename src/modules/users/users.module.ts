import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminBootstrapService } from './admin-bootstrap.service.js';
import { PasswordResetTokenEntity } from './entities/password-reset-token.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { UsersRepository } from './users.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, PasswordResetTokenEntity])],
  providers: [UsersRepository, AdminBootstrapService],
  exports: [UsersRepository],
})
export class UsersModule {}
