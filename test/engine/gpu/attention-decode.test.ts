/**
 * Decode attention (attention-decode.wgsl: the keys of one token split across workgroups, then
 * merged) against the double-precision reference, over the shapes its lane mapping branches on:
 * narrow and wide heads, query-head groups above and below a workgroup's block, key counts at and
 * around tile and split edges, the CPU and GPU shapes and split policies, sliding windows,
 * soft-caps and sinks, F16 and F32 caches.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DECODE_CPU_LANES, DECODE_HEAD_BLOCK, DECODE_QUERY_FLOATS, OpKernels } from '../../../src-main/engine/gpu/ops';
import { mulberry32, randomF32 } from '../../support/random';
import { REPO_ROOT } from '../../support/paths';
import { buffer, makeStep, readF32, run, scaledError, testGpu } from '../gpu-harness';
import * as ref from '../reference';

const ctx = await testGpu();
const kernels: OpKernels[] = [];
afterAll(() => kernels.forEach((k) => k.destroy()));

interface Case {
  nHead: number;
  nKvHead: number;
  headDim: number;
  /** Keys before the token; the token itself is key `past`. */
  past: number;
  kvF16?: boolean;
  /** The CPU adapters' shape and split policy. */
  cpu?: boolean;
  window?: number;
  softcap?: number;
  sinks?: boolean;
}

/** The kernel's output for one token at position `past`, and the reference's (the same inputs for the same shape). */
async function decode(c: Case): Promise<{ got: Float32Array; expected: Float64Array }> {
  const rng = mulberry32(27);
  const gauss = () => rng.gaussian();
  const ops = new OpKernels(ctx.device, c.kvF16 ?? true, { cpu: c.cpu });
  kernels.push(ops);
  const kvStride = c.nKvHead * c.headDim;
  const total = c.past + 1;
  const k = randomF32(total * kvStride, gauss);
  const v = randomF32(total * kvStride, gauss);
  // Queries of 2σ: scores of a few units, so the softmax is far from flat.
  const q = randomF32(c.nHead * c.headDim, gauss, 2);
  // No rotation (nRot 0): RoPE inside attention is ops.test.ts's subject.
  const rope = { table: buffer(ctx, 16), nRot: 0, neox: false };
  const kCache = buffer(ctx, total * kvStride * ops.kvElementBytes);
  const vCache = buffer(ctx, total * kvStride * ops.kvElementBytes);
  const out = buffer(ctx, q.byteLength);
  const sinks = c.sinks ? Float32Array.from({ length: c.nHead }, (_, h) => (h % 3) * 2 - 1) : undefined;
  const scale = 1 / Math.sqrt(c.headDim);
  const step = makeStep(ctx, c.past, 1);
  await run(ctx, [
    ops.storeKv({ k: buffer(ctx, k), v: buffer(ctx, v), kCache, vCache, step: makeStep(ctx, 0, total), kvStride, headDim: c.headDim, rope }),
    ops.attention({ q: buffer(ctx, q), kCache, vCache, out, step, nHead: c.nHead, nKvHead: c.nKvHead, headDim: c.headDim, scale, rope, window: c.window, softcap: c.softcap, sinks: sinks && buffer(ctx, sinks) }),
  ]);
  const round = c.kvF16 === false ? (x: number) => x : ref.roundF16;
  const expected = ref.attention(q, Float64Array.from(k, round), Float64Array.from(v, round), {
    pos0: c.past, nTokens: 1, nHead: c.nHead, nKvHead: c.nKvHead, headDim: c.headDim, scale, window: c.window, softcap: c.softcap, sinks,
  });
  return { got: await readF32(ctx, out, q.length), expected };
}

describe('decode attention, split across workgroups (tolerance 2e-5 of the output scale)', () => {
  const cases: [string, Case][] = [
    ['head 8, 2 query heads per KV head, first token', { nHead: 8, nKvHead: 4, headDim: 8, past: 0 }],
    ['head 64, 4 per KV head, one tile less a key', { nHead: 16, nKvHead: 4, headDim: 64, past: 126 }],
    ['head 64, 4 per KV head, one tile and a key', { nHead: 16, nKvHead: 4, headDim: 64, past: 128 }],
    ['head 12 (not whole vec4 pairs), 2 per KV head', { nHead: 4, nKvHead: 2, headDim: 12, past: 40 }],
    ['head 128, 8 per KV head, 1000 keys over many splits', { nHead: 16, nKvHead: 2, headDim: 128, past: 999 }],
    ['head 128, 16 per KV head (two blocks of 8), F32 cache', { nHead: 16, nKvHead: 1, headDim: 128, past: 300, kvF16: false }],
    ['head 256, 6 per KV head (blocks of 4), 2 pairs a lane', { nHead: 12, nKvHead: 2, headDim: 256, past: 260 }],
    ['head 32, no GQA, 2000 keys', { nHead: 4, nKvHead: 4, headDim: 32, past: 1999 }],
    ['sliding window of 100 over 700 keys, soft-cap 1.5', { nHead: 8, nKvHead: 2, headDim: 64, past: 699, window: 100, softcap: 1.5 }],
    ['sinks, 500 keys, 3 query heads per KV head', { nHead: 6, nKvHead: 2, headDim: 64, past: 499, sinks: true }],
  ];
  for (const [name, c] of cases) {
    // Both shapes on every adapter: the GPU shape's workgroup-memory tiles, and the CPU shape's lanes
    // (a head size that is not a multiple of 8 falls back to the GPU shape there).
    for (const cpu of [false, true]) {
      it(`${name}, ${cpu ? 'CPU' : 'GPU'} shape`, async () => {
        const { got, expected } = await decode({ ...c, cpu });
        expect(scaledError(got, expected)).toBeLessThan(2e-5);
      });
    }
  }

  it('the window, the cap and the sinks each change the result (the reference without them is far off)', async () => {
    const c: Case = { nHead: 4, nKvHead: 2, headDim: 64, past: 299, window: 40, softcap: 1, sinks: true, cpu: true };
    const { got } = await decode(c);
    for (const without of [{ window: 0 }, { softcap: 0 }, { sinks: false }]) {
      const { expected } = await decode({ ...c, ...without });
      expect(scaledError(got, expected)).toBeGreaterThan(1e-2);
    }
  });
});

describe('attention-decode.wgsl', () => {
  it('has the head block, query and lane counts ops.ts plans with', () => {
    const wgsl = readFileSync(join(REPO_ROOT, 'shaders/attention-decode.wgsl'), 'utf8');
    const constant = (name: string) => Number(new RegExp(`const ${name}: u32 = (\\d+)u;`).exec(wgsl)?.[1]);
    expect(constant('MAX_HB')).toBe(DECODE_HEAD_BLOCK);
    expect(constant('MAX_Q')).toBe(DECODE_QUERY_FLOATS);
    expect(constant('LANES')).toBe(DECODE_CPU_LANES);
  });
});
