import type { OpenApiDocument } from '../contract/support/spec-operations.js';
import type { Actor } from '../factories/factory.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/**
 * A workspace holding one record of every kind the API serves, made through the API, and the
 * value of every path parameter that names one of them. The isolation sweep and the fuzz suite
 * call every operation with these.
 *
 * A family that adds a path parameter adds its record here: create it in `tenant()` and return
 * its id under the parameter's name. An operation whose parameter has no value here fails the
 * sweep, naming the parameter.
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
  const ws = (await t.http.post('/workspaces').set(owner.auth).send({ name: `tenant ${label}` }).expect(201)).body.id as string;
  await t.factory.addMember(ws, member.id, 'member');
  await t.factory.addMember(ws, viewer.id, 'viewer');
  const secret = (await t.http.post(`/workspaces/${ws}/secrets`).set(owner.auth).send({ name: `KEY_${label}`, value: `secret-${label}-value` }).expect(201)).body.id as string;
  const invitation = (await t.http.post(`/workspaces/${ws}/invitations`).set(owner.auth).send({ email: `invitee-${label}-${Date.now()}@example.com`, role: 'member' }).expect(201)).body;
  const upload = await t.http
    .post('/datasets/upload')
    .query({ workspace_id: ws })
    .set(owner.auth)
    .attach('file', Buffer.from('question,answer,conv\nWhat is 2+2?,4,c1\nCapital of France?,Paris,c2\n'), `data-${label}.csv`)
    .expect(201);
  const datasetId = upload.body.id as string;
  const versionId = upload.body.latest_version.id as string;
  await t.http.post(`/datasets/${datasetId}/dimensions:assign`).set(owner.auth).send({ dimension: 'topic', value: 'math', rule: { field: 'answer', op: 'eq', value: 4 } }).expect(201);
  const partition = (await t.http.post(`/datasets/${datasetId}/versions/${versionId}/partitions`).set(owner.auth).send({ name: 'math', dimension_values: { topic: ['math'] } }).expect(201)).body.id as string;
  const embeddingConfig = (await t.http.post('/embedding-configs').set(owner.auth).send({ workspace_id: ws, name: `embed-${label}`, provider: 'openai_compatible', base_url: 'https://embeddings.example.com/v1', model: 'm', secret_id: secret }).expect(201)).body.id as string;
  const webhook = (await t.http.post('/notifications/config').set(owner.auth).send({ workspace_id: ws, name: `hook-${label}`, url: 'https://hooks.example.com/ews', events: ['run.failed'] }).expect(201)).body.id as string;
  const run = (await t.http.post(`/datasets/${datasetId}/versions/${versionId}/quality-checks:run`).set(owner.auth).send({}).expect(200)).body.run_id as string;
  return {
    workspaceId: ws,
    owner,
    member,
    viewer,
    params: {
      workspace_id: ws,
      user_id: member.id,
      secret_id: secret,
      invitation_id: invitation.id ?? invitation.invitation?.id,
      dataset_id: datasetId,
      version_id: versionId,
      partition_id: partition,
      run_id: run,
      config_ref: embeddingConfig,
      notification_config_id: webhook,
    },
  };
}

/**
 * Every row that belongs to the workspace, as JSON in a fixed order: tables with a workspace_id
 * column by it, tables with only a dataset_id by the workspace's datasets, plus the workspace row.
 */
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
  for (const { table_name, has_ws, has_ds } of tables) {
    if (!has_ws && !has_ds) continue;
    const where = has_ws ? 'workspace_id = $1' : 'dataset_id IN (SELECT id FROM datasets WHERE workspace_id = $1)';
    out[table_name] = await t.dataSource.query(`SELECT * FROM ${table_name} t WHERE ${where} ORDER BY t::text`, [workspaceId]);
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
