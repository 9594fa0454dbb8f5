import { cpSync, rmSync } from 'node:fs';
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

/**
 * Copies shaders/ to out/shaders: the built engine (out/main/engine.js) reads its WGSL at run time
 * from ../shaders/ (see src-main/engine/gpu/shader-source.ts).
 */
function copyShaders(): Plugin {
  return {
    name: 'gufo:copy-shaders',
    apply: 'build',
    closeBundle() {
      rmSync(resolve('out/shaders'), { recursive: true, force: true });
      cpSync(resolve('shaders'), resolve('out/shaders'), { recursive: true });
    },
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
          // Engine entry for Electron's utilityProcess (src-main/app/engine-launcher.ts); its WGSL goes to out/shaders.
          engine: resolve('src-main/engine/index.ts'),
          // Worker thread that tokenizes large prompts off the event loop (src-main/backend/prompt-worker/index.ts).
          'prompt-worker': resolve('src-main/backend/prompt-worker/entry.ts'),
          // Worker threads that encode an export's tensors (src-main/node/quantize-worker/pool.ts).
          'quantize-worker': resolve('src-main/node/quantize-worker/entry.ts'),
        },
      },
    },
    plugins: [copyShaders()],
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
