// The product as `npm start` runs it, a process of its own, and a client of its API.
import { randomBytes } from 'node:crypto';
import { freePort, serviceEnv, serviceNodeFlags, startServer } from './processes.mjs';

export const EMAIL = 'bench@example.com';
export const PASSWORD = 'bench-password-1';

/** The product's environment for a benchmark: its data under `dataDir`, the admin EMAIL/PASSWORD, fresh keys, PostgreSQL when `databaseUrl`. */
export function productEnv(dataDir, databaseUrl, extra = {}) {
  return {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: EMAIL,
    ADMIN_PASSWORD: PASSWORD,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    // A load generator is one caller sending far past a production quota: the limiter counts every
    // request (its cost is measured) against quotas no bench reaches.
    RATE_LIMIT_READ: '100000000',
    RATE_LIMIT_WRITE: '100000000',
    RATE_LIMIT_INGESTION: '100000000',
    RATE_LIMIT_LOGIN: '100000000',
    ...extra,
  };
}

/** Starts `node <npm start's flags> dist/src/main.js` in npm start's environment (`nodeArgs` first, e.g. a profiler's) and waits until /ready answers 200. */
export async function startProduct(env, nodeArgs = []) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return startServer(
    [...nodeArgs, ...serviceNodeFlags, 'dist/src/main.js'],
    { ...serviceEnv, ...env, PORT: String(port), HOST: '127.0.0.1' },
    async () => {
      const res = await fetch(`${url}/ready`).catch(() => null);
      return res?.status === 200 ? url : undefined;
    },
  );
}

/** One API call; a JSON body or a FormData; answers the parsed body, throws on a non-2xx answer. */
export async function api(base, method, path, token, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
    },
    body: body instanceof FormData ? body : body && JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A SUT in workspace `ws` with an HTTP connection to `url` taking `concurrency` calls at once,
 * through `call(method, path, body)` (an API client); answers `{ sutId, connectionId, runOf }`,
 * `runOf(datasetId)` the body of a `POST /runs` of the dataset through it, scored by exact_match
 * and token_f1, at `concurrency`.
 */
export async function httpSut(call, ws, url, concurrency) {
  const sutId = (await call('POST', '/suts', { workspace_id: ws, name: 'bench-sut' })).id;
  const connection = await call('POST', `/suts/${sutId}/connections`, {
    name: 'local',
    kind: 'http',
    http: { url },
    max_concurrency: concurrency,
    timeout_ms: 10_000,
  });
  const runOf = (datasetId) => ({
    workspace_id: ws,
    dataset_id: datasetId,
    sut_id: sutId,
    connection_id: connection.id,
    metrics: ['exact_match', 'token_f1'],
    concurrency,
  });
  return { sutId, connectionId: connection.id, runOf };
}
