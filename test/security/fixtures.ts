/**
 * FIXTURE REGISTRY — one entry per path-parameter name.
 *
 * The security suites (isolation, role matrix, mass assignment, fuzz) call every operation of
 * the served OpenAPI document with real ids. Each `{param}` in a path is filled from
 * `FIXTURES[param]`, created through the HTTP API in a fresh workspace. An operation whose
 * path parameter has no entry FAILS test/security/isolation, naming the parameter.
 *
 * Adding a family with a new path parameter (e.g. `{experiment_id}`):
 *   1. Add one entry to FIXTURES (or to the family's file under test/security/fixtures/, spread into FIXTURES), keyed by the parameter name exactly as the OpenAPI path spells it:
 *        experiment_id: {
 *          needs: ['dataset_id'],                       // entries whose ids `create` uses
 *          create: async ({ t, owner, workspaceId, ids }) =>
 *            (await created(t.http.post('/experiments').set(owner.auth)
 *              .send({ workspace_id: workspaceId, dataset_id: ids.dataset_id }), 201, 'experiment_id')).id as string,
 *        },
 *   2. `create` makes the record in the given workspace as its owner and returns its id. Entries
 *      are created in dependency order (`needs`), so use `ids.<param>` for the parent records.
 *   3. If the parameter names no record (a catalogue name, a file name), do not add a fixture:
 *      add it, with the reason, to NOT_RECORDS in isolation.e2e-spec.ts instead.
 *   4. If the new table holds tenant rows without a `workspace_id` column, make sure
 *      `snapshot()` below still reaches them (it follows `dataset_id` today).
 *   5. If the operations' minimal generated bodies are refused for a rule between members,
 *      add a BODY_HINTS entry in openapi-walk.ts.
 */
import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { Actor } from '../factories/factory.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { created, offlineRun, settled, type Fixture } from './fixture-kit.js';
import { JUDGE_VALIDATION_FIXTURES } from './fixtures/judge-validations.js';
import { ONLINE_ALERT_FIXTURES } from './fixtures/online-alerts.js';
import { PROJECT_FIXTURES } from './fixtures/projects.js';
import { REPORT_FIXTURES } from './fixtures/reports.js';
import { REVIEW_FIXTURES } from './fixtures/review.js';
import { REVIEW_JUDGING_FIXTURES } from './fixtures/review-judging.js';
import { TRACE_FIXTURES } from './fixtures/traces.js';

export { created, NAMED_BY_TEXT, type Fixture, type FixtureContext } from './fixture-kit.js';

