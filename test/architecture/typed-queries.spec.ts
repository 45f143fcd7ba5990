import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import type { SourceFile } from './import-graph.js';
import { productionFiles } from './source-files.js';
import { TABLE_LIBRARIES, untypedStatements } from './typed-queries.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const files = productionFiles(root);

/**
 * Repositories whose statements are still SQL text with hand-written row types (docs/architecture.md,
 * "Typed queries"): the work left. The list only shrinks; a repository not on it builds its
 * statements with db.typed against libs/database/schema.ts.
 */
// Empty: every family's repository is typed. The list only shrinks; nothing goes back on it.
const UNTYPED_REPOSITORIES: string[] = [];

/** Hand-written statements a typed repository keeps, with why. */
const HAND_WRITTEN_KEPT: Record<string, number> = {
  // The advisory lock (no table); credential and credentialWithAccess join user_identities() (the users
  // family's function) and the latter is prepared once per connection; touch runs on every keyed request.
  'src/modules/api-keys/api-keys.repository.ts': 4,
  // A batch of row properties unpacked from one jsonb parameter (jsonb_to_recordset).
  'src/modules/analysis/analysis.repository.ts': 1,
  // Spans into the inbox from two unnested arrays in their order, counting those new; an export's
  // note reading the queued flag as it was before its own update (a locked CTE); an ingest run's
  // counters summed key by key into its jsonb counts.
  'src/modules/traces/live.repository.ts': 3,
  // Log records into their inbox from three unnested arrays, counting those new; joined records
  // removed by (row id, key) pairs unnested; expired ones taken by a data-modifying CTE in age order.
  'src/modules/traces/logs/live-logs.repository.ts': 3,
  // Items copied from another run (an insert-select CTE counting what it wrote); a page of conversations
  // (CTEs and a UNION); scores and uploaded outputs unpacked from one jsonb parameter; ANALYZE run_items
  // before a large run's pages (no table statement).
  'src/modules/runs/runs.repository.ts': 5,
  // A project trend's runs (their documented state in a subquery) and its cells (reports: LATERAL jsonb_each).
  'src/modules/runs/trends/project-trends.repository.ts': 2,
  // findView: the statement of GET /datasets/{id}, prepared once per connection (bench/http-get.mjs).
  'src/modules/datasets/datasets.repository.ts': 1,
  // countedVersions, valueCounts and pairCounts share the COUNTED CTE (each dataset's current version, else its latest).
  'src/modules/datasets/dimensions/dimensions.repository.ts': 3,
  // gin_clean_pending_list and ANALYZE (no table statement); contentHash, versionStats (aggregates over
  // jsonb_each) and distinctCounts (over jsonb_object_keys, with the two SET LOCAL enable_sort around it);
  // stageMany (unnest of arrays).
  'src/modules/datasets/rows/rows.repository.ts': 8,
  // A reserved version's COPY staging (a temp table, and the insert from it: DISTINCT ON and a LATERAL
  // lookup per row); deleteAddedIn and deleteBefore (data-modifying CTEs, the latter aggregating the
  // versions' losses with json_agg); revise (data-modifying CTEs: a row changed in place or retired and
  // written again at its ordinal). appendFrom and the reads by key are typed.
  'src/modules/datasets/bulk-rows.repository.ts': 5,
  // beginAttempt: one INSERT … ON CONFLICT DO UPDATE whose CASE arms are the login throttle's rule.
  'src/modules/auth/auth.repository.ts': 1,
  // evalConfigsPinning: the pins read out of eval_configs.metrics with jsonb_array_elements() in FROM.
  'src/modules/catalogues/metrics/metric-configs.repository.ts': 1,
};

/**
 * The libraries' SQL text (libs/auth, libs/queue, libs/audit), held to the same rule: files still
 * on hand-written row types (the list only shrinks), and what a typed one keeps, with why.
 */
const UNTYPED_LIBS: string[] = [];

const LIBS_HAND_WRITTEN_KEPT: Record<string, number> = {
  // findActiveSession and findSessionWithAccess: the guard's statements, prepared once per connection (every request).
  'libs/auth/access.repository.ts': 2,
};

