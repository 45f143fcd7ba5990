import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../../utils/test-app.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');

/**
 * Clients people generate from the served OpenAPI document, as they would: each generator
 * writes its client from GET /openapi.json into a project of its own (package.json with
 * "type": "module", tsconfig strict with NodeNext), tsc compiles the client and a journey with
 * no diagnostic, and the journey runs in its own node process against the app's real address:
 * sign in, create a workspace, create and list a secret under /workspaces/{workspace_id}/,
 * upload a CSV (multipart), find it among the workspace's datasets (journeys/journey.ts).
 * A document a generator rejects, or whose client does not compile, fails here; the fix belongs
 * in the document (libs/common/openapi-completion.ts, the DTOs), not in these files.
 */
interface Generator {
  name: string;
  /** Under journeys/: generate.mjs, which writes <folder>/generated/, and main.ts, the journey. */
  folder: string;
  /** The compilation's `lib`: the ES library unless the generated code needs more. */
  lib: string[];
}

const GENERATORS: Generator[] = [
  { name: 'openapi-typescript + openapi-fetch', folder: 'openapi-fetch', lib: ['ES2022'] },
  // The fetch client @hey-api/openapi-ts writes into its output casts request bodies to the DOM's
  // `BodyInit`, a type that neither the ES library nor @types/node declares (fetch itself comes
  // from @types/node): that output needs the DOM library, whatever the document says.
  { name: '@hey-api/openapi-ts', folder: 'hey-api', lib: ['ES2022', 'DOM'] },
  { name: 'orval', folder: 'orval', lib: ['ES2022'] },
];

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs node with these arguments in `cwd`; answers its exit code and output, never throws. */
function node(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 100_000, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr: err && !stderr ? String(err) : stderr });
      },
    );
  });
}

function succeeded(step: string, ran: Ran): Ran {
  if (ran.code !== 0) throw new Error(`${step} exited with ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/**
 * A project of the generator's own in a fresh directory: the served document, journey.ts, the
 * generator's folder, package.json, tsconfig.json, and node_modules linked to this repository's
 * (where the generators and their runtime packages are installed).
 */
function project(generator: Generator, document: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), `ews-${generator.folder}-`));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  // skipLibCheck leaves the installed packages' declarations alone; what the generators write is
  // .ts (openapi-typescript's types too), and all of it is checked.
  const compilerOptions = {
    strict: true,
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    target: 'ES2022',
    lib: generator.lib,
    types: ['node'],
    skipLibCheck: true,
    rootDir: '.',
    outDir: 'dist',
  };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions, include: ['journey.ts', `${generator.folder}/**/*.ts`] }, null, 2),
  );
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  cpSync(join(here, 'journeys', 'journey.ts'), join(dir, 'journey.ts'));
  cpSync(join(here, 'journeys', generator.folder), join(dir, generator.folder), { recursive: true });
  return dir;
}

describe('Clients generated from the served OpenAPI document', () => {
  let t: TestApp;
  let base: string;
  let document: unknown;
  let admin: Record<string, string>;
  const dirs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer() as { address(): AddressInfo }).address().port}`;
    document = (await t.http.get('/openapi.json').expect(200)).body;
    const { access_token } = (
      await t.http.post('/auth/token').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }).expect(200)
    ).body;
    admin = { Authorization: `Bearer ${access_token}` };
  });
  afterAll(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    (t?.app.getHttpServer() as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
    await t?.close();
  });

  it.each(GENERATORS)('$name: generates, compiles under tsc --strict and drives the journey', async (generator) => {
    const dir = project(generator, document);
    dirs.push(dir);
    const started = performance.now();
    succeeded(`${generator.name}: generate.mjs`, await node(['generate.mjs'], join(dir, generator.folder)));
    const generated = performance.now();

    const tsc = await node(
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'],
      dir,
    );
    const diagnostics = tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    expect(diagnostics).toEqual([]);
    succeeded(`${generator.name}: tsc`, tsc);
    const compiled = performance.now();

    const ran = succeeded(
      `${generator.name}: journey`,
      await node([join('dist', generator.folder, 'main.js')], dir, {
        EWS_URL: base,
        EWS_EMAIL: ADMIN_EMAIL,
        EWS_PASSWORD: ADMIN_PASSWORD,
      }),
    );
    if (process.env.TEST_TIMINGS) {
      process.stderr.write(
        `[generators] ${generator.name}: generate ${Math.round(generated - started)} ms, tsc ${Math.round(compiled - generated)} ms, journey ${Math.round(performance.now() - compiled)} ms\n`,
      );
    }
    const outcome = JSON.parse(ran.stdout.trim().split('\n').pop()!);
    expect(outcome).toEqual({
      generator: generator.name,
      workspace_id: expect.any(String),
      secret_id: expect.any(String),
      secrets: 1,
      dataset_id: expect.any(String),
      rows: 3,
      tags: ['generated', 'smoke'],
      datasets: 1,
    });

    // What the journey reported is what the service holds.
    const dataset = (await t.http.get(`/datasets/${outcome.dataset_id}`).set(admin).expect(200)).body;
    expect(dataset).toEqual(
      expect.objectContaining({ name: 'capitals', workspace_id: outcome.workspace_id, tags: ['generated', 'smoke'] }),
    );
    const secrets = (await t.http.get(`/workspaces/${outcome.workspace_id}/secrets`).set(admin).expect(200)).body;
    expect(secrets.items.map((s: { id: string }) => s.id)).toEqual([outcome.secret_id]);
  });
});