export const FIXTURES: Record<string, Fixture> = {
  workspace_id: { create: async ({ workspaceId }) => workspaceId },
  /** Another user of the workspace (not the caller): "system admin or self" operations must refuse a stranger. */
  user_id: { create: async ({ member }) => member.id },
  secret_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post(`/workspaces/${workspaceId}/secrets`)
            .set(owner.auth)
            .send({ name: `KEY_${label}`, value: `secret-${label}-value` }),
          201,
          'secret_id',
        )
      ).id as string,
  },
  api_key_id: {
    create: async ({ t, member, workspaceId, label }) =>
      (
        await created(
          t.http
            .post(`/workspaces/${workspaceId}/api-keys`)
            .set(member.auth)
            .send({ name: `ci-${label}`, role: 'member' }),
          201,
          'api_key_id',
        )
      ).id as string,
  },
  invitation_id: {
    create: async ({ t, owner, workspaceId, label }) => {
      const b = await created(
        t.http
          .post(`/workspaces/${workspaceId}/invitations`)
          .set(owner.auth)
          .send({ email: `invitee-${label}@example.com`, role: 'member' }),
        201,
        'invitation_id',
      );
      return (b.id ?? (b.invitation as { id: string }).id) as string;
    },
  },
  dataset_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/datasets/upload')
            .query({ workspace_id: workspaceId })
            .set(owner.auth)
            .attach(
              'file',
              Buffer.from('question,answer,conv\nWhat is 2+2?,4,c1\nCapital of France?,Paris,c2\n'),
              `data-${label}.csv`,
            ),
          201,
          'dataset_id',
        )
      ).id as string,
  },
  /** DatasetResponse: `current_version_id` is the promoted version (null until one is), `latest_version` the newest. */
  version_id: {
    needs: ['dataset_id'],
    create: async ({ t, owner, ids }) => {
      const ds = await created(t.http.get(`/datasets/${ids.dataset_id}`).set(owner.auth), 200, 'version_id');
      return (ds.current_version_id ?? (ds.latest_version as { id: string }).id) as string;
    },
  },
  partition_id: {
    needs: ['dataset_id', 'version_id'],
    create: async ({ t, owner, ids }) => {
      await created(
        t.http
          .post(`/datasets/${ids.dataset_id}/dimensions:assign`)
          .set(owner.auth)
          .send({ dimension: 'topic', value: 'math', rule: { field: 'answer', op: 'eq', value: 4 } }),
        201,
        'partition_id (dimension)',
      );
      return (
        await created(
          t.http
            .post(`/datasets/${ids.dataset_id}/versions/${ids.version_id}/partitions`)
            .set(owner.auth)
            .send({ name: 'math', dimension_values: { topic: ['math'] } }),
          201,
          'partition_id',
        )
      ).id as string;
    },
  },
  /** A quality-check run (GET …/quality-checks/runs/{run_id}: openapi-walk.ts PATH_FIXTURES sends this there). */
  quality_run_id: {
    needs: ['dataset_id', 'version_id'],
    create: async ({ t, owner, ids }) =>
      (
        await created(
          t.http
            .post(`/datasets/${ids.dataset_id}/versions/${ids.version_id}/quality-checks:run`)
            .set(owner.auth)
            .send({}),
          200,
          'quality_run_id',
        )
      ).run_id as string,
  },
  /** The text, annotation and visual analyses of the version (GET …/analysis-runs/{run_id}). */
  analysis_run_id: {
    needs: ['dataset_id', 'version_id'],
    create: async ({ t, owner, ids }) => {
      const base = `/datasets/${ids.dataset_id}/versions/${ids.version_id}`;
      const id = (await created(t.http.post(`${base}/analysis-runs`).set(owner.auth).send({}), 201, 'analysis_run_id'))
        .id as string;
      await settled(t, owner, `${base}/analysis-runs/${id}`, 'analysis_run_id');
      return id;
    },
  },
  /** A clustering of the version's questions (GET …/cluster-runs/{run_id}). */
  cluster_run_id: {
    needs: ['dataset_id', 'version_id'],
    create: async ({ t, owner, ids }) => {
      const base = `/datasets/${ids.dataset_id}/versions/${ids.version_id}`;
      const id = (
        await created(
          t.http.post(`${base}/cluster-runs`).set(owner.auth).send({ column: 'question' }),
          202,
          'cluster_run_id',
        )
      ).id as string;
      await settled(t, owner, `${base}/cluster-runs/${id}`, 'cluster_run_id');
      return id;
    },
  },
  /** An embedding configuration, by id (`config_ref` also takes a name). */
  config_ref: {
    needs: ['secret_id'],
    create: async ({ t, owner, workspaceId, label, ids }) =>
      (
        await created(
          t.http
            .post('/embedding-configs')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `embed-${label}`,
              provider: 'openai_compatible',
              base_url: 'https://embeddings.example.com/v1',
              model: 'm',
              secret_id: ids.secret_id,
            }),
          201,
          'config_ref',
        )
      ).id as string,
  },
  /** A webhook (DELETE /notifications/config/{notification_config_id}). */
  notification_config_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/notifications/config')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `hook-${label}`,
              url: 'https://hooks.example.com/ews',
              events: ['run.failed'],
            }),
          201,
          'notification_config_id',
        )
      ).id as string,
  },
  sut_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/suts')
            .set(owner.auth)
            .send({ workspace_id: workspaceId, name: `sut-${label}` }),
          201,
          'sut_id',
        )
      ).id as string,
  },
  connection_id: {
    needs: ['sut_id'],
    create: async ({ t, owner, ids }) =>
      (
        await created(
          t.http
            .post(`/suts/${ids.sut_id}/connections`)
            .set(owner.auth)
            .send({
              name: 'rest',
              kind: 'http',
              http: { url: 'http://127.0.0.1:9/answer' },
              timeout_ms: 200,
              retry: { max_attempts: 1 },
            }),
          201,
          'connection_id',
        )
      ).id as string,
  },
  judge_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/judges')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `judge-${label}`,
              provider: 'openai_compatible',
              base_url: 'http://127.0.0.1:9/v1',
              model: 'grader',
              timeout_ms: 1000,
              max_attempts: 1,
            }),
          201,
          'judge_id',
        )
      ).id as string,
  },
  /** A metric config, by name; its version 1 is {config_version}. */
  config_name: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/metric-configs')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `mc-${label}`,
              kind: 'deterministic',
              metric: 'token_f1',
              threshold: 0.5,
            }),
          201,
          'config_name',
        )
      ).name as string,
  },
  config_version: { needs: ['config_name'], create: async () => '1' },
  /** A metric the workspace pinned a default for (its own metric config's name). */
  metric_name: {
    needs: ['config_name'],
    create: async ({ t, owner, workspaceId, ids }) => {
      await created(
        t.http
          .post(`/workspaces/${workspaceId}/metric-config-defaults`)
          .set(owner.auth)
          .send({ defaults: [{ metric_name: ids.config_name, config_name: ids.config_name, config_version: 1 }] }),
        201,
        'metric_name',
      );
      return ids.config_name;
    },
  },
  eval_config_id: {
    needs: ['config_name', 'judge_id'],
    create: async ({ t, owner, workspaceId, label, ids }) =>
      (
        await created(
          t.http
            .post('/eval-configs')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `eval-${label}`,
              metrics: [{ config_name: ids.config_name }, { config_name: 'correctness' }],
              default_judge_id: ids.judge_id,
            }),
          201,
          'eval_config_id',
        )
      ).id as string,
  },
  /** An evaluation run through an offline connection: it waits for an upload, so it calls nothing. */
  run_id: {
    needs: ['dataset_id', 'version_id', 'sut_id'],
    create: async ({ t, owner, workspaceId, ids }) => {
      await created(
        t.http
          .post(`/datasets/${ids.dataset_id}/versions/${ids.version_id}/map`)
          .set(owner.auth)
          .send({ input: 'question', expected_output: 'answer', session_id: 'conv' }),
        200,
        'run_id (mapping)',
      );
      // Outputs for every row, the run kept awaiting more: results, sessions and diffs have rows, and nothing is queued.
      const { run } = await offlineRun(
        { t, owner, workspaceId },
        { dataset_id: ids.dataset_id, version_id: ids.version_id, sut_id: ids.sut_id, metrics: ['exact_match'] },
        { output: '4', complete: false },
        'run_id',
      );
      return run;
    },
  },
  /** An ended run (an offline run cancelled before any upload): its live event stream ends after the backlog (openapi-walk.ts PATH_FIXTURES sends it to GET /runs/{run_id}/events/stream). */
  ended_run_id: {
    needs: ['run_id', 'dataset_id', 'version_id', 'sut_id'],
    create: async ({ t, owner, workspaceId, ids }) => {
      const connection = (
        await created(
          t.http
            .post(`/suts/${ids.sut_id}/connections`)
            .set(owner.auth)
            .send({ name: 'uploads-ended', kind: 'offline' }),
          201,
          'ended_run_id (connection)',
        )
      ).id as string;
      const run = (
        await created(
          t.http
            .post('/runs')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              dataset_id: ids.dataset_id,
              version_id: ids.version_id,
              sut_id: ids.sut_id,
              connection_id: connection,
              metrics: ['exact_match'],
            }),
          202,
          'ended_run_id',
        )
      ).id as string;
      await created(t.http.post(`/runs/${run}/cancel`).set(owner.auth), 200, 'ended_run_id (cancel)');
      return run;
    },
  },
  /** A dataset row (GET /runs/diff/row?row_id=). */
  row_id: {
    needs: ['dataset_id'],
    create: async ({ t, owner, ids }) =>
      (
        (
          await created(
            t.http.post(`/datasets/${ids.dataset_id}/query`).set(owner.auth).send({ limit: 1 }),
            200,
            'row_id',
          )
        ).items as Array<{ _row_id: string }>
      )[0]._row_id,
  },
  /** The runs GET /runs/diff compares (query parameters `base` and `candidate`). */
  base: { needs: ['run_id'], create: async ({ ids }) => ids.run_id },
  candidate: { needs: ['run_id'], create: async ({ ids }) => ids.run_id },
  /** A conversation of the run (its sessions are the dataset's `conv` column). */
  parent_id: { create: async () => 'c1' },
  /** A template SDG adapter (its runs add a candidate version to a dataset). */
  adapter_id: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        await created(
          t.http
            .post('/sdg/adapters')
            .set(owner.auth)
            .send({
              workspace_id: workspaceId,
              name: `sdg-${label}`,
              kind: 'template',
              columns: { question: 'What is {{index}} + {{index}}?' },
            }),
          201,
          'adapter_id',
        )
      ).id as string,
  },
  /** A finished run of that adapter (GET /sdg/adapters/{adapter_id}/runs/{run_id}: openapi-walk.ts PATH_FIXTURES sends this there). */
  sdg_run_id: {
    needs: ['adapter_id', 'dataset_id'],
    create: async ({ t, owner, ids }) => {
      const run = await created(
        t.http
          .post(`/sdg/adapters/${ids.adapter_id}/runs`)
          .set(owner.auth)
          .send({ target_dataset_id: ids.dataset_id, max_rows: 2 }),
        202,
        'sdg_run_id',
      );
      await settled(t, owner, `/sdg/adapters/${ids.adapter_id}/runs/${run.id as string}`, 'sdg_run_id');
      return run.id as string;
    },
  },
  /** A custom op (and the registry op of the same name); its health check fails fast against a closed port. */
  name: {
    create: async ({ t, owner, workspaceId, label }) =>
      (
        (
          await created(
            t.http
              .post(`/workspaces/${workspaceId}/custom_ops`)
              .set(owner.auth)
              .send({ name: `op-${label}`, kind: 'metric', endpoint_url: 'http://127.0.0.1:9/score', timeout_ms: 200 }),
            201,
            'name',
          )
        ).custom_op as { name: string }
      ).name,
  },
  ...PROJECT_FIXTURES,
  ...REVIEW_FIXTURES,
  ...REVIEW_JUDGING_FIXTURES,
  ...REPORT_FIXTURES,
  ...JUDGE_VALIDATION_FIXTURES,
  ...TRACE_FIXTURES,
  ...ONLINE_ALERT_FIXTURES,
};

