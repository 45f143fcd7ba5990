import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { AuthController } from './auth.controller.js';
import { LoginThrottleRepository } from './auth.repository.js';
import { AuthService } from './auth.service.js';
import { OidcRelyingParty } from './sso/oidc-relying-party.js';
import { SsoLoginCookie } from './sso/sso-login-cookie.js';
import { SsoProvisioner } from './sso/sso-provisioner.js';
import { SsoController } from './sso/sso.controller.js';
import { SsoService } from './sso/sso.service.js';

@Module({
  imports: [UsersModule, WorkspacesModule],
  controllers: [AuthController, SsoController],
  providers: [AuthService, LoginThrottleRepository, SsoService, OidcRelyingParty, SsoLoginCookie, SsoProvisioner],
  exports: [AuthService],
})
export class AuthModule {}
