import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { expectProblem } from '../../utils/problem.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

type Bundle = { kind: string; version: string; files: Array<{ path: string; content: string }> };

function writeBundle(bundle: Bundle): string {
  const dir = mkdtempSync(join(tmpdir(), `ews-${bundle.kind}-`));
  for (const f of bundle.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
  return dir;
}

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
    expect(res.versions).toEqual([expect.objectContaining({ version: res.latest, language: 'typescript', generator: 'swagger-typescript-api', sdk_download: `/sdk/versions/${res.latest}/download`, examples_download: `/examples/versions/${res.latest}/download` })]);
    expect(res.versions[0].operations).toBeGreaterThan(100);
    expectProblem(await t.http.get('/sdk/versions'), 401);
  });

  it('hands out a typed client that compiles, and 404 naming the versions for an unknown one', async () => {
    const { latest } = (await t.http.get('/sdk/versions').set(auth).expect(200)).body;
    const bundle = (await t.http.get(`/sdk/versions/${latest}/download`).set(auth).expect(200)).body as Bundle;
    expect(bundle).toEqual(expect.objectContaining({ kind: 'sdk', version: latest }));
    expect(bundle.files.map((f) => f.path)).toEqual(expect.arrayContaining(['api.ts', 'index.ts', 'sdk.json']));
    const api = bundle.files.find((f) => f.path === 'api.ts')!.content;
    expect(api).toContain('class EvaluationWorkspaceClient');
    expect(api).toMatch(/\/datasets\/\$\{/);
    expect((await t.http.get('/sdk/versions/latest/download').set(auth).expect(200)).body.files).toEqual(bundle.files);

    const dir = writeBundle(bundle);
    dirs.push(dir);
    writeFileSync(join(dir, 'usage.ts'), `import { EvaluationWorkspaceClient } from './index';\nconst api = new EvaluationWorkspaceClient({ baseUrl: 'http://localhost:3000' });\nexport const ready: Promise<unknown> = api.live.getLiveness();\n`);
    const program = ts.createProgram([join(dir, 'index.ts')], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], skipLibCheck: true, types: [] });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    const missing = await t.http.get('/sdk/versions/9.9.9/download').set(auth);
    expectProblem(missing, 404, 'sdk_version_not_found');
    expect(missing.body.detail).toContain(latest);
    expect(missing.body.available).toEqual([latest, 'latest']);
    expectProblem(await t.http.get(`/sdk/versions/${latest}/download`), 401);
  });

  it('hands out examples whose script runs a whole evaluation against the service', async () => {
    const bundle = (await t.http.get('/examples/versions/latest/download').set(auth).expect(200)).body as Bundle;
    expect(bundle.files.map((f) => f.path)).toEqual(expect.arrayContaining(['datasets/support-questions.csv', 'datasets/support-questions.jsonl', 'eval-configs/support-quick.json', 'scripts/run-evaluation.mjs', 'README.md']));
    expectProblem(await t.http.get('/examples/versions/0.0.0-nope/download').set(auth), 404, 'sdk_version_not_found');
    expectProblem(await t.http.get('/examples/versions/latest/download'), 401);

    const dir = writeBundle(bundle);
    dirs.push(dir);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'scripts', 'run-evaluation.mjs')], { env: { ...process.env, EWS_URL: `http://127.0.0.1:${port}`, EWS_EMAIL: ADMIN_EMAIL, EWS_PASSWORD: ADMIN_PASSWORD }, timeout: 60_000 });
    const outcome = JSON.parse(stdout.trim().split('\n').pop()!);
    // Five rows, the last answered wrongly: exact match 4/5, above the 0.6 pass rate of support-quick.
    expect(outcome).toEqual(expect.objectContaining({ state: 'succeeded', passed: true, rows: 5, pass_rate: 0.8 }));
    expect(outcome.metrics.exact_match).toBe(0.8);
  });
});
