/**
 * The journey every generated client drives, in the same words: sign in, create a workspace,
 * create and list a secret under /workspaces/{workspace_id}/, upload a CSV dataset (multipart),
 * find it in the workspace's datasets. Each generator's main.ts says how its client makes each
 * call; this file sends the same data, checks every answer and prints one JSON line with what
 * it found. A failed check throws, and node exits non-zero with the message.
 *
 * Not part of the service's build: test/e2e/clients/generators.e2e-spec.ts copies it beside the
 * generated client, compiles both with tsc --strict (NodeNext) and runs the result.
 *   EWS_URL=http://127.0.0.1:3000 EWS_EMAIL=… EWS_PASSWORD=… node dist/main.js
 */

/** The fields of the answers the journey reads; each generated type must be assignable to them. */
export interface Token {
  token_type: 'bearer';
  access_token: string;
}
export interface Named {
  id: string;
  name: string;
}
export interface Page<T> {
  items: T[];
  total: number;
}
export interface Dataset extends Named {
  workspace_id: string;
  tags: string[];
  latest_version: { row_count: number; columns: string[] } | null;
}

/** What the journey sends with the file part of the upload. */
export interface UploadFields {
  name: string;
  tags: string[];
}

/** One generated client, each call made the way its library documents. */
export interface JourneyClient {
  /** POST /auth/token; the client sends the token on every later call. */
  signIn(email: string, password: string): Promise<Token>;
  createWorkspace(name: string): Promise<Named>;
  createSecret(workspaceId: string, name: string, value: string): Promise<Named>;
  listSecrets(workspaceId: string): Promise<Page<Named>>;
  uploadDataset(workspaceId: string, file: File, fields: UploadFields): Promise<Dataset>;
  listDatasets(workspaceId: string): Promise<Page<Dataset>>;
}

export const CSV = 'question,answer\nWhat is 2 + 2?,4\nCapital of France?,Paris\nColour of a clear sky?,blue\n';
const COLUMNS = ['question', 'answer'];
const ROWS = 3;
const TAGS = ['generated', 'smoke'];

/** A failed call, with what the service answered (the problem+json body when there is one). */
export function failed(call: string, status: number, body: unknown): Error {
  return new Error(`${call} answered ${status}: ${JSON.stringify(body)}`);
}

/**
 * The body of a successful answer from a client that answers `{ data, error, response }`
 * (openapi-fetch, @hey-api/openapi-ts); else the failure. (@hey-api's newer releases leave
 * `response` out when the request never got one.)
 */
export function dataOf<T>(call: string, result: { data?: T; error?: unknown; response?: Response }): T {
  if (result.data === undefined) throw failed(call, result.response?.status ?? 0, result.error);
  return result.data;
}

function check(condition: boolean, what: string, seen: unknown): asserts condition {
  if (!condition) throw new Error(`${what}; got ${JSON.stringify(seen)}`);
}

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The service's base URL, from EWS_URL. */
export const baseUrl = setting('EWS_URL');

export async function journey(generator: string, client: JourneyClient): Promise<void> {
  const token = await client.signIn(setting('EWS_EMAIL'), setting('EWS_PASSWORD'));
  check(
    token.token_type === 'bearer' && token.access_token.length > 20,
    'sign-in gives a bearer token',
    token.token_type,
  );

  const workspaceName = `Journey by ${generator}`;
  const workspace = await client.createWorkspace(workspaceName);
  check(
    workspace.name === workspaceName && /^[0-9a-f-]{36}$/.test(workspace.id),
    'the workspace has its name and an id',
    workspace,
  );

  const secret = await client.createSecret(workspace.id, 'JUDGE_API_KEY', 'sk-generated-client');
  check(secret.name === 'JUDGE_API_KEY', 'the secret has its name', secret);
  const secrets = await client.listSecrets(workspace.id);
  check(
    secrets.total === 1 && secrets.items.length === 1 && secrets.items[0].id === secret.id,
    'the workspace lists its one secret',
    secrets,
  );
  check(!JSON.stringify(secrets).includes('sk-generated-client'), 'the list never carries the secret value', secrets);

  const file = new File([CSV], 'capitals.csv', { type: 'text/csv' });
  const uploaded = await client.uploadDataset(workspace.id, file, { name: 'capitals', tags: TAGS });
  check(
    uploaded.name === 'capitals' && uploaded.workspace_id === workspace.id,
    'the dataset is named and in the workspace',
    uploaded,
  );
  check(
    JSON.stringify(uploaded.tags) === JSON.stringify(TAGS),
    'the dataset carries both tags of the multipart form',
    uploaded.tags,
  );
  check(
    uploaded.latest_version?.row_count === ROWS &&
      JSON.stringify(uploaded.latest_version.columns) === JSON.stringify(COLUMNS),
    'the first version has the CSV rows and columns',
    uploaded.latest_version,
  );

  const datasets = await client.listDatasets(workspace.id);
  check(
    datasets.total === 1 && datasets.items.length === 1 && datasets.items[0].id === uploaded.id,
    'the workspace lists the uploaded dataset',
    datasets,
  );

  console.log(
    JSON.stringify({
      generator,
      workspace_id: workspace.id,
      secret_id: secret.id,
      secrets: secrets.total,
      dataset_id: uploaded.id,
      rows: uploaded.latest_version.row_count,
      tags: uploaded.tags,
      datasets: datasets.total,
    }),
  );
}