/**
 * A workspace holding one record of every kind in FIXTURES, made through the API, and the
 * value of every path parameter that names one of them.
 */
export interface Tenant {
  workspaceId: string;
  owner: Actor;
  /** Another member (for {user_id}). */
  member: Actor;
  viewer: Actor;
  params: Record<string, string>;
}

export async function tenant(t: TestApp, label: string): Promise<Tenant> {
  const owner = await t.factory.actor();
  const member = await t.factory.actor();
  const viewer = await t.factory.actor();
  const ws = (
    await created(
      t.http
        .post('/workspaces')
        .set(owner.auth)
        .send({ name: `tenant ${label}` }),
      201,
      'workspace',
    )
  ).id as string;
  await t.factory.addMember(ws, member.id, 'member');
  await t.factory.addMember(ws, viewer.id, 'viewer');
  const ids: Record<string, string> = {};
  const pending = new Set(Object.keys(FIXTURES));
  while (pending.size) {
    const ready = [...pending].filter((p) => (FIXTURES[p].needs ?? []).every((n) => n in ids));
    if (!ready.length) throw new Error(`fixtures with unmet or circular needs: ${[...pending].join(', ')}`);
    for (const param of ready) {
      ids[param] = await FIXTURES[param].create({ t, label, workspaceId: ws, owner, member, viewer, ids });
      pending.delete(param);
    }
  }
  return { workspaceId: ws, owner, member, viewer, params: ids };
}

