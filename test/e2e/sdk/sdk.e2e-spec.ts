import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expectProblem } from '../../utils/problem.js';
import { compileProject, repoRoot, run, writeBundle, type Bundle } from '../../utils/sdk-package.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

describe('SDK and example downloads', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  const dirs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    auth = (await t.factory.actor()).auth;
  });
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    (t?.app.getHttpServer() as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
    await t?.close();
  });

  it('lists the versions with their download paths', async () => {
    const res = (await t.http.get('/sdk/versions').set(auth).expect(200)).body;
    expect(res.latest).toMatch(/^\d+\.\d+\.\d+$/);
    expect(res.versions).toEqual([
      expect.objectContaining({
        version: res.latest,
        language: 'typescript',
        generator: 'swagger-typescript-api',
        sdk_download: `/sdk/versions/${res.latest}/download`,
        examples_download: `/examples/versions/${res.latest}/download`,
      }),
    ]);
    expect(res.versions[0].operations).toBeGreaterThan(100);
    expectProblem(await t.http.get('/sdk/versions'), 401);
  });

  it('hands out the SDK package sources, which type-check with lib ES2022 and no DOM, and 404 naming the versions for an unknown one', async () => {
    const { latest } = (await t.http.get('/sdk/versions').set(auth).expect(200)).body;
    const bundle = (await t.http.get(`/sdk/versions/${latest}/download`).set(auth).expect(200)).body as Bundle;
    expect(bundle).toEqual(expect.objectContaining({ kind: 'sdk', version: latest }));
    expect(bundle.instructions).toContain('npm install && npm run build');
    expect(bundle.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'package.json',
        'tsconfig.json',
        'tsconfig.cjs.json',
        'README.md',
        'src/index.ts',
        'src/client.ts',
        'src/generated/api.ts',
        'sdk.json',
      ]),
    );
    expect(JSON.parse(bundle.files.find((f) => f.path === 'package.json')!.content)).toEqual(
      expect.objectContaining({ name: '@ews/sdk', version: latest }),
    );
    const api = bundle.files.find((f) => f.path === 'src/generated/api.ts')!.content;
    expect(api).toContain('class EvaluationWorkspaceClient');
    expect(api).toMatch(/\/datasets\/\$\{/);
    expect((await t.http.get('/sdk/versions/latest/download').set(auth).expect(200)).body.files).toEqual(bundle.files);

    // The package's own tsconfig (the ESM build's): ES2022 and @types/node, no DOM lib.
    const dir = writeBundle(bundle);
    dirs.push(dir);
    const { diagnostics, options } = compileProject(dir, {
      noEmit: true,
      typeRoots: [join(repoRoot, 'node_modules', '@types')],
    });
    expect(diagnostics).toEqual([]);
    expect(options.lib).toEqual(['lib.es2022.d.ts']);

    const missing = await t.http.get('/sdk/versions/9.9.9/download').set(auth);
    expectProblem(missing, 404, 'sdk_version_not_found');
    expect(missing.body.detail).toContain(latest);
    expect(missing.body.available).toEqual([latest, 'latest']);
    expectProblem(await t.http.get(`/sdk/versions/${latest}/download`), 401);
  });

  it('hands out examples whose script runs a whole evaluation against the service', async () => {
    const bundle = (await t.http.get('/examples/versions/latest/download').set(auth).expect(200)).body as Bundle;
    expect(bundle.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'datasets/support-questions.csv',
        'datasets/support-questions.jsonl',
        'eval-configs/support-quick.json',
        'scripts/run-evaluation.mjs',
        'README.md',
      ]),
    );
    expectProblem(await t.http.get('/examples/versions/0.0.0-nope/download').set(auth), 404, 'sdk_version_not_found');
    expectProblem(await t.http.get('/examples/versions/latest/download'), 401);

    const dir = writeBundle(bundle);
    dirs.push(dir);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const { stdout } = await run(process.execPath, [join(dir, 'scripts', 'run-evaluation.mjs')], {
      env: {
        ...process.env,
        EWS_URL: `http://127.0.0.1:${port}`,
        EWS_EMAIL: ADMIN_EMAIL,
        EWS_PASSWORD: ADMIN_PASSWORD,
      },
      timeout: 60_000,
    });
    const outcome = JSON.parse(stdout.trim().split('\n').pop()!);
    // Five rows, the last answered wrongly: exact match 4/5, above the 0.6 pass rate of support-quick.
    expect(outcome).toEqual(expect.objectContaining({ state: 'succeeded', passed: true, rows: 5, pass_rate: 0.8 }));
    expect(outcome.metrics.exact_match).toBe(0.8);
  });
});
