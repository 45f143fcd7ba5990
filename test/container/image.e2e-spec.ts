import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { databaseUrl, withAdminClient } from '../utils/database.js';
import { describeOn } from '../utils/database-mode.js';
import { chatCompletion, FakeUpstream } from '../utils/fake-upstream.js';
import {
  ensureNodeBaseImage,
  machineBuildArgs,
  podman,
  podmanOk,
  repoRoot,
  requirePodman,
} from '../utils/container.js';
import { deleteQueueKeys, TEST_REDIS_URL } from '../e2e/queue/support/worker-context.js';

/**
 * The Docker image as an operator builds and runs it (docs/operations.md#docker): built with the
 * README's command from the official base's name (made locally, test/utils/container.ts), then run
 * with podman and runc on the host's network, each container on ports of its own on 127.0.0.1.
 */
jest.setTimeout(1_800_000);

const TAG = `localhost/ews-image-test:${process.pid}`;
const ADMIN = { email: 'admin@example.com', password: 'change-me-now-image' };
const made = { containers: [] as string[], volumes: [] as string[] };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function name(kind: string): string {
  return `ews-image-test-${kind}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

/** A detached container of the test image on the host's network; removed after the file. */
async function runContainer(options: { env: Record<string, string>; args?: string[]; command?: string[] }) {
  const container = name('c');
  made.containers.push(container);
  const env = Object.entries(options.env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  await podmanOk([
    'run',
    '-d',
    '--name',
    container,
    '--network',
    'host',
    ...env,
    ...(options.args ?? []),
    TAG,
    ...(options.command ?? []),
  ]);
  return container;
}

function volume(): string {
  const made_ = name('v');
  made.volumes.push(made_);
  return made_;
}

/** Polls until `url` answers 200, or fails with the container's log. */
async function untilLive(url: string, container: string, limitMs = 120_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok) return Date.now() - started;
    } catch {
      /* not listening yet */
    }
    const state = await podmanOk(['inspect', '--format', '{{.State.Status}}', container]);
    if (state === 'exited') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer:\n${(await podman(['logs', container])).stderr.slice(-4000)}`);
}

