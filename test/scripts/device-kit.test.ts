/**
 * `npm run device:kit`: a folder that needs nothing installed (its own Node, Vulkan loader,
 * built CLI, webgpu addon and llama.cpp Vulkan build), and its run.sh measured end to end here on
 * Mesa lavapipe: a tiny random Q8_0 through `gufo bench --profile` and llama.cpp's Vulkan decode.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../src-main/engine/gpu/software-driver';
import type { KernelShapes } from '../../src-main/engine-wire/protocol';
import { REPO_ROOT } from '../support/paths';

const dir = mkdtempSync(join(tmpdir(), 'gufo-device-kit-test-'));
const kit = join(dir, 'device-kit');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One line run.sh prints (scripts/device-kit/run.mjs); Gufo's lines carry its kernels. */
interface KitLine {
  engine: string;
  depth: number;
  fileType: string;
  shape: string;
  adapter: string;
  decodeTokS: number;
  rooflineFraction: number;
  kernels?: unknown[];
  kernelShapes?: KernelShapes;
}

beforeAll(() => {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/device-kit.mjs'), '--out', kit], {
    encoding: 'utf8',
    timeout: 150_000,
  });
  expect(r.status, r.stderr).toBe(0);
}, 160_000);

describe('npm run device:kit', () => {
  it('holds its own Node, Vulkan loader, CLI and engine, webgpu addon and llama.cpp Vulkan build', () => {
    const node = spawnSync(join(kit, 'bin/node'), ['--version'], { encoding: 'utf8' });
    expect(node.stdout.trim()).toBe(process.version);
    for (const file of [
      'lib/libvulkan.so.1',
      'app/out/cli/gufo.js',
      'app/out/cli/engine.js',
      'app/out/shaders/matmul.wgsl',
      'app/bin/gufo.mjs',
      'app/node_modules/webgpu/dist/linux-x64/dawn.node',
      'app/tools/make-model.mjs',
      'run.mjs',
      'llama/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan/libggml-vulkan.so',
      'llama/llama-decode.mjs',
    ]) {
      expect(existsSync(join(kit, file)), file).toBe(true);
    }
    accessSync(join(kit, 'run.sh'), constants.X_OK);
    const versionOf = (manifest: string) => (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    expect(versionOf(join(kit, 'llama/node_modules/@node-llama-cpp/linux-x64-vulkan/package.json'))).toBe(
      versionOf(join(REPO_ROOT, 'node_modules/node-llama-cpp/package.json')),
    );
  });

  it('make-model --types: the file types KIT_TYPES=all measures, one for each weight type with GPU kernels', () => {
    const r = spawnSync(join(kit, 'bin/node'), [join(kit, 'app/tools/make-model.mjs'), '--types'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const types = r.stdout.trim().split(',');
    for (const t of [
      'F16',
      'BF16',
      'Q8_0',
      'Q6_K',
      'Q5_K_M',
      'Q5_1',
      'Q5_0',
      'Q4_K_M',
      'Q4_1',
      'Q4_0',
      'Q3_K_M',
      'Q2_K',
    ])
      expect(types, t).toContain(t);
    for (const t of ['IQ4_NL', 'IQ4_XS']) expect(types, t).toContain(t);
    // Types with no GPU kernel, or that need an importance matrix, are left out.
    for (const t of ['IQ2_XS', 'IQ1_S', 'Q2_K_S']) expect(types, t).not.toContain(t);
  });

  it('run.sh on lavapipe: one JSON line each for Gufo and llama.cpp, from an empty context and at depth, with tok/s, rooflineFraction and the adapter', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    // A bare environment: nothing from this checkout (no NODE_PATH, no GUFO_DEV); the kit runs its own node.
    const env = {
      PATH: '/usr/bin:/bin',
      HOME: process.env.HOME ?? dir,
      KIT_SHAPE: 'tiny',
      // One file type, a one-token prompt and a depth of one token: llama.cpp then runs only its
      // mat-vec pipelines, whose lavapipe compiles (an empty shader cache, as in CI) take 30 s; a
      // batch of 8 or 64 tokens adds its mat-mat pipelines, 240 s for the whole run (2026-12-07).
      KIT_TYPES: 'Q8_0',
      KIT_P: '1',
      KIT_DEPTH: '1',
      VK_ICD_FILENAMES: LAVAPIPE_ICD,
    };
    const r = spawnSync(join(kit, 'run.sh'), [], { env, encoding: 'utf8', timeout: 400_000 });
    console.log(r.stdout);
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as KitLine);
    expect(lines.map((l) => [l.engine, l.depth])).toEqual([
      ['gufo', 0],
      ['llama.cpp-vulkan', 0],
      ['gufo', 1],
      ['llama.cpp-vulkan', 1],
    ]);
    for (const line of lines) {
      expect(line, line.engine).toMatchObject({ fileType: 'Q8_0', shape: 'tiny', promptTokens: 1 });
      expect(line.adapter, line.engine).toMatch(/llvmpipe/);
      expect(line.decodeTokS, line.engine).toBeGreaterThan(0);
      expect(line.rooflineFraction, line.engine).toBeGreaterThan(0);
    }
    expect(lines[0]!.kernels?.length).toBeGreaterThan(0);
    // lavapipe: the CPU adapters' shapes, a workgroup of its 8 lanes, the batched mat-vec not loaded (one slot).
    expect(lines[0]!.kernelShapes).toMatchObject({ family: 'cpu', matvec: { workgroup: 8 }, batchTokens: 0 });
  }, 420_000);
});