/**
 * Every row that belongs to the workspace, as JSON in a fixed order: the workspace row, the
 * users who are its members, the rows of every table with a workspace_id column, and of tables
 * with only a dataset_id, by the workspace's datasets.
 */
/** Review and online evaluation tables without a workspace, and how their rows reach one. */
const REVIEW_CHILDREN: Record<string, string> = {
  online_evaluator_versions: 'evaluator_id IN (SELECT id FROM online_evaluators WHERE workspace_id = $1)',
  online_targets: 'evaluator_id IN (SELECT id FROM online_evaluators WHERE workspace_id = $1)',
  review_rubric_versions: 'queue_id IN (SELECT id FROM review_queues WHERE workspace_id = $1)',
  review_labels: 'queue_id IN (SELECT id FROM review_queues WHERE workspace_id = $1)',
  review_slots: 'item_id IN (SELECT id FROM review_items WHERE workspace_id = $1)',
};

export async function snapshot(t: TestApp, workspaceId: string): Promise<string> {
  const tables: Array<{ table_name: string; has_ws: boolean; has_ds: boolean }> = await t.dataSource.query(
    `SELECT c.table_name,
            bool_or(c.column_name = 'workspace_id') AS has_ws,
            bool_or(c.column_name = 'dataset_id') AS has_ds
       FROM information_schema.columns c JOIN information_schema.tables tb ON tb.table_name = c.table_name AND tb.table_schema = c.table_schema
      WHERE c.table_schema = 'public' AND tb.table_type = 'BASE TABLE'
      GROUP BY c.table_name ORDER BY c.table_name`,
  );
  const out: Record<string, unknown> = {};
  out.workspaces = await t.dataSource.query('SELECT * FROM workspaces WHERE id = $1', [workspaceId]);
  out['users (members)'] = await t.dataSource.query(
    'SELECT u.* FROM users u WHERE u.id IN (SELECT user_id FROM workspace_members WHERE workspace_id = $1) ORDER BY u.id',
    [workspaceId],
  );
  for (const { table_name, has_ws, has_ds } of tables) {
    // The review and online families' tables without a workspace hang off their queues (or items) and evaluators.
    const review = !has_ws && REVIEW_CHILDREN[table_name];
    if (!has_ws && !has_ds && !review) continue;
    const where = has_ws
      ? 'workspace_id = $1'
      : review || 'dataset_id IN (SELECT id FROM datasets WHERE workspace_id = $1)';
    out[table_name] = await t.dataSource.query(`SELECT * FROM "${table_name}" t WHERE ${where} ORDER BY t::text`, [
      workspaceId,
    ]);
  }
  return JSON.stringify(out);
}

/** What every OpenAPI-walking suite starts from: the app, its served document, and tenant A. */
export interface Sweep {
  t: TestApp;
  document: OpenApiDocument;
  a: Tenant;
}

export async function startSweep(label: string): Promise<Sweep> {
  const t = await startTestApp();
  const document = (await t.http.get('/openapi.json').expect(200)).body as OpenApiDocument;
  return { t, document, a: await tenant(t, label) };
}