async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  expect(res.status).toBe(200);
  return `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
}

async function call(base: string, auth: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect({ path, status: res.status, ok: res.ok }).toEqual({ path, status: res.status, ok: true });
  return text ? JSON.parse(text) : undefined;
}

/** `podman stop` (SIGTERM, up to 30 s, as compose's stop_grace_period): how long and how it exited. */
async function stop(container: string): Promise<{ ms: number; exitCode: number }> {
  const started = Date.now();
  await podmanOk(['stop', '-t', '30', container]);
  const ms = Date.now() - started;
  return { ms, exitCode: Number(await podmanOk(['inspect', '--format', '{{.State.ExitCode}}', container])) };
}

async function healthcheck(container: string): Promise<number> {
  return (await podman(['healthcheck', 'run', container])).code;
}

describeOn('postgres', 'one image per test run, its scaled-out containers on PostgreSQL and Redis')(
  'the Docker image',
  () => {
    let buildSeconds = 0;
    const buildArgs = machineBuildArgs();

    beforeAll(async () => {
      requirePodman();
      await ensureNodeBaseImage();
      // Earlier runs' layers stay as the build's cache (a dependency stage is rebuilt only when the
      // lockfile changes); a week-old one is dropped, so the cache does not grow without bound.
      await podman(['image', 'prune', '-f', '--filter', 'until=168h']);
      const started = Date.now();
      // The README's command (docker build -t ews .), FROM the official base's name, with the build
      // arguments this machine's network asks for (its proxy's CA, its registry); --format docker keeps
      // the HEALTHCHECK (podman's default OCI format drops it), the host's network reaches the registry.
      const args = ['build', '--format', 'docker', '--network', 'host', ...buildArgs, '-t', TAG, repoRoot];
      await podmanOk(args, { timeoutMs: 1_500_000 });
      buildSeconds = (Date.now() - started) / 1000;
    });

    afterAll(async () => {
      for (const container of made.containers) await podman(['rm', '-f', '-t', '0', container]);
      for (const v of made.volumes) await podman(['volume', 'rm', '-f', v]);
      await podman(['rmi', '-f', TAG]);
    });

    it('is built FROM the default base with a numeric user, a healthcheck and nothing of the development tree', async () => {
      process.stdout.write(`image built in ${buildSeconds.toFixed(0)} s\n`);
      // podman keeps a docker-format image's HEALTHCHECK beside its OCI config (Healthcheck), Docker in Config.
      const [image] = JSON.parse(await podmanOk(['image', 'inspect', TAG])) as Array<{
        Config: { User: string; StopSignal?: string; Healthcheck?: { Test: string[] } };
        Healthcheck?: { Test: string[] };
      }>;
      const config = image.Config;
      expect(config.User).toMatch(/^[1-9]\d*(:\d+)?$/);
      expect((image.Healthcheck ?? config.Healthcheck)?.Test).toEqual(['CMD', 'node', 'dist/src/cli/healthcheck.js']);
      expect(config.StopSignal).toBe('SIGTERM');

      const listing = await podmanOk([
        'run',
        '--rm',
        '--network',
        'none',
        '--entrypoint',
        'sh',
        TAG,
        '-c',
        'ls node_modules; echo ---; find / -xdev \\( -name "*.spec.ts" -o -name "*.e2e-spec.ts" \\) -not -path "/proc/*" 2>/dev/null; ls -d test bench docs src libs 2>/dev/null; echo ---; id -u; id -g',
      ]);
      const [modules, strays, ids] = listing.split('---\n');
      expect(strays.trim()).toBe('');
      expect(ids.trim().split('\n')).toEqual(['1000', '1000']);
      // Every installed package is one production needs: none only the development tree asks for.
      const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { dev?: boolean; devOptional?: boolean; dependencies?: Record<string, string> }>;
      };
      const neededByProduction = new Set(
        Object.entries(lock.packages)
          .filter(([, entry]) => !entry.dev && !entry.devOptional)
          .flatMap(([, entry]) => Object.keys(entry.dependencies ?? {})),
      );
      const installed = modules
        .trim()
        .split('\n')
        .filter((entry) => entry && !entry.startsWith('.') && !entry.startsWith('@'));
      const devOnly = installed.filter((pkg) => {
        const entry = lock.packages[`node_modules/${pkg}`];
        return !entry || entry.dev || (entry.devOptional && !neededByProduction.has(pkg));
      });
      expect(devOnly).toEqual([]);
      expect(installed).not.toContain('typescript');
      expect(installed).toEqual(expect.arrayContaining(['pg', 'argon2', 'bullmq']));
    });

    it('trusts the CA given at build time in the running service too (its outbound calls go through the same proxy)', async () => {
      const given = buildArgs.find((arg) => arg.startsWith('EXTRA_CA_CERTS='));
      const registry = buildArgs.find((arg) => arg.startsWith('NPM_REGISTRY='))?.slice('NPM_REGISTRY='.length);
      const pem = await podmanOk(['run', '--rm', '--network', 'none', TAG, 'sh', '-c', 'cat "$NODE_EXTRA_CA_CERTS"']);
      expect(pem.trim()).toBe(given?.slice('EXTRA_CA_CERTS='.length).trim() ?? '');
      if (!given) return;
      const reach = `fetch(${JSON.stringify(registry ?? 'https://registry.npmjs.org/')}).then((r) => process.exit(r.status < 500 ? 0 : 1))`;
      await podmanOk(['run', '--rm', '--network', 'host', TAG, 'node', '-e', reach]);
    });

    it('starts as a non-root user, keeps its data in the volume across restarts and new containers, stops on SIGTERM in time', async () => {
      const port = await freePort();
      const data = volume();
      const env = { PORT: String(port), HOST: '127.0.0.1', ADMIN_PASSWORD: ADMIN.password };
      const first = await runContainer({ env, args: ['-v', `${data}:/data`] });
      const base = `http://127.0.0.1:${port}`;
      const bootMs = await untilLive(`${base}/live`, first);
      process.stdout.write(`embedded container to /live in ${bootMs} ms\n`);
      expect(await podmanOk(['exec', first, 'id', '-u'])).toBe('1000');
      expect(await healthcheck(first)).toBe(0);
      const auth = await login(base);
      const workspace = await call(base, auth, 'POST', '/workspaces', { name: 'Kept across containers' });

      const stopped = await stop(first);
      process.stdout.write(`SIGTERM to exit: ${stopped.ms} ms\n`);
      expect(stopped).toEqual({ ms: expect.any(Number), exitCode: 0 });
      expect(stopped.ms).toBeLessThan(10_000);

      // The same container again, then a new one on the same volume with a read-only root filesystem.
      await podmanOk(['start', first]);
      await untilLive(`${base}/live`, first);
      expect((await call(base, await login(base), 'GET', `/workspaces/${workspace.id}`)).name).toBe(
        'Kept across containers',
      );
      expect((await stop(first)).exitCode).toBe(0);

      const second = await runContainer({
        env,
        args: ['-v', `${data}:/data`, '--read-only', '--read-only-tmpfs=false'],
      });
      await untilLive(`${base}/live`, second);
      expect((await call(base, await login(base), 'GET', `/workspaces/${workspace.id}`)).id).toBe(workspace.id);
      expect((await stop(second)).exitCode).toBe(0);
    });

    it('runs under an arbitrary uid in the root group (as OpenShift assigns), on a read-only root filesystem', async () => {
      const port = await freePort();
      const env = { PORT: String(port), HOST: '127.0.0.1', ADMIN_PASSWORD: ADMIN.password };
      const container = await runContainer({
        env,
        args: ['-v', `${volume()}:/data`, '--user', '1000770000:0', '--read-only', '--read-only-tmpfs=false'],
      });
      const base = `http://127.0.0.1:${port}`;
      await untilLive(`${base}/live`, container);
      expect(await podmanOk(['exec', container, 'id', '-u'])).toBe('1000770000');
      await call(base, await login(base), 'POST', '/workspaces', { name: 'Arbitrary uid' });
      expect((await stop(container)).exitCode).toBe(0);
    });

    it('scales out: a worker container started first on PostgreSQL and Redis runs the jobs; the API creates the first admin', async () => {
      const database = `ews_image_${process.pid}_${randomBytes(3).toString('hex')}`;
      const prefix = `ews-image-${process.pid}-${randomBytes(3).toString('hex')}`;
      const application = (await FakeUpstream.start()).on('POST', '/v1/chat/completions', (req) => {
        const question = (req.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content;
        return { json: chatCompletion(question === 'What is 2 + 2?' ? '4' : 'Paris') };
      });
      await withAdminClient((client) => client.query(`CREATE DATABASE ${database}`));
      try {
        const shared = {
          DATABASE_URL: databaseUrl(database),
          REDIS_URL: TEST_REDIS_URL,
          QUEUE_PREFIX: prefix,
          HOST: '127.0.0.1',
          JWT_SECRET: randomBytes(32).toString('hex'),
          ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        };
        const [apiPort, workerPort, workerHealth] = await Promise.all([freePort(), freePort(), freePort()]);
        // The worker first: it migrates, then waits for jobs; it must not create the admin.
        const worker = await runContainer({
          env: {
            ...shared,
            PORT: String(workerPort),
            WORKER_HEALTH_PORT: String(workerHealth),
            ADMIN_PASSWORD: 'the-worker-s-own-1',
          },
          args: ['--read-only', '--read-only-tmpfs=false'],
          command: ['node', 'dist/src/worker.js'],
        });
        await untilLive(`http://127.0.0.1:${workerHealth}/ready`, worker);
        expect(await healthcheck(worker)).toBe(0);
        const api = await runContainer({
          env: { ...shared, PORT: String(apiPort), RUN_WORKERS: 'false', ADMIN_PASSWORD: ADMIN.password },
          args: ['--read-only', '--read-only-tmpfs=false'],
        });
        const base = `http://127.0.0.1:${apiPort}`;
        await untilLive(`${base}/ready`, api);
        const auth = await login(base);
        const runId = await startRun(base, auth, application);
        const run = await untilSettled(base, auth, runId);
        expect({ state: run.state, passed: run.passed }).toEqual({ state: 'succeeded', passed: true });
        expect(application.received('POST', '/v1/chat/completions')).toHaveLength(2);

        const stopped = await stop(worker);
        expect(stopped.exitCode).toBe(0);
        expect(stopped.ms).toBeLessThan(10_000);
        expect((await stop(api)).exitCode).toBe(0);
      } finally {
        await application.close();
        await deleteQueueKeys(prefix);
        await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
      }
    });
  },
);

