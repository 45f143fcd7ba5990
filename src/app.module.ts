import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditModule } from '../libs/audit/audit.module.js';
import { AuthLibModule } from '../libs/auth/auth-lib.module.js';
import { MediaTypeGuard } from '../libs/common/media-type.guard.js';
import { ReadinessModule } from '../libs/common/readiness.js';
import { DatabaseModule } from '../libs/database/database.module.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { AuthModule } from './modules/auth/auth.module.js';
import { StatusModule } from './modules/status/status.module.js';
import { UsersModule } from './modules/users/users.module.js';

/** The family modules the API serves; the worker process loads the same ones (their jobs). */
export const FAMILY_MODULES = [StatusModule, AuthModule, UsersModule];

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ConfigModule.forRoot(config), ReadinessModule, DatabaseModule.forRoot(config), AuthLibModule, AuditModule, ...FAMILY_MODULES],
      providers: [{ provide: APP_GUARD, useClass: MediaTypeGuard }],
    };
  }
}
