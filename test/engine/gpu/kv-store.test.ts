/**
 * Quantized KV caches (kv-quant.wgsl): store_kv_quant writes the blocks the CPU encoder (tested
 * bit-exact against llama.cpp's ggml_quantize_chunk) writes, byte for byte, over values that
 * reach ties, signed maxima, zero blocks and subnormal f16 scales, with batches that start and end
 * inside a group of two blocks (heads of an odd number of blocks).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { KvCacheType } from '../../../src-preload/api/kv-cache';
import { OpKernels } from '../../../src-main/engine/gpu/ops';
import { mulberry32 } from '../../support/random';
import { buffer, makeStep, readU32, run, testGpu } from '../gpu-harness';
import { ggmlBlocks, gpuCacheBlocks, hadamardF32 } from './kv-cache-codec';

const ctx = await testGpu();
const kernels: OpKernels[] = [];
afterAll(() => kernels.forEach((k) => k.destroy()));

/** Blocks of 32 values of many magnitudes (subnormal f16 scales among them), with exact ties and zero blocks. */
function values(n: number, seed: number): Float32Array {
  const rng = mulberry32(seed);
  const x = new Float32Array(n);
  for (let b = 0; b < n / 32; b++) {
    const scale = 10 ** (rng.next() * 8 - 6);
    const kind = b % 5;
    for (let j = 0; j < 32; j++) {
      const i = b * 32 + j;
      if (kind === 0) x[i] = 0;
      // A maximum of 127/8 makes q8_0's d 1/8, so x / d of x = (n + 1/2)/8 is a tie to round away from zero.
      else if (kind === 1)
        x[i] = j === 3 ? -127 / 8 : (Math.max(-120, Math.min(120, Math.round(rng.gaussian() * 40))) + 0.5) / 8;
      else if (kind === 2) x[i] = j === 7 ? -127 * scale : j === 9 ? 127 * scale : rng.gaussian() * scale * 30;
      else x[i] = rng.gaussian() * scale;
    }
  }
  return x;
}

describe('store_kv_quant writes llama.cpp blocks, byte for byte', () => {
  const shapes = [
    { name: '2 KV heads of 64, one batch of 40', nKvHead: 2, headDim: 64, batches: [40] },
    {
      name: 'a KV head of 96 (3 blocks: groups across rows), batches of 5, 6 and 1',
      nKvHead: 1,
      headDim: 96,
      batches: [5, 6, 1],
    },
  ];
  const types: [KvCacheType, KvCacheType][] = [
    ['q8_0', 'q4_0'],
    ['q4_0', 'q8_0'],
  ];
  for (const s of shapes) {
    for (const [k, v] of types) {
      it(`${s.name}: K ${k}, V ${v}`, async () => {
        const ops = new OpKernels(ctx.device, { k, v });
        kernels.push(ops);
        const kvStride = s.nKvHead * s.headDim;
        const total = s.batches.reduce((a, b) => a + b, 0);
        const kAll = values(total * kvStride, 1);
        const vAll = values(total * kvStride, 2);
        const kCache = buffer(ctx, ops.kvCacheBytes('k', total, kvStride));
        const vCache = buffer(ctx, ops.kvCacheBytes('v', total, kvStride));
        // No rotation: the CPU encoder sees the very values store_kv quantizes.
        const rope = { table: buffer(ctx, 16), nRot: 0, neox: false };
        let pos = 0;
        for (const n of s.batches) {
          const rows = (x: Float32Array) => buffer(ctx, x.slice(pos * kvStride, (pos + n) * kvStride));
          await run(ctx, [
            ops.storeKv({
              k: rows(kAll),
              v: rows(vAll),
              kCache,
              vCache,
              step: makeStep(ctx, pos, n),
              kvStride,
              headDim: s.headDim,
              rope,
            }),
          ]);
          pos += n;
        }
        const blocks = async (type: KvCacheType, cache: GPUBuffer) =>
          gpuCacheBlocks(type as 'q8_0' | 'q4_0', await readU32(ctx, cache, cache.size / 4), total * kvStride);
        // Heads of 64 are rotated first (llama.cpp's attention rotation), the same sums in the same order.
        const rot = ops.kvRotation(s.headDim);
        const rotated = (x: Float32Array, n: number) => (n ? hadamardF32(x, n) : x);
        expect(await blocks(k, kCache)).toEqual(ggmlBlocks(k, rotated(kAll, rot.K_ROT), kvStride));
        expect(await blocks(v, vCache)).toEqual(ggmlBlocks(v, rotated(vAll, rot.V_ROT), kvStride));
      });
    }
  }
});
