/**
 * The kernels a GPU user's machine runs, on Mesa lavapipe: GUFO_KERNEL_SHAPE=gpu makes the
 * software adapter take the GPU's kernel shapes (64 threads sharing rows, subgroup reductions,
 * matmat-tiled.wgsl's prefill, weights as stored) with shader-f16, a combination neither
 * SwiftShader (no f16) nor lavapipe's own default (the CPU shapes) reaches.
 * LP_NATIVE_VECTOR_WIDTH sets lavapipe's subgroup width (128/256/512/1024 bits: 4/8/16/32
 * lanes); GUFO_SUBGROUPS=0 opens the device without subgroups (the shared-memory reductions).
 *
 * Each configuration runs gpu-shapes-child.ts in its own process (the Vulkan driver reads those
 * variables once): decode mat-vec and prefill mat-mat against the bit-exact CPU decoders, with
 * one-hot x (bit for bit) and random x (1e-5 of Σ|w||x|), on blocks with ordinary and with
 * f16-subnormal scales; and the integer mat-vec (Q4_K, Q6_K, Q8_0: one of each step) against the
 * f64 product with x as llama.cpp's q8_1 (as matvec-int-dot.test.ts does for every such type). lavapipe compiles pipelines slowly, the more so the wider (every GPU type,
 * cold: 26 s at 4 lanes, 57 s at 8, about 110 s at 16 on a 2-core machine), so the full type list
 * runs at 4 lanes and the other configurations one type each. What they add is the mat-vec's
 * reduction across its 64 threads (matmul.wgsl; the mat-mat, matmat-tiled.wgsl, has none), the
 * same code for every type: 16 lanes, subgroupAdd over wider subgroups and fewer of them to sum;
 * no subgroups, the shared-memory tree. Both run Q8_0, whose kernels compile in about a third of
 * Q4_K's time (16 lanes), with its f16-subnormal-scale copy. Every type at 16 lanes:
 *   VK_ICD_FILENAMES=<lavapipe> GUFO_KERNEL_SHAPE=gpu LP_NATIVE_VECTOR_WIDTH=512 node --import tsx test/engine/gpu/gpu-shapes-child.ts
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../../src-main/engine/gpu/software-driver';

const CHILD = fileURLToPath(new URL('./gpu-shapes-child.ts', import.meta.url));

interface ChildResult {
  info: {
    name: string;
    cpuShapes: boolean;
    hasF16: boolean;
    subgroups: boolean;
    subgroupMinSize: number;
    subgroupMaxSize: number;
    prefill: string;
    intDot: boolean;
  };
  failures: string[];
  checks: number;
}

function runChild(env: Record<string, string>): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      // Mesa's shader cache seems not to tell lavapipe's vector widths apart (a 4-lane run after a
      // 16-lane one found all its pipelines cached): each run compiles afresh.
      env: {
        ...process.env,
        VK_ICD_FILENAMES: LAVAPIPE_ICD,
        GUFO_KERNEL_SHAPE: 'gpu',
        MESA_SHADER_CACHE_DISABLE: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) reject(new Error(`gpu-shapes-child exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

const CONFIGS = [
  { label: '4 lanes, subgroups, every GPU type', env: { LP_NATIVE_VECTOR_WIDTH: '128' }, lanes: 4, subgroups: true },
  {
    label: '16 lanes, subgroups, Q8_0',
    // The integer steps reduce as the float ones do: the 4-lane and no-subgroup runs check them.
    env: { LP_NATIVE_VECTOR_WIDTH: '512', GUFO_TEST_TYPES: 'Q8_0', GUFO_TEST_INT_TYPES: '' },
    lanes: 16,
    subgroups: true,
  },
  {
    label: 'no subgroups, Q8_0',
    env: { LP_NATIVE_VECTOR_WIDTH: '128', GUFO_SUBGROUPS: '0', GUFO_TEST_TYPES: 'Q8_0' },
    lanes: 4,
    subgroups: false,
  },
] as const;

describe('GPU kernel shapes on lavapipe with shader-f16 (GUFO_KERNEL_SHAPE=gpu)', () => {
  it('lavapipe is installed', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
  });

  it.each(CONFIGS)(
    '$label: mat-vec and mat-mat equal the CPU decoders',
    async ({ env, lanes, subgroups }) => {
      expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
      const r = await runChild(env);
      console.log(
        `${r.info.name}: ${r.checks} checks, subgroups ${r.info.subgroups} (${r.info.subgroupMinSize}–${r.info.subgroupMaxSize} lanes), prefill ${r.info.prefill}`,
      );
      expect(r.info.name).toMatch(/llvmpipe/);
      expect(r.info).toMatchObject({
        cpuShapes: false,
        hasF16: true,
        subgroups,
        subgroupMinSize: lanes,
        subgroupMaxSize: lanes,
        prefill: 'wgtiled',
        intDot: true,
      });
      expect(r.failures).toEqual([]);
      expect(r.checks).toBeGreaterThan(0);
    },
    600_000,
  );
});
