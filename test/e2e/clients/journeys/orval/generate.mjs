// orval's Node API with its fetch client, one file (generated/api.ts). Every call goes through
// the mutator in fetcher.ts, orval's documented way to set a base URL and headers at run time;
// `extension` makes its import `../fetcher.js`, as NodeNext requires. orval 8 types a request body
// offered in several media types as the union of their schemas and, when one is binary, hands it to
// fetch unserialised: POST /v1/traces (binary OTLP/protobuf or OTLP JSON) would neither compile
// (an object is no `BodyInit`) nor send its JSON form. `contentType.exclude` leaves the protobuf
// form out, as a TypeScript client sends OTLP JSON. Run from this folder.
import { fileURLToPath } from 'node:url';
import { generate } from 'orval';

await generate({
  input: { target: fileURLToPath(new URL('../openapi.json', import.meta.url)) },
  output: {
    target: fileURLToPath(new URL('./generated/api.ts', import.meta.url)),
    client: 'fetch',
    mode: 'single',
    override: {
      contentType: { exclude: ['application/x-protobuf'] },
      mutator: { path: fileURLToPath(new URL('./fetcher.ts', import.meta.url)), name: 'customFetch', extension: '.js' },
    },
  },
});
