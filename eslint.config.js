// ESLint 9 flat config: eslint's and typescript-eslint's recommended rules, type-aware
// (so no-floating-promises sees every unhandled promise). `npm run lint` runs it with prettier --check.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', 'bench/results/', 'src/types/gen/', 'test/fixtures/evnode-proto/gen/'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // tsconfig.json covers cli, commands, src, test, bench and scripts; the root config files stand alone.
        projectService: { allowDefaultProject: ['*.js', '*.ts', 'bin/*.js', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // async without await implements Promise-returning interfaces (executors, Connect services, doctor checks): a throw stays a rejection.
      '@typescript-eslint/require-await': 'off',
      // As tsc's noUnusedLocals/noUnusedParameters: a leading _ or a rest sibling marks a name left unused on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // An AbortSignal's reason (typed any) and a caught error (unknown) are passed on as the rejection, as Node's own APIs do.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests read JSON answers (fetch, JSON-RPC, log lines) as `any` and check their shape with expect: a wrong shape fails the test.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The few plain-JS entry points run under Node alone, and JSON.parse's `any` has no annotation to narrow it.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', URL: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
