/**
 * Generates the typed part of the TypeScript SDK package (sdk/typescript) from
 * docs/openapi.json with swagger-typescript-api (npm run sdk): src/generated/api.ts, sdk.json
 * (what GET /sdk/versions reports) and the version in package.json. The rest of the package
 * (src/client.ts and its helpers, tsconfigs, README) is written by hand. `generateSdk()`
 * answers the generated files without writing them: the drift test compares them with the
 * committed ones.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApi } from 'swagger-typescript-api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SDK_DIR = join(root, 'sdk', 'typescript');
export const OPENAPI_PATH = join(root, 'docs', 'openapi.json');
/** The folder `npm run sdk` owns inside the package: replaced whole on every run. */
export const GENERATED_DIR = 'src/generated';

/**
 * The generator's fetch client names two DOM-only types. The SDK compiles with lib ES2022 and
 * the fetch types of @types/node (undici), where neither exists as the template expects, so
 * each is replaced by what it means; a template change that moves them fails here.
 */
const DOM_FREE = [
  // `Body` is the DOM mixin behind Response; the formats are its body readers.
  [
    'export type ResponseFormat = keyof Omit<Body, "body" | "bodyUsed">;',
    'export type ResponseFormat = "arrayBuffer" | "blob" | "formData" | "json" | "text";',
  ],
  // undici's Response#json() answers Promise<unknown> (the DOM's answers any).
  ['await responseToParse[responseFormat]()', 'await (responseToParse[responseFormat]() as Promise<any>)'],
];

function domFree(source) {
  let out = source;
  for (const [from, to] of DOM_FREE) {
    const count = out.split(from).length - 1;
    if (count !== 1)
      throw new Error(
        `sdk/generate.mjs: expected "${from}" once in the generated client, found it ${count} times; update DOM_FREE`,
      );
    out = out.replace(from, to);
  }
  return out;
}

const countOperations = (spec) =>
  Object.values(spec.paths ?? {}).reduce(
    (n, item) => n + Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length,
    0,
  );

/** The generated files: path (relative to sdk/typescript) -> content. */
export async function generateSdk(openapiPath = OPENAPI_PATH) {
  const spec = JSON.parse(readFileSync(openapiPath, 'utf8'));
  const version = spec.info?.version ?? '0.0.0';
  const { files } = await generateApi({
    spec,
    output: false,
    fileName: 'api.ts',
    httpClientType: 'fetch',
    generateClient: true,
    generateResponses: true,
    extractRequestParams: true,
    extractRequestBody: true,
    unwrapResponseData: true,
    sortTypes: true,
    sortRoutes: true,
    silent: true,
    apiClassName: 'EvaluationWorkspaceClient',
  });
  const out = {};
  const header = `/* Evaluation Workspace Service client ${version}: generated from docs/openapi.json by swagger-typescript-api (npm run sdk). Do not edit. */\n`;
  for (const f of files) out[`${GENERATED_DIR}/${f.fileName}${f.fileExtension}`] = header + domFree(f.fileContent);
  out['sdk.json'] =
    `${JSON.stringify({ version, api_title: spec.info?.title ?? '', generator: 'swagger-typescript-api', operations: countOperations(spec) }, null, 2)}\n`;
  // The package's version is the service's (the OpenAPI document's info.version).
  const pkg = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8'));
  out['package.json'] = `${JSON.stringify({ ...pkg, version }, null, 2)}\n`;
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await generateSdk();
  rmSync(join(SDK_DIR, GENERATED_DIR), { recursive: true, force: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(SDK_DIR, path)), { recursive: true });
    writeFileSync(join(SDK_DIR, path), content);
  }
  console.log(`wrote ${Object.keys(files).length} files to ${SDK_DIR}`);
}
