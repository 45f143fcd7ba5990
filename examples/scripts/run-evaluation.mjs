#!/usr/bin/env node
/**
 * Runs a whole evaluation against the Evaluation Workspace Service, end to end:
 * sign in, (create a workspace), upload a dataset, map its columns, create an eval config,
 * a SUT with an offline connection, start a run, answer every row with a tiny "system"
 * (here: a lookup with one deliberate mistake), upload the outputs, wait, and print the results.
 *
 *   EWS_URL=http://localhost:3000 EWS_EMAIL=admin@example.com EWS_PASSWORD=… node scripts/run-evaluation.mjs
 *
 * Optional: EWS_WORKSPACE_ID (else a new workspace is created), EWS_DATASET (default datasets/support-questions.csv).
 * Needs Node 20+ (global fetch, FormData, Blob). Prints one JSON line with the outcome last.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const base = (process.env.EWS_URL ?? 'http://localhost:3000').replace(/\/$/, '');
const datasetPath = process.env.EWS_DATASET ?? join(here, '..', 'datasets', 'support-questions.csv');
const evalConfig = JSON.parse(readFileSync(join(here, '..', 'eval-configs', 'support-quick.json'), 'utf8'));
let token = '';

async function call(method, path, body, { form } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${json?.error_code ?? ''}: ${json?.detail ?? text}`);
  return json;
}

const suffix = Date.now().toString(36);
const log = (...args) => console.error('•', ...args);

token = (await call('POST', '/auth/token', { email: process.env.EWS_EMAIL, password: process.env.EWS_PASSWORD }))
  .access_token;
const workspaceId =
  process.env.EWS_WORKSPACE_ID ?? (await call('POST', '/workspaces', { name: `examples ${suffix}` })).id;
log('workspace', workspaceId);

const form = new FormData();
form.append('file', new Blob([readFileSync(datasetPath)]), basename(datasetPath));
const dataset = await call('POST', `/datasets/upload?workspace_id=${workspaceId}`, undefined, { form });
const versionId = dataset.latest_version.id;
log('dataset', dataset.id, 'version', versionId);
await call('POST', `/datasets/${dataset.id}/versions/${versionId}/map`, {
  input: 'question',
  expected_output: 'answer',
});

const config = await call('POST', '/eval-configs', {
  ...evalConfig,
  name: `${evalConfig.name}-${suffix}`,
  workspace_id: workspaceId,
});
const sut = await call('POST', '/suts', { workspace_id: workspaceId, name: `support-bot-${suffix}` });
const connection = await call('POST', `/suts/${sut.id}/connections`, { name: 'offline', kind: 'offline' });
const run = await call('POST', '/runs', {
  workspace_id: workspaceId,
  dataset_id: dataset.id,
  version_id: versionId,
  sut_id: sut.id,
  connection_id: connection.id,
  eval_config_id: config.id,
});
log('run', run.id, run.state);

// The "system under test": answers from a lookup table, getting the last question wrong on purpose.
const items = (await call('POST', `/runs/${run.id}/results/query`, { limit: 1000 })).items;
const results = items.map((item, i) => ({
  row_id: item.row_id,
  output: i === items.length - 1 ? 'I do not know' : String(item.row?.answer ?? ''),
}));
await call('PUT', `/runs/${run.id}/upload`, { results, complete: true });

let finished = run;
for (let i = 0; i < 600 && !['succeeded', 'failed', 'cancelled'].includes(finished.state); i++) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  finished = await call('GET', `/runs/${run.id}`);
}
const summary = await call('GET', `/runs/${run.id}/results`);
const metrics = Object.fromEntries((summary.summary?.metrics ?? []).map((m) => [m.name, m.mean]));
console.log(
  JSON.stringify({
    run_id: run.id,
    state: finished.state,
    passed: finished.passed,
    rows: items.length,
    pass_rate: summary.summary?.pass_rate ?? null,
    metrics,
  }),
);
