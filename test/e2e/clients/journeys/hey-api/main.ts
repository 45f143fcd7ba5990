/**
 * The SDK @hey-api/openapi-ts generated (generated/), on its bundled fetch client: the base URL
 * and the token are set once on the client (`auth` answers the bearer scheme's token).
 */
import { baseUrl, dataOf, journey } from '../journey.js';
import { client } from './generated/client.gen.js';
// The generated functions this journey calls, named after the document's operationIds: a renamed
// operationId changes this import only.
import {
  createSecret,
  createWorkspace,
  issueToken as signIn,
  listDatasets,
  listSecrets,
  uploadDataset,
} from './generated/sdk.gen.js';

let token = '';
client.setConfig({ baseUrl, auth: () => token });

await journey('@hey-api/openapi-ts', {
  async signIn(email, password) {
    const answer = dataOf('sign in', await signIn({ body: { email, password } }));
    token = answer.access_token;
    return answer;
  },
  async createWorkspace(name) {
    return dataOf('create workspace', await createWorkspace({ body: { name } }));
  },
  async createSecret(workspace_id, name, value) {
    return dataOf('create secret', await createSecret({ path: { workspace_id }, body: { name, value } }));
  },
  async listSecrets(workspace_id) {
    return dataOf('list secrets', await listSecrets({ path: { workspace_id } }));
  },
  async uploadDataset(workspace_id, file, { name, tags }) {
    return dataOf('upload dataset', await uploadDataset({ query: { workspace_id }, body: { file, name, tags } }));
  },
  async listDatasets(workspace_id) {
    return dataOf('list datasets', await listDatasets({ query: { workspace_id } }));
  },
});