describe('typed queries (docs/architecture.md, "Typed queries")', () => {
  it('repositories off the untyped list write no SQL text beyond what they keep', () => {
    expect(untypedStatements(files, UNTYPED_REPOSITORIES, HAND_WRITTEN_KEPT)).toEqual([]);
  });

  it('the libraries off their untyped list write no SQL text beyond what they keep', () => {
    expect(untypedStatements(files, UNTYPED_LIBS, LIBS_HAND_WRITTEN_KEPT, TABLE_LIBRARIES)).toEqual([]);
  });

  it('the rule sees a new hand-written statement in a typed repository (sql.raw too), a stale count and a stale untyped entry', () => {
    const planted: SourceFile[] = [
      {
        path: 'src/modules/secrets/secrets.repository.ts',
        text: "const rows: Array<{ id: string }> = await this.db.query('SELECT id FROM workspace_secrets');",
      },
      { path: 'src/modules/api-keys/api-keys.repository.ts', text: "await this.db.prepared<Row>('a', sql, []);" },
      { path: 'src/modules/runs/runs.repository.ts', text: 'await this.db.typed((q) => q.selectFrom("runs"));' },
      { path: 'src/modules/traces/traces.repository.ts', text: 'await this.db.query<Row[]>(sql);' },
      { path: 'src/modules/secrets/secrets.service.ts', text: 'await this.db.query(sql);' },
      {
        path: 'src/modules/projects/projects.repository.ts',
        text: "await this.db.typed((q) => q.selectFrom('projects').selectAll().where(sql.raw(`name = '${name}'`)));",
      },
      { path: 'src/modules/sdg/sdg.repository.ts', text: "sql.raw('ANALYZE'); await this.db.query('ANALYZE');" },
      {
        path: 'src/modules/suts/suts.repository.ts',
        text: "return this.repo.createQueryBuilder('s').where('s.workspace_id = :id', { id }).getMany();",
      },
      {
        path: 'src/modules/reports/reports.repository.ts',
        text: [
          "return this.reports.find({ where: { workspaceId }, order: { name: 'ASC' } });",
          'const [rows, total] = await this.reports.findAndCount({ where: { workspaceId }, ...window });',
          'return this.users.count();',
          // A record by its key, and an array's find, are not lists.
          'return this.reports.findOne({ where: { id, workspaceId } });',
          'const hit = counts.find((c) => c.op === op);',
        ].join('\n'),
      },
    ];
    const untyped = ['src/modules/runs/runs.repository.ts', 'src/modules/traces/traces.repository.ts'];
    const kept = { 'src/modules/api-keys/api-keys.repository.ts': 2, 'src/modules/sdg/sdg.repository.ts': 1 };
    expect(untypedStatements(planted, untyped, kept)).toEqual([
      'src/modules/api-keys/api-keys.repository.ts has 1 hand-written statements: lower its count to 1',
      'src/modules/projects/projects.repository.ts has 1 hand-written statements, 0 kept: use db.typed',
      'src/modules/reports/reports.repository.ts has 3 hand-written statements, 0 kept: use db.typed',
      'src/modules/runs/runs.repository.ts has no hand-written statement left: take it off the untyped list',
      'src/modules/sdg/sdg.repository.ts has 2 hand-written statements, 1 kept: use db.typed',
      'src/modules/secrets/secrets.repository.ts has 1 hand-written statements, 0 kept: use db.typed',
      'src/modules/suts/suts.repository.ts has 1 hand-written statements, 0 kept: use db.typed',
    ]);
    const libs: SourceFile[] = [
      { path: 'libs/auth/session.repository.ts', text: "await this.db.query('DELETE FROM auth_tokens');" },
      { path: 'libs/auth/session.repository.spec.ts', text: "await this.db.query('SELECT 1');" },
      { path: 'libs/queue/job.repository.ts', text: 'await this.db.typed((q) => q.selectFrom("jobs"));' },
      { path: 'libs/database/record-queries.ts', text: 'await db.query(sql);' },
      { path: 'src/modules/runs/runs.repository.ts', text: 'await this.db.query(sql);' },
    ];
    expect(untypedStatements(libs, ['libs/queue/job.repository.ts'], {}, TABLE_LIBRARIES)).toEqual([
      'libs/auth/session.repository.ts has 1 hand-written statements, 0 kept: use db.typed',
      'libs/queue/job.repository.ts has no hand-written statement left: take it off the untyped list',
    ]);
  });
});
