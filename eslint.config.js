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
