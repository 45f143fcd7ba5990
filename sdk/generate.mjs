/**
 * Generates the typed TypeScript client in sdk/typescript/ from docs/openapi.json with
 * swagger-typescript-api (npm run sdk). `generateSdk(openapiPath)` answers the files without
 * writing them: the drift test compares them with the committed ones.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApi } from 'swagger-typescript-api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SDK_DIR = join(root, 'sdk', 'typescript');
export const OPENAPI_PATH = join(root, 'docs', 'openapi.json');

/** The generated files: path (relative to sdk/typescript) -> content. */
export async function generateSdk(openapiPath = OPENAPI_PATH) {
  const spec = JSON.parse(readFileSync(openapiPath, 'utf8'));
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
  for (const f of files) out[`${f.fileName}${f.fileExtension}`] = f.fileContent;
  out['index.ts'] = `/** Evaluation Workspace Service client ${spec.info?.version ?? ''}, generated from its OpenAPI document by swagger-typescript-api (npm run sdk). */\nexport * from './api';\n`;
  out['sdk.json'] = `${JSON.stringify({ version: spec.info?.version ?? '0.0.0', api_title: spec.info?.title ?? '', generator: 'swagger-typescript-api', operations: Object.values(spec.paths ?? {}).reduce((n, item) => n + Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length, 0) }, null, 2)}\n`;
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await generateSdk();
  rmSync(SDK_DIR, { recursive: true, force: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(SDK_DIR, path)), { recursive: true });
    writeFileSync(join(SDK_DIR, path), content);
  }
  console.log(`wrote ${Object.keys(files).length} files to ${SDK_DIR}`);
}
