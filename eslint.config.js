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
      // An async function that implements a Promise-returning API (the contract, the engine
      // host) turns a throw into a rejection, which its callers handle; dropping `async` where
      // nothing is awaited would make those throws synchronous.
      '@typescript-eslint/require-await': 'off',
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
    // eslint-plugin-svelte cannot type a markup expression from the child component's props (an
    // event handler's parameter, an {@attach} node reads as any); svelte-check types the markup
    // with --fail-on-warnings in npm run typecheck.
    files: ['src-renderer/**/*.svelte'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['src-renderer/**/*.ts', 'src-preload/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['test/**/*.ts', 'e2e/**/*.ts'],
    rules: {
      // Tests parse the CLI's and the servers' JSON (JSON.parse: any) and check its shape with expect().
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes implement async interfaces with bodies that have nothing to wait for.
      '@typescript-eslint/require-await': 'off',
    },
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
