import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../../utils/sdk-package.js';

const SDK = join(repoRoot, 'sdk', 'typescript');

/**
 * The generated part of the committed SDK package (sdk/typescript: src/generated/, sdk.json and
 * the version in package.json) is what swagger-typescript-api generates from the committed
 * docs/openapi.json. After `npm run openapi`, run `npm run sdk` and commit both.
 */
describe('SDK drift', () => {
  it('sdk/typescript matches what docs/openapi.json generates', async () => {
    const { generateSdk, GENERATED_DIR } = (await import(
      pathToFileURL(join(repoRoot, 'sdk', 'generate.mjs')).href
    )) as { generateSdk: () => Promise<Record<string, string>>; GENERATED_DIR: string };
    const generated = await generateSdk();
    const committedGenerated = readdirSync(join(SDK, GENERATED_DIR)).map((f) => `${GENERATED_DIR}/${f}`);
    expect(committedGenerated.sort()).toEqual(
      Object.keys(generated)
        .filter((f) => f.startsWith(`${GENERATED_DIR}/`))
        .sort(),
    );
    const drifted = Object.keys(generated).filter(
      (f) => !existsSync(join(SDK, f)) || generated[f] !== readFileSync(join(SDK, f), 'utf8'),
    );
    if (drifted.length)
      throw new Error(
        `sdk/typescript drifted from docs/openapi.json in ${drifted.join(', ')}: run \`npm run sdk\` and commit the result`,
      );
    expect(drifted).toEqual([]);
  });

  it('versions the package as the service, built by the compiler and types the service pins', () => {
    const service = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
      devDependencies: Record<string, string>;
    };
    const sdk = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      devDependencies: Record<string, string>;
      dependencies?: unknown;
    };
    expect(sdk).toEqual(expect.objectContaining({ name: '@ews/sdk', version: service.version }));
    expect(sdk.dependencies).toBeUndefined();
    for (const [name, version] of Object.entries(sdk.devDependencies))
      expect(`${name}@${version}`).toBe(`${name}@${service.devDependencies[name]}`);
  });
});
