// orval's Node API with its fetch client, one file (generated/api.ts). Every call goes through
// the mutator in fetcher.ts, orval's documented way to set a base URL and headers at run time;
// `extension` makes its import `../fetcher.js`, as NodeNext requires. Run from this folder.
import { fileURLToPath } from 'node:url';
import { generate } from 'orval';

await generate({
  input: { target: fileURLToPath(new URL('../openapi.json', import.meta.url)) },
  output: {
    target: fileURLToPath(new URL('./generated/api.ts', import.meta.url)),
    client: 'fetch',
    mode: 'single',
    override: {
      mutator: { path: fileURLToPath(new URL('./fetcher.ts', import.meta.url)), name: 'customFetch', extension: '.js' },
    },
  },
});
