// Builds the `gufo` CLI and the engine process it forks from the TypeScript sources, so neither
// needs tsx at run time: out/cli/gufo.js (run by bin/gufo.mjs), out/cli/engine.js (forked by
// src-main/engine-wire/host.ts), out/cli/prompt-worker.js and out/cli/quantize-worker.js (worker threads), with shaders/ copied to out/shaders, where every built engine reads
// its WGSL (src-main/engine/gpu/shader-source.ts). Run by `prepare` (npm install, npm ci) and by
// `npm run build`; it takes about a second.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// esbuild is a devDependency: an install that leaves them out gets no CLI build, and is told why.
const { build } = await import('esbuild').catch(() => {
  console.error('build-cli: esbuild is not installed (a devDependency): run `npm install` with devDependencies');
  process.exit(1);
});
const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'out/cli');

rmSync(outdir, { recursive: true, force: true });
// esbuild has printed what failed and where: no stack trace on top.
await build({
  absWorkingDir: root,
  entryPoints: {
    gufo: 'src-main/cli/main.ts',
    engine: 'src-main/engine/index.ts',
    'prompt-worker': 'src-main/backend/prompt-worker/entry.ts',
    'quantize-worker': 'src-main/node/quantize-worker/entry.ts',
  },
  outdir,
  bundle: true,
  // Each command is its own chunk, imported when it runs (src-main/cli/command-list.ts).
  splitting: true,
  // Flat, so every built file sits in out/cli/: the paths the sources find from import.meta rely on it.
  chunkNames: '[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Packages (native addons among them) load from node_modules, as they do from the sources.
  packages: 'external',
  logLevel: 'warning',
}).catch(() => process.exit(1));
rmSync(join(root, 'out/shaders'), { recursive: true, force: true });
cpSync(join(root, 'shaders'), join(root, 'out/shaders'), { recursive: true });
