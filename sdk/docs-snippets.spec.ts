import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** What the snippets take as given (each may define its own instead). */
const GIVEN = `import type { EwsClient } from '@ews/sdk';
declare global {
  const client: EwsClient;
  const workspaceId: string;
  const sut_id: string;
  const connection_id: string;
  const eval_config_id: string;
  const otlpJson: string;
}
export {};
`;

/**
 * Every ```ts block of docs/sdk.md and of the package's README compiles against the package's
 * sources as a consumer's ESM module would (strict, NodeNext, lib ES2022, @types/node): the
 * documented calls are real ones.
 */
describe('SDK documentation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-docs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('shows calls that type-check against the package', () => {
    const blocks = ['docs/sdk.md', 'sdk/typescript/README.md'].flatMap((doc) =>
      [...readFileSync(join(root, doc), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({
        name: `${doc.replace(/\W/g, '_')}_${i}.mts`,
        code: m[1],
      })),
    );
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    writeFileSync(join(dir, 'given.d.mts'), GIVEN);
    for (const b of blocks) writeFileSync(join(dir, b.name), `${b.code}\nexport {};\n`);
    const program = ts.createProgram([join(dir, 'given.d.mts'), ...blocks.map((b) => join(dir, b.name))], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts'],
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
      paths: { '@ews/sdk': [join(root, 'sdk', 'typescript', 'src', 'index.ts')] },
      skipLibCheck: true,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? `${d.file.fileName.replace(dir, '')}(${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}): ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(diagnostics).toEqual([]);
  });
});
