// ESLint (flat config): typescript-eslint's type-aware rules for every TypeScript file in
// tsconfig.json, eslint-plugin-svelte for the components and the rune modules (*.svelte.ts).
// No --cache: a cached file is not linted again when a file it imports changes its types.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import svelteConfig from './svelte.config.js';

export default tseslint.config(
  {
    ignores: [
      'out/',
      'dist/',
      'node_modules/',
      'test-results/',
      'playwright-report/',
      // AssemblyScript, checked by its own compiler against its own standard library.
      'assembly/',
      // Generated: npm run build:wasm, scripts/generate-iq-tables.ts, scripts/gen-unicode-flags.mjs.
      'src-main/core/wasm/*.wasm.ts',
      'src-main/core/quants/iq-tables.ts',
      'src-main/core/tokenizer/unicode-flags-data.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  ...svelte.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        extraFileExtensions: ['.svelte'],
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its rejection: in the engine and the server that is a
      // request that never answers. Stated here so a change of preset cannot drop them.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // tsc already reports unused locals and parameters (noUnusedLocals, noUnusedParameters);
      // the `_` prefix marks the ones kept on purpose, as tsc reads it.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['src-renderer/**/*.svelte', 'src-renderer/**/*.svelte.ts'],
    languageOptions: {
      globals: { ...globals.browser },
      parserOptions: { parser: tseslint.parser, svelteConfig },
    },
  },
  {
    files: ['src-renderer/**/*.ts', 'src-preload/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Playwright reads a test's fixtures off its first parameter, which must be an object pattern, even an empty one.
    files: ['e2e/**/*.ts'],
    rules: { 'no-empty-pattern': ['error', { allowObjectPatternsAsParameters: true }] },
  },
  {
    // Plain JavaScript is outside tsconfig.json (no allowJs), so it gets the untyped rules only.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
