import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The committed SDK (sdk/typescript) is what swagger-typescript-api generates from the committed
 * docs/openapi.json. After `npm run openapi`, run `npm run sdk` and commit both.
 */
describe('SDK drift', () => {
  it('sdk/typescript matches what docs/openapi.json generates', async () => {
    const { generateSdk } = (await import(pathToFileURL(join(root, 'sdk', 'generate.mjs')).href)) as { generateSdk: () => Promise<Record<string, string>> };
    const generated = await generateSdk();
    const committed = Object.fromEntries(readdirSync(join(root, 'sdk', 'typescript')).sort().map((f) => [f, readFileSync(join(root, 'sdk', 'typescript', f), 'utf8')]));
    expect(Object.keys(committed).sort()).toEqual(Object.keys(generated).sort());
    const drifted = Object.keys(generated).filter((f) => generated[f] !== committed[f]);
    if (drifted.length) throw new Error(`sdk/typescript drifted from docs/openapi.json in ${drifted.join(', ')}: run \`npm run sdk\` and commit the result`);
    expect(drifted).toEqual([]);
  });
});
