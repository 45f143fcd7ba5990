/**
 * The functions orval generated (generated/api.ts), each answering `{ data, status, headers }`
 * with `data` typed by `status`; fetcher.ts supplies the base URL and the token.
 */
import { baseUrl, failed, journey } from '../journey.js';
import { connection } from './fetcher.js';
// The generated functions this journey calls, named after the document's operationIds: a renamed
// operationId changes this import only.
import {
  createSecret,
  createWorkspace,
  issueToken as signIn,
  listDatasets,
  listSecrets,
  uploadDataset,
} from './generated/api.js';

connection.baseUrl = baseUrl;

/** The body of the expected answer (its type narrowed by the status), or the failure. */
function ok<R extends { status: number; data: unknown }, S extends R['status']>(
  call: string,
  answer: R,
  status: S,
): Extract<R, { status: S }>['data'] {
  if (answer.status !== status) throw failed(call, answer.status, answer.data);
  return (answer as Extract<R, { status: S }>).data;
}

await journey('orval', {
  async signIn(email, password) {
    const answer = ok('sign in', await signIn({ email, password }), 200);
    connection.token = answer.access_token;
    return answer;
  },
  async createWorkspace(name) {
    return ok('create workspace', await createWorkspace({ name }), 201);
  },
  async createSecret(workspaceId, name, value) {
    return ok('create secret', await createSecret(workspaceId, { name, value }), 201);
  },
  async listSecrets(workspaceId) {
    return ok('list secrets', await listSecrets(workspaceId), 200);
  },
  async uploadDataset(workspace_id, file, { name, tags }) {
    return ok('upload dataset', await uploadDataset({ file, name, tags }, { workspace_id }), 201);
  },
  async listDatasets(workspace_id) {
    return ok('list datasets', await listDatasets({ workspace_id }), 200);
  },
});
