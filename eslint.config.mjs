// ESLint (flat config): correctness rules that the code passes, the import borders of
// docs/architecture.md#which-room, and a file length limit. Syntax only (no type information),
// so it lints the whole tree in seconds; `npm run lint`, and `npm test` runs it first.
// Formatting is Prettier's (`npm run format`), not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Import patterns that reach the application (src/) from wherever a file in libs/ sits. */
const SRC_FROM_LIBS = ['**/src/*', '**/src/**'];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'sdk/typescript/**',
      'test/e2e/clients/journeys/**',
      'examples/**',
      'data/**',
      '**/*.d.ts',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The codebase's own conventions, in place before the linter came.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true, varsIgnorePattern: '^_' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-control-regex': 'off',
      'max-lines': ['error', { max: 800, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Libraries serve the application; they never import it (layering.spec.ts checks the same).
    files: ['libs/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: SRC_FROM_LIBS,
              message:
                'libs/ never import src/: hand what a library needs over to it (docs/architecture.md#which-room).',
            },
          ],
        },
      ],
    },
  },
  {
    // HTTP belongs to controllers (and the HTTP plumbing of libs/common and libs/auth); types may travel.
    files: ['src/modules/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.controller.ts', 'libs/common/**', 'libs/auth/**', 'libs/queue/**/*accepted*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'express',
              allowTypeImports: true,
              message: 'Only controllers know HTTP (docs/architecture.md#layers-and-their-rules).',
            },
          ],
          patterns: [{ group: SRC_FROM_LIBS, message: 'libs/ never import src/.' }],
        },
      ],
    },
  },
  {
    // Queries belong to repositories: typeorm values only in repositories, entities, migrations and libs/database.
    files: ['src/**/*.ts', 'libs/**/*.ts'],
    ignores: [
      '**/*.repository.ts',
      '**/*.entity.ts',
      'src/database/migrations/**',
      'libs/database/**',
      'libs/queue/**/*repository.ts',
      'libs/queue/**/*store.ts',
      '**/*.spec.ts',
      '**/*.controller.ts',
      'libs/common/**',
      'libs/auth/**',
      'libs/queue/**/*accepted*.ts',
      'src/bootstrap.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'typeorm',
              allowTypeImports: true,
              message:
                'Only repositories, entities and migrations use typeorm values (docs/architecture.md#layers-and-their-rules).',
            },
            {
              name: 'express',
              allowTypeImports: true,
              message: 'Only controllers know HTTP (docs/architecture.md#layers-and-their-rules).',
            },
          ],
          patterns: [{ group: SRC_FROM_LIBS, message: 'libs/ never import src/.' }],
        },
      ],
    },
  },
);
