import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  climbsIntoLibs,
  exportedRepositories,
  familyCycles,
  familyGraph,
  libsImportingSrc,
  localImports,
  packageJsonImports,
  repositoryImportsAcrossFamilies,
  type SourceFile,
} from './import-graph.js';
import { sqlTextAcrossFamilies } from './border-values.js';
import { createdTables, foreignTablesInSql, publishedFunctionProblems, tableOwners } from './table-owners.js';
import { dtoBuildersOutsideMappers } from './mappers.js';
import { productionFiles } from './source-files.js';
import { unnamedWorkspaceFreeFinders, workspaceComparedAfterLoad, workspaceFreeCallers } from './tenancy.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

const files = productionFiles(root);

/** Every module of the package (specs, scripts and benchmarks too); a folder with a package.json of its own is another package. */
function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return ['node_modules', 'dist'].includes(name) || existsSync(join(path, 'package.json')) ? [] : modules(path);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(name) ? [path] : [];
  });
}

/** True when the file imports a value (not only types) from the module. */
function importsValueFrom(text: string, module: string): boolean {
  const statements = [...text.matchAll(/^import\s+([^;]*?)\s+from\s+'([^']+)';/gms)].filter((m) => m[2] === module);
  return statements.some(([, clause]) => {
    if (clause.startsWith('type ')) return false;
    const named = clause.match(/^\{([^}]*)\}$/s);
    if (!named) return true;
    return named[1]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .some((spec) => !spec.startsWith('type '));
  });
}

