import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { UsersModule } from '../users/users.module.js';
import { WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';
import { InvitationsController } from './invitations.controller.js';
import { InvitationsRepository } from './invitations.repository.js';
import { InvitationsService } from './invitations.service.js';
import { WorkspacesModule } from './workspaces.module.js';

@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceInvitationEntity]), UsersModule, AuthModule, WorkspacesModule],
  controllers: [InvitationsController],
  providers: [InvitationsService, InvitationsRepository],
})
export class InvitationsModule {}
