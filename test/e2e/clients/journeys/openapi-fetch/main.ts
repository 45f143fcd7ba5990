/**
 * openapi-fetch over the types openapi-typescript generated (generated/schema.ts): every call is
 * named by its path and method, so no generated name is used. The token is sent by a middleware,
 * as openapi-fetch documents for auth.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import { baseUrl, dataOf, journey } from '../journey.js';
import type { paths } from './generated/schema.js';

let token = '';
const auth: Middleware = {
  onRequest({ request }) {
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
};
const client = createClient<paths>({ baseUrl });
client.use(auth);

await journey('openapi-typescript + openapi-fetch', {
  async signIn(email, password) {
    const answer = dataOf('sign in', await client.POST('/auth/token', { body: { email, password } }));
    token = answer.access_token;
    return answer;
  },
  async createWorkspace(name) {
    return dataOf('create workspace', await client.POST('/workspaces', { body: { name } }));
  },
  async createSecret(workspace_id, name, value) {
    return dataOf(
      'create secret',
      await client.POST('/workspaces/{workspace_id}/secrets', {
        params: { path: { workspace_id } },
        body: { name, value },
      }),
    );
  },
  async listSecrets(workspace_id) {
    return dataOf(
      'list secrets',
      await client.GET('/workspaces/{workspace_id}/secrets', { params: { path: { workspace_id } } }),
    );
  },
  async uploadDataset(workspace_id, file, { name, tags }) {
    return dataOf(
      'upload dataset',
      await client.POST('/datasets/upload', {
        params: { query: { workspace_id } },
        body: { file, name, tags },
        // openapi-fetch sends JSON unless told otherwise (its documented multipart recipe); an
        // array goes as one part per item, as the other generators send it.
        bodySerializer(body) {
          const form = new FormData();
          for (const [field, value] of Object.entries(body)) {
            for (const item of [value].flat())
              if (item !== undefined) form.append(field, item instanceof Blob ? item : String(item));
          }
          return form;
        },
      }),
    );
  },
  async listDatasets(workspace_id) {
    return dataOf('list datasets', await client.GET('/datasets', { params: { query: { workspace_id } } }));
  },
});