describe('layering (STYLE.md habits)', () => {
  it('only repositories, entities, migrations and the database/queue libraries import typeorm or kysely values', () => {
    const allowed =
      /(\.repository\.ts|\.entity\.ts|\/migrations\/|^libs\/database\/|^libs\/queue\/.*(repository|store)\.ts$)/;
    const offenders = files
      .filter(
        (f) => !allowed.test(f.path) && (importsValueFrom(f.text, 'typeorm') || importsValueFrom(f.text, 'kysely')),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('no code is handed an EntityManager or holds a connection of its own: the unit of work carries the transaction', () => {
    // A repository reached outside the open transaction waits forever on the embedded database's one
    // connection (libs/database/unit-of-work.ts); queries go through Db, units of work through TransactionRunner.
    const own = /^libs\/database\//;
    const handed = files.filter((f) => !own.test(f.path) && /\bEntityManager\b/.test(f.text)).map((f) => f.path);
    const injected = files
      .filter((f) => !own.test(f.path) && !f.path.includes('/migrations/'))
      .filter(
        (f) =>
          /@InjectRepository\(|@InjectDataSource\(|\.transaction\(|\.createQueryRunner\(/.test(f.text) ||
          /readonly \w+: DataSource\b/.test(f.text),
      )
      .map((f) => f.path);
    expect(handed).toEqual([]);
    expect(injected).toEqual([]);
  });

  it('only controllers (and the HTTP plumbing in libs/common, libs/auth) import express', () => {
    const allowed =
      /(\.controller\.ts$|^libs\/common\/|^libs\/auth\/|^src\/bootstrap\.ts$|^libs\/queue\/.*accepted.*\.ts$)/;
    const offenders = files
      .filter((f) => !allowed.test(f.path) && importsValueFrom(f.text, 'express'))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('HTTP ends at the controller: no service, repository or other provider of a family takes an express type', () => {
    // If-Match is an IfMatchPrecondition (@IfMatch()), a signed URL's origin a string (@RequestOrigin()), a file a FileAnswer.
    const httpPlumbing = /(\.controller\.ts$|\.interceptor\.ts$|^src\/modules\/traces\/otlp-http\.ts$)/;
    const offenders = files
      .filter((f) => f.path.startsWith('src/modules/') && !httpPlumbing.test(f.path))
      .filter((f) => /from 'express'/.test(f.text))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it("every provider's file says its role: .service, .repository, .job (background work) and the like", () => {
    const roles =
      /\.(controller|service|repository|job|module|guard|interceptor|receiver|mapper|errors|jobs|rules)\.ts$/;
    const unnamed = files
      .filter((f) => f.path.startsWith('src/modules/') && /@Injectable\(/.test(f.text) && !roles.test(f.path))
      .map((f) => f.path);
    expect(unnamed).toEqual([]);
  });

  it('a family folder holds at most 25 files at its top; more go into sub-folders by subject', () => {
    const perFolder = new Map<string, number>();
    for (const f of files) {
      const top = /^src\/modules\/([^/]+)\/[^/]+\.ts$/.exec(f.path);
      if (top) perFolder.set(top[1], (perFolder.get(top[1]) ?? 0) + 1);
    }
    expect([...perFolder].filter(([, n]) => n > 25).map(([family, n]) => `${family}: ${n} files`)).toEqual([]);
  });

  it('no barrels: code imports the file that defines what it uses', () => {
    const reexports = files.filter((f) => /^export (\*|\{[^}]*\}) from /m.test(f.text)).map((f) => f.path);
    expect(reexports).toEqual([]);
  });

  it('repositories throw no HTTP errors', () => {
    const offenders = files
      .filter(
        (f) =>
          f.path.endsWith('.repository.ts') &&
          /(HttpException|NotFoundException|BadRequestException|ForbiddenException)\b/.test(f.text),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('every controller route states its access rule', () => {
    const rule = /@(Public|PublicWithOptionalUser|Authenticated|SystemAdmin|WorkspaceRoleRequired)\(/;
    const missing: string[] = [];
    for (const f of files.filter((x) => x.path.endsWith('.controller.ts'))) {
      const blocks = f.text.split(/\n(?=\s*@(?:Get|Post|Put|Patch|Delete)\()/).slice(1);
      for (const block of blocks) {
        const head = block.split(/\n\s*(?:async\s+)?[a-zA-Z]+\(/)[0];
        if (!rule.test(head)) missing.push(`${f.path}: ${block.trim().split('\n')[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('imports run one way (docs/architecture.md#which-room)', () => {
  it('nothing in libs/ imports src/', () => {
    expect(libsImportingSrc(files)).toEqual([]);
  });

  it('the rule sees a library reaching into the application', () => {
    const planted: SourceFile[] = [
      { path: 'libs/queue/queue.module.ts', text: "import { AppConfig } from '../../src/config/app-config.js';" },
      {
        path: 'libs/database/database.module.ts',
        text: "const m = await import('../../src/database/migrations/index.js');",
      },
      {
        path: 'libs/common/ok.ts',
        text: "import { x } from '../config/app-config.js';\nimport type { Y } from './y.js';",
      },
      { path: 'src/app.module.ts', text: "import { DatabaseModule } from '#libs/database/database.module.js';" },
      // The subpath import of the sources (package.json "imports") is seen as the climb was.
      { path: 'libs/auth/auth-lib.module.ts', text: "import type { AppModule } from '#src/app.module.js';" },
      { path: 'libs/common/lazy.ts', text: "export const load = () => import('#src/modules/runs/runs.service.js');" },
    ];
    expect(libsImportingSrc(planted)).toEqual([
      'libs/queue/queue.module.ts imports src/config/app-config',
      'libs/database/database.module.ts imports src/database/migrations/index',
      'libs/auth/auth-lib.module.ts imports src/app.module',
      'libs/common/lazy.ts imports src/modules/runs/runs.service',
    ]);
  });

  it('a subpath import names the same file as the relative climb it replaces; other specifiers name none', () => {
    const written = (text: string) => localImports({ path: 'src/modules/runs/runs.jobs.ts', text }).map((e) => e.to);
    const climbs = [
      "import { Db } from '../../../libs/database/unit-of-work.js';",
      "export type { JobContext } from '../../../libs/queue/job.types.js';",
      "const { AppConfig } = await import('../../../libs/config/app-config.js');",
      "declare module '../../../libs/queue/job.types.js' {}",
      "import {\n  type Page,\n  paginate,\n} from '../../../libs/common/pagination.js';",
      "import '../../app.module.js';",
    ];
    const subpaths = [
      "import { Db } from '#libs/database/unit-of-work.js';",
      "export type { JobContext } from '#libs/queue/job.types.js';",
      "const { AppConfig } = await import('#libs/config/app-config.js');",
      "declare module '#libs/queue/job.types.js' {}",
      "import {\n  type Page,\n  paginate,\n} from '#libs/common/pagination.js';",
      "import '#src/app.module.js';",
    ];
    expect(subpaths.map(written)).toEqual(climbs.map(written));
    expect(written(climbs[0])).toEqual(['libs/database/unit-of-work']);
    expect(written("import { x } from '#unknown/x.js';\nimport { Injectable } from '@nestjs/common';")).toEqual([]);
  });

  it('nothing climbs into a library: the application, the tests, the benchmarks and the other libraries import #libs/…', () => {
    const everywhere: SourceFile[] = ['src', 'libs', 'test', 'bench', 'sdk', 'scripts']
      .flatMap((dir) => modules(join(root, dir)))
      .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
    expect(everywhere.length).toBeGreaterThan(files.length);
    expect(climbsIntoLibs(everywhere)).toEqual([]);
  });

  it('the rule sees a relative climb into a library, from the application, the tests and another library', () => {
    const planted: SourceFile[] = [
      { path: 'src/main.ts', text: "import { AppConfig } from '../libs/config/app-config.js';" },
      {
        path: 'src/modules/runs/runs.service.ts',
        text: "import {\n  Db,\n} from '../../../libs/database/unit-of-work.js';\nimport { RunsRepository } from './runs.repository.js';",
      },
      {
        path: 'test/e2e/runs/runs.e2e-spec.ts',
        text: "jest.unstable_mockModule('../../../libs/common/outbound.js', () => ({}));",
      },
      { path: 'libs/auth/access-cache.ts', text: "import type { Db } from '../database/unit-of-work.js';" },
      {
        path: 'bench/clustering.mjs',
        text: "import { clusterTexts } from '../dist/libs/dataset-analysis/clustering.js';",
      },
      // A library's own files, subpath imports, and climbs that reach no library are fine.
      { path: 'libs/queue/drivers/bullmq.driver.ts', text: "import { JobDriver } from '../job-driver.js';" },
      { path: 'libs/evaluation/judges/judge-client.ts', text: "import { Metric } from '../metrics/metric.js';" },
      { path: 'src/modules/runs/runs.module.ts', text: "import { QueueModule } from '#libs/queue/queue.module.js';" },
      { path: 'test/utils/test-app.ts', text: "import { createApp } from '../../src/bootstrap.js';" },
      { path: 'src/modules/runs/runs.mapper.ts', text: "import { toPage } from '../datasets/datasets.mapper.js';" },
    ];
    expect(climbsIntoLibs(planted)).toEqual([
      'src/main.ts imports ../libs/config/app-config.js',
      'src/modules/runs/runs.service.ts imports ../../../libs/database/unit-of-work.js',
      'test/e2e/runs/runs.e2e-spec.ts imports ../../../libs/common/outbound.js',
      'libs/auth/access-cache.ts imports ../database/unit-of-work.js',
      'bench/clustering.mjs imports ../dist/libs/dataset-analysis/clustering.js',
    ]);
  });

  it('no built module imports a package.json, which would make dist/ a package of its own', () => {
    expect(packageJsonImports(files)).toEqual([]);
  });

  it('the rule sees a package.json imported, and not one read or named as a package', () => {
    const planted: SourceFile[] = [
      { path: 'src/openapi.ts', text: "import packageJson from '../package.json' with { type: 'json' };" },
      {
        path: 'src/modules/status/status.service.ts',
        text: "const { version } = await import('../../../package.json', { with: { type: 'json' } });",
      },
      { path: 'src/version.ts', text: 'readFileSync(findPackageJSON(import.meta.url)!, "utf8");' },
      { path: 'libs/reports/render.ts', text: "require.resolve('dejavu-fonts-ttf/package.json');" },
      { path: 'libs/reports/templates.ts', text: "import templates from './templates.json' with { type: 'json' };" },
    ];
    expect(packageJsonImports(planted)).toEqual([
      'src/openapi.ts imports ../package.json',
      'src/modules/status/status.service.ts imports ../../../package.json',
    ]);
  });

  it('family folders under src/modules import each other without cycles', () => {
    expect(familyCycles(familyGraph(files))).toEqual([]);
  });

  it('the rule finds a cycle between families, however long, and names the imports that close it', () => {
    const planted: SourceFile[] = [
      // workspaces → catalogues → secrets → workspaces: the cycle secrets-inside-workspaces made.
      {
        path: 'src/modules/workspaces/workspaces.module.ts',
        text: "import { CataloguesModule } from '../catalogues/catalogues.module.js';",
      },
      {
        path: 'src/modules/catalogues/judges.service.ts',
        text: "import type { SecretsService } from '../secrets/secrets.service.js';",
      },
      {
        path: 'src/modules/secrets/secrets.service.ts',
        text: "import { MembersService } from '../workspaces/members.service.js';",
      },
      // Imports inside one family, and one-way imports, are no cycle.
      {
        path: 'src/modules/runs/runs.service.ts',
        text: "import { RunsRepository } from './runs.repository.js';\nimport { X } from '../datasets/x.js';",
      },
      {
        path: 'src/modules/datasets/x.ts',
        text: "import { Y } from './sub/y.js';\nimport { Z } from '#libs/common/z.js';",
      },
    ];
    expect(familyCycles(familyGraph(planted))).toEqual([
      'catalogues → secrets → workspaces → catalogues: ' +
        'catalogues → secrets (src/modules/catalogues/judges.service.ts imports src/modules/secrets/secrets.service); ' +
        'secrets → workspaces (src/modules/secrets/secrets.service.ts imports src/modules/workspaces/members.service); ' +
        'workspaces → catalogues (src/modules/workspaces/workspaces.module.ts imports src/modules/catalogues/catalogues.module)',
    ]);
    const twoWay: SourceFile[] = [
      { path: 'src/modules/a/a.ts', text: "export { B } from '../b/b.js';" },
      { path: 'src/modules/b/b.ts', text: "import '../a/a.js';" },
    ];
    expect(familyCycles(familyGraph(twoWay))).toEqual([
      'a → b → a: a → b (src/modules/a/a.ts imports src/modules/b/b); b → a (src/modules/b/b.ts imports src/modules/a/a)',
    ]);
  });
});

/**
 * What is left of one family reaching another's repository (docs/architecture.md#who-owns-which-tables).
 * The list may only shrink: an entry no longer true fails the test until it is struck out.
 */
const REPOSITORY_IMPORTS_LEFT: string[] = [
  // (The file and live landings now ask DatasetWritesService of the datasets family.)
];

/** The module exports those imports need; the list may only shrink with them. */
const EXPORTED_REPOSITORIES_LEFT: string[] = [];

/** Tables no entity describes (migrations create them), with the family whose repositories own them. */
const TABLES_WITHOUT_ENTITY: Record<string, string> = {
  audit_retention: 'audit-log',
  analysis_results: 'analysis',
  analysis_row_properties: 'analysis',
  analysis_runs: 'analysis',
  cluster_runs: 'analysis',
  api_keys: 'api-keys',
  login_throttle: 'auth',
  notification_deliveries: 'catalogues',
  review_items: 'review',
  review_judge_runs: 'review',
  review_labels: 'review',
  review_queues: 'review',
  review_rubric_versions: 'review',
  review_slots: 'review',
  online_alert_events: 'online',
  online_alert_rules: 'online',
  online_backfills: 'online',
  online_evaluator_versions: 'online',
  online_evaluators: 'online',
  online_targets: 'online',
  trace_scores: 'traces',
  data_operation_runs: 'datasets',
  dataset_dimensions: 'datasets',
  dataset_partitions: 'datasets',
  dataset_row_dimensions: 'datasets',
  dataset_rows: 'datasets',
  dataset_staged_edits: 'datasets',
  run_events: 'runs',
  run_gate_verdicts: 'runs',
  run_items: 'runs',
  trace_connections: 'traces',
  trace_drops: 'traces',
  trace_enrichment_results: 'traces',
  trace_enrichment_runs: 'traces',
  trace_feedback: 'traces',
  trace_ground_truth_versions: 'traces',
  trace_inbox: 'traces',
  trace_log_inbox: 'traces',
  trace_ingest_runs: 'traces',
  trace_live_streams: 'traces',
  trace_retention: 'traces',
  trace_tags: 'traces',
  trace_uploads: 'traces',
};

/**
 * SQL functions a family publishes for the others to call inside their own statements (its tables
 * stay its own: docs/architecture.md#what-families-offer-each-other), with that family.
 */
const PUBLISHED_FUNCTIONS: Record<string, string> = {
  dataset_version_rows: 'datasets',
  trace_score_of: 'traces',
  user_identities: 'users',
};

/** Tables the libraries own (the job queue, the audit trail, sessions): no family's, so not checked here. */
const LIBRARY_TABLES = ['audit_events', 'auth_tokens', 'jobs'];

/**
 * Today's SQL that names another family's table: the work left (docs/architecture.md lists it).
 * The list may only shrink: move the query to the owner's repository and call the owner's service.
 */
const FOREIGN_SQL_LEFT: string[] = [
  // (Bulk reads inside another family's statement call the owner's published functions; the
  // rest ask the owner's service, or a source the owner's module provides where an import would close a cycle.)
];

/** SQL text one family still hands another, the work left: none (the list may only stay empty). */
const SQL_TEXT_ACROSS_LEFT: string[] = [];

/** What `found` has beyond `allowed` (new violations), and what `allowed` lists that is no longer found (to strike out). */
function against(found: string[], allowed: string[]): { new: string[]; stale: string[] } {
  return {
    new: found.filter((x) => !allowed.includes(x)).sort(),
    stale: allowed.filter((x) => !found.includes(x)).sort(),
  };
}

describe('a family owns its tables (STYLE.md: only its repository names them; others call its service)', () => {
  it("no family imports another family's repository, beyond the allowlist", () => {
    expect(against(repositoryImportsAcrossFamilies(files), REPOSITORY_IMPORTS_LEFT)).toEqual({ new: [], stale: [] });
  });

  it('no family module exports a repository, beyond the allowlist', () => {
    expect(against(exportedRepositories(files), EXPORTED_REPOSITORIES_LEFT)).toEqual({ new: [], stale: [] });
  });

  it('the rules see a repository imported or exported across families, and nothing else', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/modules/reports/reports.service.ts',
        text: "import { RunsRepository } from '../runs/runs.repository.js';",
      },
      {
        path: 'src/modules/sdg/sdg.service.ts',
        text: "import type { JudgeRow } from '../catalogues/judges.repository.js';",
      },
      { path: 'src/modules/auth/index.ts', text: "export { UsersRepository } from '../users/users.repository.js';" },
      // Its own repository, a library's, and another family's service are fine.
      {
        path: 'src/modules/runs/runs.service.ts',
        text: "import { RunsRepository } from './runs.repository.js';\nimport { AccessRepository } from '#libs/auth/access.repository.js';\nimport { JudgesService } from '../catalogues/judges.service.js';",
      },
      {
        path: 'src/modules/users/users.module.ts',
        text: '@Module({\n  providers: [UsersService, UsersRepository],\n  exports: [\n    UsersService,\n    // UsersRepository was here\n    UsersRepository,\n  ],\n})',
      },
    ];
    expect(repositoryImportsAcrossFamilies(planted)).toEqual([
      'src/modules/reports/reports.service.ts imports src/modules/runs/runs.repository',
      'src/modules/sdg/sdg.service.ts imports src/modules/catalogues/judges.repository',
      'src/modules/auth/index.ts imports src/modules/users/users.repository',
    ]);
    expect(exportedRepositories(planted)).toEqual(['src/modules/users/users.module.ts: UsersRepository']);
  });

  it('what one family hands another holds no SQL text: typed values and typed query builders cross, never statements', () => {
    expect(against(sqlTextAcrossFamilies(files), SQL_TEXT_ACROSS_LEFT)).toEqual({ new: [], stale: [] });
  });

  it('the border rule sees SQL text in a type another family takes, directly or re-exported, and nothing else', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/modules/datasets/span-rows.repository.ts',
        text: 'export interface RowSource {\n  ctes: string;\n  relation: string;\n  params: unknown[];\n}',
      },
      {
        path: 'src/modules/datasets/dataset-writes.service.ts',
        text: [
          "export type { RowSource } from './span-rows.repository.js';",
          'export type Page = { where?: string[]; order: string; name: string; query: Compiled };',
          'export interface Row {\n  id: string;\n  data: { label: string };\n}',
          'export type Source = (q: QueryCreator<DB>) => QueryCreator<DB & Rows>;',
        ].join('\n'),
      },
      {
        path: 'src/modules/traces/live.repository.ts',
        text: "import type { Page, Row, RowSource, Source } from '../datasets/dataset-writes.service.js';",
      },
      // Inside one family, SQL text may pass from a service to its repository.
      {
        path: 'src/modules/datasets/rows/rows.service.ts',
        text: "import { type Page } from '../dataset-writes.service.js';",
      },
    ];
    expect(sqlTextAcrossFamilies(planted)).toEqual([
      'src/modules/traces/live.repository.ts takes Page from src/modules/datasets/dataset-writes.service: its where holds SQL text',
      'src/modules/traces/live.repository.ts takes Page from src/modules/datasets/dataset-writes.service: its order holds SQL text',
      'src/modules/traces/live.repository.ts takes RowSource from src/modules/datasets/span-rows.repository: its ctes holds SQL text',
      'src/modules/traces/live.repository.ts takes RowSource from src/modules/datasets/span-rows.repository: its relation holds SQL text',
    ]);
  });

  it('every table the migrations create has an owner: a family (by entity or by name here) or a library', () => {
    const owners = tableOwners(files, TABLES_WITHOUT_ENTITY);
    expect(createdTables(files).filter((t) => !owners.has(t) && !LIBRARY_TABLES.includes(t))).toEqual([]);
  });

  it('SQL in a family names only its own tables, beyond the allowlist', () => {
    expect(against(foreignTablesInSql(files, tableOwners(files, TABLES_WITHOUT_ENTITY)), FOREIGN_SQL_LEFT)).toEqual({
      new: [],
      stale: [],
    });
  });

  it('every function the migrations create is published by a family (or a trigger), and names only its tables', () => {
    expect(publishedFunctionProblems(files, PUBLISHED_FUNCTIONS, tableOwners(files, TABLES_WITHOUT_ENTITY))).toEqual(
      [],
    );
  });

  it('the function rule sees a published function naming another family, one no migration creates, and one no family publishes', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/database/migrations/1-x.ts',
        text: [
          'await q.query(`CREATE FUNCTION dataset_version_rows(d uuid, v integer) RETURNS SETOF jsonb LANGUAGE sql STABLE AS $$ SELECT r.data FROM dataset_rows r JOIN runs x ON x.dataset_id = r.dataset_id $$`);',
          'await q.query(`CREATE OR REPLACE FUNCTION run_rows() RETURNS SETOF jsonb LANGUAGE sql AS $$ SELECT data FROM run_items $$`);',
          'await q.query(`CREATE FUNCTION rows_cleanup() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM dataset_rows; END $$`);',
        ].join('\n'),
      },
    ];
    const owners = new Map([
      ['dataset_rows', 'datasets'],
      ['runs', 'runs'],
      ['run_items', 'runs'],
    ]);
    expect(
      publishedFunctionProblems(planted, { dataset_version_rows: 'datasets', project_runs: 'runs' }, owners),
    ).toEqual([
      'dataset_version_rows (datasets) names runs (runs)',
      'project_runs (runs) is created by no migration',
      'run_rows is published by no family',
    ]);
    // Calling a published function names none of its family's tables.
    const caller: SourceFile[] = [
      {
        path: 'src/modules/runs/runs.repository.ts',
        text: "db.query('SELECT r.data FROM dataset_version_rows($1, $2) r')",
      },
    ];
    expect(foreignTablesInSql(caller, owners)).toEqual([]);
  });

  it("the SQL rule sees another family's table in a statement (SQL text or typed), and not in a comment or its own", () => {
    const planted: SourceFile[] = [
      { path: 'src/modules/users/entities/user.entity.ts', text: "@Entity('users')\nexport class UserEntity {}" },
      {
        path: 'src/modules/workspaces/entities/workspace.entity.ts',
        text: "@Entity('workspaces')\nexport class WorkspaceEntity {}",
      },
      {
        path: 'src/modules/workspaces/members.repository.ts',
        text: "/** Reads users' names FROM users. */\n// JOIN users\nconst q = `SELECT m.* FROM workspaces w JOIN users u ON u.id = m.user_id`;",
      },
      {
        path: 'src/modules/auth/auth.service.ts',
        text: "await this.db.query('update users set last_login_at = now()');",
      },
      {
        path: 'src/modules/users/users.repository.ts',
        text: "await this.db.query('SELECT 1 FROM users WHERE id = $1');",
      },
      {
        path: 'src/modules/runs/run-items.ts',
        text: "await this.db.query('INSERT INTO run_items SELECT * FROM dataset_rows');",
      },
      {
        path: 'src/modules/api-keys/api-keys.repository.ts',
        text: "await this.db.typed((q) => q.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id'));",
      },
      { path: 'src/modules/secrets/secrets.repository.ts', text: "q.updateTable('workspaces').set({ name: 'x' })" },
      { path: 'src/modules/suts/suts.repository.ts', text: "q.selectFrom('suts').select(['id']).where('id', '=', id)" },
    ];
    const owners = tableOwners(planted, { run_items: 'runs', dataset_rows: 'datasets', suts: 'suts' });
    expect(owners.get('users')).toBe('users');
    expect(foreignTablesInSql(planted, owners)).toEqual([
      'src/modules/api-keys/api-keys.repository.ts names users (users)',
      'src/modules/auth/auth.service.ts names users (users)',
      'src/modules/runs/run-items.ts names dataset_rows (datasets)',
      'src/modules/secrets/secrets.repository.ts names workspaces (workspaces)',
      'src/modules/workspaces/members.repository.ts names users (users)',
    ]);
  });
});

/**
 * Who looks records up without a workspace, and why (docs/architecture.md#data-access): each holds
 * no workspace to scope by. A new caller fails here until it is listed with its reason.
 */
const WORKSPACE_FREE_CALLERS = [
  // The trace landings' jobs name the dataset and version in their payload.
  'src/modules/datasets/dataset-writes.service.ts: findForUpdateUnscoped, findVersionByIdUnscoped',
  // Signed file URLs: the signature, not a workspace, authorises them.
  'src/modules/datasets/versions/download.service.ts: findVersionByIdUnscoped',
  'src/modules/reports/report-files.service.ts: findUnscoped',
  'src/modules/runs/results/results.service.ts: findUnscoped',
  // Job handlers resolving their job's record.
  'src/modules/ops/custom-ops.service.ts: findCustomOpForUpdateUnscoped',
  'src/modules/online/alerts/alert-check.job.ts: findRuleUnscoped',
  'src/modules/online/online-backfill.job.ts: findBackfillUnscoped, findUnscoped',
  'src/modules/online/online-follow.job.ts: findUnscoped, lockUnscoped',
  'src/modules/review/judging/review-judge.job.ts: findRunUnscoped',
  'src/modules/runs/execution/run-executor.job.ts: findForUpdateUnscoped, findUnscoped',
  'src/modules/sdg/sdg-generator.job.ts: findRunUnscoped',
  'src/modules/traces/trace-enrichment.job.ts: findEnrichmentRunUnscoped',
  'src/modules/traces/trace-landing.job.ts: findRunUnscoped',
];

describe('repositories take the workspace (STYLE.md: find(workspaceId, id), never load-then-compare)', () => {
  it("no family compares a loaded record's workspace after the fact", () => {
    expect(workspaceComparedAfterLoad(files)).toEqual([]);
  });

  it('a finder by id alone is named …Unscoped, and only the listed callers use one', () => {
    expect(unnamedWorkspaceFreeFinders(files, ['users', 'workspaces'])).toEqual([]);
    expect(against(workspaceFreeCallers(files), WORKSPACE_FREE_CALLERS)).toEqual({ new: [], stale: [] });
  });

  it('the rules see a comparison after the load, an unnamed workspace-free finder and its caller', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/modules/runs/runs.service.ts',
        text: [
          'const run = await this.runs.find(id);',
          "if (!run || run.workspaceId !== access.workspaceId) throw new NotFoundError('run', id);",
          'return dataset && dataset.workspaceId === workspaceId ? dataset : null;',
          'if (access.workspaceId !== run?.snapshot.workspace_id) return;',
          // The caller's own standing against a value is no loaded record.
          'if (target === access.workspaceId) throw new Error();',
          'const again = await this.runs.findUnscoped(id);',
        ].join('\n'),
      },
      {
        path: 'src/modules/runs/runs.repository.ts',
        text: [
          '  find(id: string): Promise<RunEntity | null> {',
          '  async findForUpdate(id: string, lock = true) {',
          '  findUnscoped(id: string): Promise<RunEntity | null> {',
          '  find(workspaceId: string, id: string) {',
          '  findVersion(datasetId: string, id: string) {',
          // A repository compares nothing after the fact: its WHERE holds the workspace.
          '  const same = row.workspace_id === workspaceId;',
        ].join('\n'),
      },
      { path: 'src/modules/users/users.repository.ts', text: '  findById(id: string) {' },
      { path: 'libs/auth/access.guard.ts', text: 'if (key && key.workspaceId !== workspaceId) {' },
    ];
    expect(workspaceComparedAfterLoad(planted)).toEqual([
      "src/modules/runs/runs.service.ts:2: if (!run || run.workspaceId !== access.workspaceId) throw new NotFoundError('run', id);",
      'src/modules/runs/runs.service.ts:3: return dataset && dataset.workspaceId === workspaceId ? dataset : null;',
      'src/modules/runs/runs.service.ts:4: if (access.workspaceId !== run?.snapshot.workspace_id) return;',
    ]);
    expect(unnamedWorkspaceFreeFinders(planted, ['users'])).toEqual([
      'src/modules/runs/runs.repository.ts: find',
      'src/modules/runs/runs.repository.ts: findForUpdate',
    ]);
    expect(workspaceFreeCallers(planted)).toEqual(['src/modules/runs/runs.service.ts: findUnscoped']);
  });
});

/** Functions that build a DTO from no entity (so no mapper's work), each with its reason. */
const DTO_BUILDERS_ELSEWHERE = [
  // The built-in catalogue: recommendations made from the project templates, not from records.
  'src/modules/projects/builtin-recommendations.ts: builtinRecommendations',
  'src/modules/projects/builtin-recommendations.ts: fromTemplate',
  // Statistics: the trend's series pooled from run cells.
  'src/modules/runs/trends/trend.ts: buildSeries',
  // A request's auth as stored on a connection (secret id apart), not a response.
  'src/modules/suts/connections.service.ts: authShape',
];

describe('one mapper per family (STYLE.md: response DTOs are built by mappers from entities)', () => {
  it("a family's entity → response functions live in its <family>.mapper.ts", () => {
    expect(against(dtoBuildersOutsideMappers(files), DTO_BUILDERS_ELSEWHERE)).toEqual({ new: [], stale: [] });
  });

  it('the rule sees a DTO (response or request) built outside the mapper, and not in the mapper, a library or a function returning something else', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/modules/secrets/secrets.service.ts',
        text: [
          "import type {\n  CreateSecretRequest,\n  WorkspaceSecretResponse as Shown,\n} from './dto/secret.dto.js';",
          "import { type Page } from '#libs/common/pagination.js';",
          'function toResponse(\n  s: WorkspaceSecretEntity,\n  f: (x: number) => number,\n): Shown {\n  return { id: s.id };\n}',
          'export async function listed(rows: Row[]): Promise<Page<Shown>> {\n  return page(rows);\n}',
          'function aad(workspaceId: string): string {\n  return workspaceId;\n}',
          'function request(): CreateSecretRequest | null {\n  return null;\n}',
          'export class SecretsService {',
          '  private async toShown(s: WorkspaceSecretEntity): Promise<Shown> {\n    return { id: s.id };\n  }',
          '  toString(): string {\n    return "";\n  }',
          '}',
        ].join('\n'),
      },
      {
        path: 'src/modules/secrets/secrets.mapper.ts',
        text: "import type { WorkspaceSecretResponse } from './dto/secret.dto.js';\nexport function toSecretResponse(s: E): WorkspaceSecretResponse {\n  return {};\n}",
      },
      {
        path: 'libs/queue/dto/tracked-run.dto.ts',
        text: "import type { X } from './dto/x.js';\nexport function trackedRunFields(): X {\n  return {};\n}",
      },
    ];
    expect(dtoBuildersOutsideMappers(planted)).toEqual([
      'src/modules/secrets/secrets.service.ts: toResponse',
      'src/modules/secrets/secrets.service.ts: listed',
      'src/modules/secrets/secrets.service.ts: request',
      'src/modules/secrets/secrets.service.ts: toShown',
    ]);
  });
});

describe('packaging', () => {
  it('package-lock.json has every optional platform entry, so `npm ci` accepts it on a fresh machine', async () => {
    const { spawnSync } = await import('node:child_process');
    const check = spawnSync(process.execPath, [join(root, '.ci', 'complete-lockfile.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
