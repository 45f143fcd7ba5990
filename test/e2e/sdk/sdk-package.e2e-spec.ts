import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectProblem } from '../../utils/problem.js';
import {
  compileProject,
  installInto,
  packSdk,
  run,
  writeBundle,
  writeFiles,
  type Bundle,
} from '../../utils/sdk-package.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The SDK as a package: its sources (the JSON bundle) build and pack (sdk/pack.mjs, what the
 * service's `npm run build` runs) into the tarball GET /sdk/versions/{version}/package.tgz
 * serves; three fresh projects install that tarball (ESM under NodeNext, CommonJS, a bundler
 * with the DOM lib and no @types/node), compile it with no diagnostic and run one journey
 * against the service: sign in by password, create a workspace and an API key, then by the key
 * alone upload a CSV from a path and from a stream, page through the datasets and meet errors.
 */
const CSV = 'question,answer\nWhat is 2+2?,4\nWhat is 3+3?,6\n';
const MISSING_DATASET = '00000000-0000-4000-8000-000000000000';

/** The journey, the same for each consumer but for how it reaches the environment and a stream. */
function journey(kind: 'node' | 'dom'): string {
  const stream =
    kind === 'node'
      ? 'createReadStream(env.CSV_PATH!)'
      : `new ReadableStream<Uint8Array>({ start(controller) { controller.enqueue(new TextEncoder().encode(['question,answer', 'What is 5+5?,10', ''].join(String.fromCharCode(10)))); controller.close(); } })`;
  return [
    `import { createClient, EwsApiError, isEwsApiError, pages, paginate, type DatasetResponse } from '@ews/sdk';`,
    kind === 'node'
      ? `import { createReadStream } from 'node:fs';`
      : `declare const process: { env: Record<string, string | undefined>; exitCode?: number };`,
    ``,
    `async function main(): Promise<void> {`,
    `  const env = process.env;`,
    `  const baseUrl = env.EWS_URL!;`,
    `  const person = createClient({ baseUrl, email: env.EWS_EMAIL!, password: env.EWS_PASSWORD! });`,
    `  const me = await person.auth.getCurrentUser();`,
    `  const workspace = await person.workspaces.createWorkspace({ name: 'sdk ' + env.CONSUMER });`,
    `  const { key } = await person.workspaces.createApiKey({ workspaceId: workspace.id }, { name: 'ci', role: 'member' });`,
    ``,
    `  const ci = createClient({ baseUrl, apiKey: key });`,
    `  const fromPath: DatasetResponse = await ci.uploadDataset({ workspaceId: workspace.id, file: env.CSV_PATH!, fields: { tags: ['sdk', 'path'] } });`,
    `  const fromStream = await ci.uploadDataset({ workspaceId: workspace.id, file: ${stream}, filename: 'from-stream.csv' });`,
    `  const pageSizes: number[] = [];`,
    `  for await (const page of pages(ci.datasets.listDatasets, { workspace_id: workspace.id, page_size: 1 })) pageSizes.push(page.items.length);`,
    `  const names: string[] = [];`,
    `  for await (const dataset of paginate(ci.datasets.listDatasets, { workspace_id: workspace.id, page_size: 1, sort: 'name' })) names.push(dataset.name);`,
    ``,
    `  const notFound = await ci.datasets.getDataset({ datasetId: '${MISSING_DATASET}' }).then(() => undefined, (err: unknown) => err);`,
    `  const invalid = await ci.datasets.listDatasets({ workspace_id: workspace.id, page_size: 1000 }).then(() => undefined, (err: unknown) => err);`,
    `  if (!(notFound instanceof EwsApiError) || !isEwsApiError(invalid)) throw new Error('expected EwsApiError');`,
    `  const described = (err: EwsApiError) => ({ status: err.status, errorCode: err.errorCode, requestId: err.requestId, problem: err.problem, fields: err.errors.map((e) => e.field) });`,
    `  const uploads = [fromPath, fromStream].map((d) => ({ name: d.name, rows: d.latest_version?.row_count, tags: d.tags }));`,
    `  console.log(JSON.stringify({ user: me.email, uploads, pageSizes, names, notFound: described(notFound), invalid: described(invalid) }));`,
    `}`,
    ``,
    `main().catch((err: unknown) => {`,
    `  console.error(err);`,
    `  process.exitCode = 1;`,
    `});`,
    ``,
  ].join('\n');
}

