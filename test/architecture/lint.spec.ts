import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

interface LintResult {
  filePath: string;
  messages: Array<{ ruleId: string | null; line: number; message: string }>;
}

/**
 * ESLint (eslint.config.mjs: correctness, the import borders, files of at most 800 lines) and
 * Prettier (.prettierrc) over the whole tree, as part of `npm test`; `npm run lint` and
 * `npm run format:check` are the same runs for a terminal (`npm run format` rewrites). Cached
 * by content under node_modules/.cache, so a run after a small change lints that change only.
 */
describe('lint', () => {
  it('eslint reports nothing', () => {
    const run = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'),
        '.',
        '--cache',
        '--cache-strategy',
        'content',
        '--cache-location',
        'node_modules/.cache/eslint/',
        '--format',
        'json',
      ],
      { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.status !== 0 && run.status !== 1)
      throw new Error(`eslint failed to run (exit ${run.status}): ${run.stderr}`);
    const problems = (JSON.parse(run.stdout) as LintResult[]).flatMap((file) =>
      file.messages.map((m) => `${file.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId ?? ''} ${m.message}`),
    );
    expect(problems).toEqual([]);
    expect(run.status).toBe(0);
  }, 300_000);

  it('the rules fail on planted violations: libs importing src (relatively or as #src), HTTP or typeorm values outside their rooms, a long file', () => {
    const planted: Array<[string, string]> = [
      [
        'libs/queue/planted.ts',
        "import { AppConfig } from '../../src/config/app-config.js';\nexport const c = AppConfig;\n",
      ],
      [
        'libs/queue/planted-subpath.ts',
        "import { AppConfig } from '#src/config/app-config.js';\nexport const c = AppConfig;\n",
      ],
      [
        'libs/common/planted-type.ts',
        "import type { AppModule } from '#src/app.module.js';\nexport type M = AppModule;\n",
      ],
      ['src/modules/runs/planted.service.ts', "import express from 'express';\nexport const e = express;\n"],
      [
        'src/modules/runs/planted-types.service.ts',
        "import type { Request } from 'express';\nimport type { DataSource } from 'typeorm';\nexport type R = [Request, DataSource];\n",
      ],
      ['src/modules/runs/planted-query.service.ts', "import { In } from 'typeorm';\nexport const i = In;\n"],
      ['src/modules/runs/planted.repository.ts', "import { In } from 'typeorm';\nexport const i = In;\n"],
      ['libs/traces/planted-long.ts', 'export const line = 1;\n'.repeat(801)],
    ];
    // One process lints every planted text under its would-be path (nothing is written).
    const script = `
      import { ESLint } from 'eslint';
      const eslint = new ESLint({ cwd: process.cwd() });
      const out = {};
      for (const [path, text] of JSON.parse(process.argv[1])) {
        const [result] = await eslint.lintText(text, { filePath: path });
        out[path] = result.messages.map((m) => m.ruleId);
      }
      console.log(JSON.stringify(out));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(planted)], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      'libs/queue/planted.ts': ['@typescript-eslint/no-restricted-imports'],
      'libs/queue/planted-subpath.ts': ['@typescript-eslint/no-restricted-imports'],
      'libs/common/planted-type.ts': ['@typescript-eslint/no-restricted-imports'],
      'src/modules/runs/planted.service.ts': ['@typescript-eslint/no-restricted-imports'],
      'src/modules/runs/planted-types.service.ts': [],
      'src/modules/runs/planted-query.service.ts': ['@typescript-eslint/no-restricted-imports'],
      'src/modules/runs/planted.repository.ts': [],
      'libs/traces/planted-long.ts': ['max-lines'],
    });
  }, 120_000);

  it('every file is as Prettier writes it (.prettierrc: 120 columns), and a file it would change is named', () => {
    const prettier = join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
    const check = (args: string[], input?: string) =>
      spawnSync(process.execPath, [prettier, ...args], {
        cwd: root,
        encoding: 'utf8',
        input,
        maxBuffer: 64 * 1024 * 1024,
      });
    const run = check([
      '--check',
      '.',
      '--cache',
      '--cache-location',
      'node_modules/.cache/prettier/.cache',
      '--log-level',
      'warn',
    ]);
    expect(run.stderr + run.stdout).toBe('');
    expect(run.status).toBe(0);
    // The same check fails on a text Prettier would rewrite (a line past 120 columns).
    const planted = check(
      ['--check', '--stdin-filepath', 'libs/queue/planted.ts'],
      `export const x = [${'1, '.repeat(60)}1];\n`,
    );
    expect(planted.status).toBe(1);
  }, 300_000);
});
