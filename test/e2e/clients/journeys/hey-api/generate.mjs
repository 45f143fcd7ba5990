// @hey-api/openapi-ts's Node API with its fetch client (bundled into the output): the SDK
// functions, their types and the client in generated/. tsConfigPath names the project's tsconfig,
// from which it takes NodeNext and writes relative imports with `.js`. Run from this folder.
import { createClient } from '@hey-api/openapi-ts';
import { fileURLToPath } from 'node:url';

await createClient({
  input: fileURLToPath(new URL('../openapi.json', import.meta.url)),
  output: {
    path: fileURLToPath(new URL('./generated', import.meta.url)),
    tsConfigPath: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
  },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
  logs: { level: 'silent' },
});
