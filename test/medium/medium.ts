import { expect } from '@jest/globals';
import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AccessCache } from '#libs/auth/access-cache.js';
import type { Principal, WorkspaceAccess, WorkspaceRole } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { createRootLogger, JsonLogger } from '#libs/common/logger.js';
import { AppConfig } from '#libs/config/app-config.js';
import { foundationModules } from '#src/app.module.js';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import { Factory, type TestUser } from '../factories/factory.js';
import { createTestDatabase, type TestDatabase } from '../utils/database.js';
import { watchPool } from '../utils/embedded-watchdog.js';
import { testEnvironment } from '../utils/test-app.js';

/** A caller of the services: the principal a request would carry and its access to one workspace. */
export interface Caller {
  principal: Principal;
  access: WorkspaceAccess;
  workspaceId: string;
}

/**
 * The families a medium test names, with their real services and repositories, on this file's
 * own database (PostgreSQL or the embedded PGlite, by the jest project), without HTTP.
 */
export interface Medium {
  app: INestApplicationContext;
  config: AppConfig;
  dataSource: DataSource;
  db: TestDatabase;
  /** Users, workspaces and memberships written straight to the database. */
  factory: Factory;
  /** The application's own instance of a provider (a service, a repository). */
  get<T>(type: Type<T>): T;
  /** A user (written by the factory) owning a fresh workspace. */
  caller(): Promise<Caller>;
  /** The version-1 dataset these rows make, uploaded through DatasetsService.upload as a JSON file (DatasetsModule). */
  dataset(caller: Caller, rows: Array<Record<string, unknown>>, name?: string): Promise<UploadedRows>;
  /** One statement on the app's data source (outside any unit of work). */
  query<R = Record<string, any>>(sql: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export interface UploadedRows {
  datasetId: string;
  versionId: string;
  /** Row ids in upload order. */
  rowIds: string[];
}

/** A Nest module's own class, for the one this composes. */
class MediumModule {}

/**
 * Builds the named families on the foundation the service stands on (configuration, the
 * migrated database, access, audit, the queue), as Immich's medium tests build one service
 * with its real repositories: no HTTP server, no OpenAPI document, no other family's code.
 * RUN_WORKERS=false unless `env` says otherwise: a job a service queues stays queued, so the test
 * runs its handler itself and decides when and how it stops.
 */
export async function startMedium(
  families: Array<Type | DynamicModule>,
  env: Record<string, string> = {},
): Promise<Medium> {
  const db = await createTestDatabase();
  const files = mkdtempSync(join(tmpdir(), 'ews-medium-'));
  const dataDir = db.kind === 'embedded' ? db.dataDir : join(files, 'data');
  let app: INestApplicationContext;
  let config: AppConfig;
  try {
    config = AppConfig.fromEnvironment({ ...testEnvironment(db), DATA_DIR: dataDir, RUN_WORKERS: 'false', ...env });
    const logger = createRootLogger(config.env.LOG_LEVEL);
    app = await NestFactory.createApplicationContext(
      { module: MediumModule, imports: [...foundationModules(config, logger), ...families] },
      { logger: new JsonLogger(logger), abortOnError: false },
    );
    await app.init();
  } catch (err) {
    await db.drop();
    rmSync(files, { recursive: true, force: true });
    throw err;
  }
  const dataSource = app.get(DataSource);
  if (db.kind === 'embedded') watchPool((dataSource.driver as unknown as { master?: unknown }).master);
  const factory = new Factory(
    undefined,
    dataSource,
    {
      memoryCost: config.env.PASSWORD_HASH_MEMORY_KIB,
      timeCost: config.env.PASSWORD_HASH_TIME_COST,
      parallelism: config.env.PASSWORD_HASH_PARALLELISM,
    },
    app.get(AccessCache),
  );
  let closing: Promise<void> | undefined;
  const medium: Medium = {
    app,
    config,
    dataSource,
    db,
    factory,
    get: (type) => app.get(type, { strict: false }),
    async caller() {
      const user = await factory.newUser();
      const workspace = await factory.newWorkspace(user);
      return callerAs(user, workspace.id, 'owner');
    },
    async dataset(caller, rows, name = `rows-${randomBytes(3).toString('hex')}`) {
      const path = join(files, `${randomUUID()}.json`);
      const text = JSON.stringify(rows);
      writeFileSync(path, text);
      const created = await medium
        .get(DatasetsService)
        .upload(
          caller.access,
          { name },
          { path, originalname: 'rows.json', size: Buffer.byteLength(text) },
          caller.principal,
        );
      const ids = await medium.query<{ row_id: string }>(
        'SELECT row_id FROM dataset_rows WHERE dataset_id = $1 ORDER BY ordinal',
        [created.id],
      );
      return { datasetId: created.id, versionId: created.latest_version!.id, rowIds: ids.map((r) => r.row_id) };
    },
    query: (sql, params = []) => dataSource.query(sql, params),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await db.drop();
        rmSync(files, { recursive: true, force: true });
      })()),
  };
  return medium;
}

/** The principal a request of `user` would carry (a token of their own). */
export function principalOf(user: Pick<TestUser, 'id' | 'email'>, systemRole: 'admin' | 'user' = 'user'): Principal {
  return {
    userId: user.id,
    email: user.email,
    displayName: user.email.split('@')[0],
    systemRole,
    tokenId: randomUUID(),
  };
}

/** The user acting in the workspace with `role`, as the guard resolves it for a member. */
export function callerAs(user: Pick<TestUser, 'id' | 'email'>, workspaceId: string, role: WorkspaceRole): Caller {
  return { principal: principalOf(user), access: { workspaceId, role, viaSystemAdmin: false }, workspaceId };
}

/** A system administrator who is not a member of the workspace: the guard gives them owner access. */
export async function sysadminIn(s: Medium, workspaceId: string): Promise<Caller> {
  const user = await s.factory.newUser({ systemRole: 'admin' });
  return {
    principal: principalOf(user, 'admin'),
    access: { workspaceId, role: 'owner', viaSystemAdmin: true },
    workspaceId,
  };
}

/** A workspace with one user per role, each as a caller with the access the guard would give them. */
export interface Team {
  id: string;
  owner: Caller;
  admin: Caller;
  member: Caller;
  viewer: Caller;
}

/** A fresh workspace with an owner, an admin, a member and a viewer. */
export async function teamIn(s: Medium): Promise<Team> {
  const [owner, admin, member, viewer] = await Promise.all([
    s.factory.newUser(),
    s.factory.newUser(),
    s.factory.newUser(),
    s.factory.newUser(),
  ]);
  const { id } = await s.factory.newWorkspace(owner);
  await s.factory.addMember(id, admin.id, 'admin');
  await s.factory.addMember(id, member.id, 'member');
  await s.factory.addMember(id, viewer.id, 'viewer');
  return {
    id,
    owner: callerAs(owner, id, 'owner'),
    admin: callerAs(admin, id, 'admin'),
    member: callerAs(member, id, 'member'),
    viewer: callerAs(viewer, id, 'viewer'),
  };
}

/** The DomainError `work` fails with, checked to carry `code` (and `extensions`, when given). */
export async function domainError(
  work: Promise<unknown>,
  code: string,
  extensions?: Record<string, unknown>,
): Promise<DomainError> {
  const error = await work.then(
    () => {
      throw new Error(`expected a DomainError ${code}, but the call succeeded`);
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe(code);
  if (extensions) expect((error as DomainError).extensions).toEqual(extensions);
  return error as DomainError;
}
