import { expect } from '@jest/globals';
import type { Type } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal, WorkspaceAccess } from '../../libs/auth/roles.js';
import { DomainError } from '../../libs/common/domain-error.js';
import { DatasetsService } from '../../src/modules/datasets/datasets.service.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/** A caller of the services: the principal a request would carry and its access to one workspace. */
export interface Caller {
  principal: Principal;
  access: WorkspaceAccess;
  workspaceId: string;
}

/** The real application on this file's database, with nothing listening for HTTP requests in the tests. */
export interface ServiceApp {
  t: TestApp;
  /** The application's own instance of a provider (a service, a repository). */
  get<T>(type: Type<T>): T;
  /** A user (written by the factory) owning a fresh workspace. */
  caller(): Promise<Caller>;
  /** The version-1 dataset these rows make, uploaded through DatasetsService.upload as a JSON file. */
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

/**
 * Boots the application as the e2e files do (its database by the jest project: PostgreSQL or
 * the embedded PGlite), with RUN_WORKERS=false unless `env` says otherwise: a job a service
 * queues stays queued, so the test runs its handler itself and decides when and how it stops.
 */
export async function startServiceApp(env: Record<string, string> = {}): Promise<ServiceApp> {
  const t = await startTestApp({ RUN_WORKERS: 'false', ...env });
  const uploads = mkdtempSync(join(tmpdir(), 'ews-service-'));
  const app: ServiceApp = {
    t,
    get: (type) => t.app.get(type, { strict: false }),
    async caller() {
      const user = await t.factory.newUser();
      const workspace = await t.factory.newWorkspace(user);
      return {
        principal: {
          userId: user.id,
          email: user.email,
          displayName: user.email.split('@')[0],
          systemRole: 'user',
          tokenId: randomUUID(),
        },
        access: { workspaceId: workspace.id, role: 'owner', viaSystemAdmin: false },
        workspaceId: workspace.id,
      };
    },
    async dataset(caller, rows, name = `rows-${randomBytes(3).toString('hex')}`) {
      const path = join(uploads, `${randomUUID()}.json`);
      const text = JSON.stringify(rows);
      writeFileSync(path, text);
      const created = await app
        .get(DatasetsService)
        .upload(
          caller.access,
          { name },
          { path, originalname: 'rows.json', size: Buffer.byteLength(text) },
          caller.principal,
        );
      const ids = await app.query<{ row_id: string }>(
        'SELECT row_id FROM dataset_rows WHERE dataset_id = $1 ORDER BY ordinal',
        [created.id],
      );
      return { datasetId: created.id, versionId: created.latest_version!.id, rowIds: ids.map((r) => r.row_id) };
    },
    query: (sql, params = []) => t.dataSource.query(sql, params),
    async close() {
      await t.close();
      rmSync(uploads, { recursive: true, force: true });
    },
  };
  return app;
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
