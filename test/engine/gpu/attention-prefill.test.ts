/**
 * Prefill attention (attention-prefill.wgsl: tiles of PREFILL_ROWS tokens of one query head, keys
 * in tiles with an online softmax) against the double-precision reference, over what its tiling
 * branches on: batches at and around the row tile, key counts at and around the key tile, a batch
 * after cached positions, narrow and wide heads, head sizes that are not whole vec4 pairs (the
 * CPU shape falls back to the GPU's), sliding windows that start inside a tile, soft-caps, sinks,
 * an encoder's bidirectional batch, F16 and F32 caches, both shapes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OpKernels, PREFILL_ROWS } from '../../../src-main/engine/gpu/ops';
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
  /** Positions cached before the batch. */
  past: number;
  tokens: number;
  kvF16?: boolean;
  cpu?: boolean;
  window?: number;
  softcap?: number;
  sinks?: boolean;
  causal?: boolean;
}

/** The kernel's output for a batch of `tokens` after `past` cached positions, and the reference's. */
async function prefill(c: Case): Promise<{ got: Float32Array; expected: Float64Array }> {
  const rng = mulberry32(3);
  const gauss = () => rng.gaussian();
  const ops = new OpKernels(ctx.device, c.kvF16 ?? true, { cpu: c.cpu });
  kernels.push(ops);
  const kvStride = c.nKvHead * c.headDim;
  const total = c.past + c.tokens;
  const k = randomF32(total * kvStride, gauss);
  const v = randomF32(total * kvStride, gauss);
  // Queries of 2σ: scores of a few units, so the softmax is far from flat.
  const q = randomF32(c.tokens * c.nHead * c.headDim, gauss, 2);
  // No rotation (nRot 0): RoPE inside attention is ops.test.ts's subject.
  const rope = { table: buffer(ctx, 16), nRot: 0, neox: false };
  const kCache = buffer(ctx, total * kvStride * ops.kvElementBytes);
  const vCache = buffer(ctx, total * kvStride * ops.kvElementBytes);
  const out = buffer(ctx, q.byteLength);
  const sinks = c.sinks ? Float32Array.from({ length: c.nHead }, (_, h) => (h % 3) * 2 - 1) : undefined;
  const scale = 1 / Math.sqrt(c.headDim);
  await run(ctx, [
    ops.storeKv({ k: buffer(ctx, k), v: buffer(ctx, v), kCache, vCache, step: makeStep(ctx, 0, total), kvStride, headDim: c.headDim, rope }),
    ops.attention({
      q: buffer(ctx, q),
      kCache,
      vCache,
      out,
      step: makeStep(ctx, c.past, c.tokens),
      nHead: c.nHead,
      nKvHead: c.nKvHead,
      headDim: c.headDim,
      scale,
      rope,
      window: c.window,
      softcap: c.softcap,
      sinks: sinks && buffer(ctx, sinks),
      causal: c.causal,
    }),
  ]);
  const round = c.kvF16 === false ? (x: number) => x : ref.roundF16;
  const expected = ref.attention(q, Float64Array.from(k, round), Float64Array.from(v, round), {
    pos0: c.past,
    nTokens: c.tokens,
    nHead: c.nHead,
    nKvHead: c.nKvHead,
    headDim: c.headDim,
    scale,
    window: c.window,
    softcap: c.softcap,
    sinks,
    causal: c.causal,
  });
  return { got: await readF32(ctx, out, q.length), expected };
}

describe('prefill attention, tiled (tolerance 2e-5 of the output scale)', () => {
  const cases: [string, Case][] = [
    ['head 8, 2 query heads per KV head, 2 tokens', { nHead: 8, nKvHead: 4, headDim: 8, past: 0, tokens: 2 }],
    ['head 64, 4 per KV head, a row tile less a token', { nHead: 8, nKvHead: 2, headDim: 64, past: 0, tokens: PREFILL_ROWS - 1 }],
    ['head 64, 4 per KV head, a row tile and a token after 60 cached', { nHead: 8, nKvHead: 2, headDim: 64, past: 60, tokens: PREFILL_ROWS + 1 }],
    ['head 64, no GQA, 130 tokens (keys across three tiles)', { nHead: 2, nKvHead: 2, headDim: 64, past: 0, tokens: 130 }],
    ['head 12 (not whole vec4 pairs), 2 per KV head, 20 tokens after 5', { nHead: 4, nKvHead: 2, headDim: 12, past: 5, tokens: 20 }],
    ['head 128, 8 per KV head, 17 tokens after 300, F32 cache', { nHead: 8, nKvHead: 1, headDim: 128, past: 300, tokens: 17, kvF16: false }],
    ['head 256, 2 per KV head, 9 tokens after 70', { nHead: 4, nKvHead: 2, headDim: 256, past: 70, tokens: 9 }],
    ['sliding window of 20 over a 70-token batch, soft-cap 1.5', { nHead: 4, nKvHead: 2, headDim: 64, past: 0, tokens: 70, window: 20, softcap: 1.5 }],
    ['sliding window of 13 after 100 cached, 11 tokens', { nHead: 4, nKvHead: 2, headDim: 32, past: 100, tokens: 11, window: 13 }],
    ['sinks, 3 per KV head, 40 tokens after 90', { nHead: 6, nKvHead: 2, headDim: 64, past: 90, tokens: 40, sinks: true }],
    ['an encoder: every token sees the whole batch of 45', { nHead: 4, nKvHead: 4, headDim: 32, past: 0, tokens: 45, causal: false, kvF16: false }],
  ];
  for (const [name, c] of cases) {
    for (const cpu of [false, true]) {
      it(`${name}, ${cpu ? 'CPU' : 'GPU'} shape`, async () => {
        const { got, expected } = await prefill({ ...c, cpu });
        expect(scaledError(got, expected)).toBeLessThan(2e-5);
      });
    }
  }

  it('the window, the cap, the sinks and causality each change the result (the reference without them is far off)', async () => {
    const c: Case = { nHead: 4, nKvHead: 2, headDim: 64, past: 30, tokens: 20, window: 12, softcap: 1, sinks: true, cpu: true };
    const { got } = await prefill(c);
    for (const without of [{ window: 0 }, { softcap: 0 }, { sinks: false }]) {
      const { expected } = await prefill({ ...c, ...without });
      expect(scaledError(got, expected)).toBeGreaterThan(1e-2);
    }
    const encoder = await prefill({ ...c, window: 0, causal: false });
    const { expected: causal } = await prefill({ ...c, window: 0 });
    expect(scaledError(encoder.got, causal)).toBeGreaterThan(1e-2);
  });
});

describe('attention-prefill.wgsl', () => {
  it('takes the tokens a workgroup that ops.ts plans with, in both shapes', () => {
    const wgsl = readFileSync(join(REPO_ROOT, 'shaders/attention-prefill.wgsl'), 'utf8');
    const constant = (name: string) => Number(new RegExp(`const ${name}: u32 = (\\d+)u;`).exec(wgsl)?.[1]);
    expect(constant('ROWS')).toBe(PREFILL_ROWS);
    expect(constant('LANES')).toBe(PREFILL_ROWS);
  });
});
