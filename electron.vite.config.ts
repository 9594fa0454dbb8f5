import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import type { Plugin } from 'vite';
import { CSP_META } from './src-main/node/csp';

/**
 * Adds the CSP `<meta>` tag to the built page only: the dev server injects component styles
 * inline (hot reload), which a strict policy would block.
 */
function cspMetaTag(): Plugin {
  return {
    name: 'gufo:csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      {
        tag: 'meta',
        attrs: { 'http-equiv': 'Content-Security-Policy', content: CSP_META },
        injectTo: 'head-prepend',
      },
    ],
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rolldownOptions: {
        input: {
          // Electron main process (package.json "main": out/main/index.js).
          index: resolve('src-main/app/index.ts'),
          // Engine entry for Electron's utilityProcess (nothing spawns it yet; see src-main/engine).
          engine: resolve('src-main/engine/index.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // Sandboxed preloads cannot be ES modules; `.cjs` because package.json says "type": "module".
      lib: { entry: resolve('src-preload/index.ts'), formats: ['cjs'], fileName: () => 'index.cjs' },
    },
  },
  renderer: {
    root: 'src-renderer',
    build: {
      outDir: 'out/renderer',
      rolldownOptions: { input: resolve('src-renderer/index.html') },
    },
    plugins: [svelte({ configFile: resolve('svelte.config.js') }), cspMetaTag()],
  },
});