const STRICT = { strict: true, target: 'ES2022', skipLibCheck: false, outDir: 'out', rootDir: 'src' };
const CONSUMERS = [
  {
    name: 'ESM (NodeNext, lib ES2022, @types/node)',
    packageJson: { type: 'module' },
    compilerOptions: { ...STRICT, module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'] },
    typesNode: true,
    source: journey('node'),
    emits: /from '@ews\/sdk'/,
  },
  {
    name: 'CommonJS (node16, require)',
    packageJson: { type: 'commonjs' },
    compilerOptions: { ...STRICT, module: 'Node16', moduleResolution: 'Node16', lib: ['ES2022'], types: ['node'] },
    typesNode: true,
    source: journey('node'),
    emits: /require\("@ews\/sdk"\)/,
  },
  {
    name: 'bundler (moduleResolution bundler, DOM lib, no @types/node)',
    packageJson: { type: 'module' },
    compilerOptions: { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM'], types: [] },
    typesNode: false,
    source: journey('dom'),
    emits: /from '@ews\/sdk'/,
  },
];

describe('the @ews/sdk package', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let baseUrl: string;
  let bundle: Bundle;
  let packaged: Response;
  let tarball: string;
  let installed: string;
  let csvPath: string;
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    t = await startTestApp();
    auth = (await t.factory.actor()).auth;
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    bundle = (await t.http.get('/sdk/versions/latest/download').set(auth).expect(200)).body as Bundle;
    const sources = writeBundle(bundle);
    dirs.push(sources);
    // What `npm run build` does after `nest build`, here from the downloaded sources.
    await packSdk({ from: sources });
    packaged = await fetch(`${baseUrl}/sdk/versions/latest/package.tgz`, { headers: auth });
    const downloads = tempDir('ews-sdk-tgz-');
    tarball = join(downloads, 'ews-sdk.tgz');
    writeFileSync(tarball, Buffer.from(await packaged.arrayBuffer()));
    await run('tar', ['-xzf', tarball, '-C', downloads]);
    installed = join(downloads, 'package');
    csvPath = join(downloads, 'questions.csv');
    writeFileSync(csvPath, CSV);
  }, 240_000);
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    (t?.app.getHttpServer() as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
    await t?.close();
  });

  it('hands out its sources as the bundle and, packed from them, the tarball npm pack makes', async () => {
    expect(bundle.files.map((f) => f.path)).toEqual([
      'README.md',
      'package.json',
      'sdk.json',
      'src/cli/main.ts',
      'src/cli/render.ts',
      'src/cli/resolve.ts',
      'src/client.ts',
      'src/errors.ts',
      'src/events.ts',
      'src/generated/api.ts',
      'src/index.ts',
      'src/paginate.ts',
      'src/transport.ts',
      'src/upload.ts',
      'tsconfig.cjs.json',
      'tsconfig.json',
    ]);
    expect(packaged.status).toBe(200);
    expect(packaged.headers.get('content-type')).toBe('application/gzip');
    expect(packaged.headers.get('content-disposition')).toBe(`attachment; filename="ews-sdk-${bundle.version}.tgz"`);

    const { stdout } = await run('tar', ['-tzf', tarball]);
    const entries = stdout.trim().split('\n').sort();
    const modules = ['client', 'errors', 'events', 'generated/api', 'index', 'paginate', 'transport', 'upload'];
    // The `ews` command (bin) is built as ESM only.
    const cli = ['cli/main', 'cli/render', 'cli/resolve'];
    expect(entries).toEqual(
      [
        'package/README.md',
        'package/dist/cjs/package.json',
        'package/package.json',
        ...['esm', 'cjs'].flatMap((format) =>
          modules.flatMap((m) => [`package/dist/${format}/${m}.d.ts`, `package/dist/${format}/${m}.js`]),
        ),
        ...cli.flatMap((m) => [`package/dist/esm/${m}.d.ts`, `package/dist/esm/${m}.js`]),
      ].sort(),
    );
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toEqual(
      expect.objectContaining({ name: '@ews/sdk', version: bundle.version, type: 'module', sideEffects: false }),
    );
    expect(manifest.exports['.']).toEqual({
      import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
      require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
    });
    expect(JSON.parse(readFileSync(join(installed, 'dist', 'cjs', 'package.json'), 'utf8'))).toEqual({
      type: 'commonjs',
    });

    expectProblem(await t.http.get('/sdk/versions/9.9.9/package.tgz').set(auth), 404, 'sdk_version_not_found');
    expectProblem(await t.http.get('/sdk/versions/latest/package.tgz'), 401);
  });

  it.each(CONSUMERS)(
    'a fresh $name project compiles against it with no diagnostic and runs the journey',
    async (consumer) => {
      const project = tempDir('ews-sdk-consumer-');
      writeFiles(project, {
        'package.json': JSON.stringify(
          { name: 'consumer', private: true, ...consumer.packageJson, dependencies: { '@ews/sdk': `file:${tarball}` } },
          null,
          2,
        ),
        'tsconfig.json': JSON.stringify({ compilerOptions: consumer.compilerOptions, include: ['src'] }, null, 2),
        'src/main.ts': consumer.source,
      });
      installInto(project, installed, { typesNode: consumer.typesNode });
      const { diagnostics, options } = compileProject(project);
      expect(diagnostics).toEqual([]);
      expect(options.lib).toEqual(consumer.typesNode ? ['lib.es2022.d.ts'] : ['lib.es2022.d.ts', 'lib.dom.d.ts']);
      expect(readFileSync(join(project, 'out', 'main.js'), 'utf8')).toMatch(consumer.emits);

      const person = await t.factory.newUser();
      const { stdout } = await run(process.execPath, [join(project, 'out', 'main.js')], {
        cwd: project,
        env: {
          ...process.env,
          EWS_URL: baseUrl,
          EWS_EMAIL: person.email,
          EWS_PASSWORD: person.password,
          CSV_PATH: csvPath,
          CONSUMER: consumer.name,
        },
        timeout: 60_000,
      });
      const outcome = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(outcome).toEqual(
        expect.objectContaining({
          user: person.email,
          uploads: [
            { name: 'questions', rows: 2, tags: ['sdk', 'path'] },
            { name: 'from-stream', rows: consumer.typesNode ? 2 : 1, tags: [] },
          ],
          pageSizes: [1, 1],
          names: ['from-stream', 'questions'],
        }),
      );
      expect(outcome.notFound).toEqual({
        status: 404,
        errorCode: 'not_found',
        requestId: expect.any(String),
        problem: expect.objectContaining({ status: 404, title: expect.any(String), detail: expect.any(String) }),
        fields: [],
      });
      expect(outcome.notFound.problem.error_code).toBe(outcome.notFound.errorCode);
      expect(outcome.invalid).toEqual(
        expect.objectContaining({ status: 400, errorCode: 'validation_failed', fields: ['page_size'] }),
      );
      expect(outcome.invalid.problem).toEqual(
        expect.objectContaining({
          error_code: 'validation_failed',
          request_id: outcome.invalid.requestId,
          errors: [expect.objectContaining({ field: 'page_size' })],
        }),
      );
    },
  );
});
