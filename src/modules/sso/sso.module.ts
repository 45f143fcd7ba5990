import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { UsersModule } from '../users/users.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { OidcRelyingParty } from './oidc-relying-party.service.js';
import { SsoProvisioningService } from './sso-provisioning.service.js';
import { SsoController } from './sso.controller.js';
import { SsoService } from './sso.service.js';

/** Single sign-on through an OpenID Connect issuer: on top of auth (sessions), users and workspaces (roles). */
@Module({
  imports: [AuthModule, UsersModule, WorkspacesModule],
  controllers: [SsoController],
  providers: [SsoService, OidcRelyingParty, SsoProvisioningService],
})
export class SsoModule {}
