import { DynamicModule, Module, type Type } from '@nestjs/common';
import { AuditModule } from '#libs/audit/audit.module.js';
import { AuthLibModule } from '#libs/auth/auth-lib.module.js';
import { ReadinessModule } from '#libs/common/readiness.js';
import { DatabaseModule } from '#libs/database/database.module.js';
import { QueueModule } from '#libs/queue/queue.module.js';
import type { Logger } from 'pino';
import { createRootLogger } from '#libs/common/logger.js';
import { configureOutbound } from '#libs/common/outbound.js';
import type { AppConfig } from '#libs/config/app-config.js';
import { ConfigModule } from '#libs/config/config.module.js';
import { migrations } from './database/migrations/index.js';
import { ApiKeysModule } from './modules/api-keys/api-keys.module.js';
import { AnalysisModule } from './modules/analysis/analysis.module.js';
import { AuthModule } from './modules/auth/auth.module.js';
import { SsoModule } from './modules/sso/sso.module.js';
import { CataloguesModule } from './modules/catalogues/catalogues.module.js';
import { DatasetsModule } from './modules/datasets/datasets.module.js';
import { McpModule } from './modules/mcp/mcp.module.js';
import { OpsModule } from './modules/ops/ops.module.js';
import { ProjectsModule } from './modules/projects/projects.module.js';
import { TemplatesModule } from './modules/projects/templates.module.js';
import { ReportsModule } from './modules/reports/reports.module.js';
import { OnlineModule } from './modules/online/online.module.js';
import { AuditLogModule } from './modules/audit-log/audit-log.module.js';
import { ReviewModule } from './modules/review/review.module.js';
import { RunsModule } from './modules/runs/runs.module.js';
import { SdgModule } from './modules/sdg/sdg.module.js';
import { SdkModule } from './modules/sdk/sdk.module.js';
import { SecretsModule } from './modules/secrets/secrets.module.js';
import { StatusModule } from './modules/status/status.module.js';
import { SutsModule } from './modules/suts/suts.module.js';
import { TracesModule } from './modules/traces/traces.module.js';
import { UsersModule } from './modules/users/users.module.js';
import { InvitationsModule } from './modules/workspaces/invitations.module.js';
import { WorkspacesModule } from './modules/workspaces/workspaces.module.js';

/** The family modules the API serves; the worker process loads the same ones (their jobs). */
export const FAMILY_MODULES = [
  StatusModule,
  TemplatesModule,
  AuthModule,
  UsersModule,
  WorkspacesModule,
  ApiKeysModule,
  SecretsModule,
  InvitationsModule,
  SsoModule,
  DatasetsModule,
  CataloguesModule,
  SutsModule,
  OpsModule,
  RunsModule,
  SdgModule,
  AnalysisModule,
  TracesModule,
  ProjectsModule,
  ReportsModule,
  ReviewModule,
  OnlineModule,
  AuditLogModule,
  SdkModule,
  McpModule,
];

/**
 * What every family stands on: configuration, readiness, the database (migrated), access, audit
 * and the queue. The API and the worker put every family on it (AppModule); the medium tests
 * put the families they test (test/medium/medium.ts).
 */
export function foundationModules(config: AppConfig, logger: Logger): Array<Type | DynamicModule> {
  // The API and the worker are both composed here: one place sets the process's outbound policy.
  configureOutbound({ blockPrivate: config.env.OUTBOUND_BLOCK_PRIVATE });
  return [
    ConfigModule.forRoot(config),
    ReadinessModule,
    DatabaseModule.forRoot({ config, logger, migrations }),
    AuthLibModule,
    AuditModule,
    QueueModule,
  ];
}

@Module({})
export class AppModule {
  /** `extraModules` join the families (tests register test-only job handlers this way). */
  static forRoot(
    config: AppConfig,
    extraModules: Array<Type | DynamicModule> = [],
    logger: Logger = createRootLogger(config.env.LOG_LEVEL),
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [...foundationModules(config, logger), ...FAMILY_MODULES, ...extraModules],
    };
  }
}