/** The README's tour, through the API container: a workspace, a two-row dataset, a SUT on the stand-in application, a run. */
async function startRun(base: string, auth: string, application: FakeUpstream): Promise<string> {
  const workspace = await call(base, auth, 'POST', '/workspaces', { name: 'Scaled out' });
  const form = new FormData();
  form.append(
    'file',
    new Blob(['input,expected_output\nWhat is 2 + 2?,4\nWhat is the capital of France?,Paris\n']),
    'tour.csv',
  );
  const upload = await fetch(`${base}/datasets/upload?workspace_id=${workspace.id}`, {
    method: 'POST',
    headers: { Authorization: auth },
    body: form,
  });
  expect(upload.status).toBe(201);
  const dataset = (await upload.json()) as { id: string };
  const sut = await call(base, auth, 'POST', '/suts', { workspace_id: workspace.id, name: 'My app' });
  const connection = await call(base, auth, 'POST', `/suts/${sut.id}/connections`, {
    name: 'prod',
    kind: 'openai_chat',
    openai_chat: { base_url: application.url('/v1'), model: 'my-model' },
  });
  const run = await call(base, auth, 'POST', '/runs', {
    workspace_id: workspace.id,
    dataset_id: dataset.id,
    sut_id: sut.id,
    connection_id: connection.id,
    metrics: ['exact_match'],
  });
  return run.id as string;
}

async function untilSettled(base: string, auth: string, runId: string): Promise<{ state: string; passed: boolean }> {
  const started = Date.now();
  for (;;) {
    const run = await call(base, auth, 'GET', `/runs/${runId}`);
    if (!['queued', 'running'].includes(run.state)) return run;
    if (Date.now() - started > 120_000) throw new Error(`run ${runId} still ${run.state} after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
