/**
 * The engine's non-matmul kernels against plain TypeScript references (reference.ts) on random
 * inputs. Tolerances are stated per test: f32 kernels agree with double-precision references to
 * about 1e-5 relative; an F16 KV cache is compared with the reference on f16-rounded K and V.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  GREEDY,
  OpKernels,
  opKernelShapes,
  SAMPLER_OUT_WORDS,
  SAMPLER_STATE_WORDS,
  samplerPath,
  samplingParamsBytes,
  type SamplerPath,
} from '../../src-main/engine/gpu/ops';
import type { SamplingParams } from '../../src-main/engine-wire/protocol';
import type { KvCacheTypes } from '../../src-preload/api/kv-cache';
import { kvCacheBytes } from '../../src-main/core/kv-cache-types';
import { ropeTable } from '../../src-main/engine/model/rope-table';
import type { RopeParams } from '../../src-main/engine/model/hparams';
import { REPO_ROOT } from '../support/paths';
import { mulberry32, randomF32 } from '../support/random';
import {
  buffer,
  maxRelError,
  readF32,
  readU32,
  run,
  makeStep,
  scaledError,
  testGpu,
  uniformBuffer,
} from './gpu-harness';
import * as ref from './reference';

const ctx = await testGpu();
const ops = new OpKernels(ctx.device);
const rng = mulberry32(5);
const gauss = () => rng.gaussian();

afterAll(() => ops.destroy());

describe('rms_norm (tolerance 1e-5 relative)', () => {
  it('normalizes each row and multiplies by the weight', async () => {
    const n = 300;
    const rows = 5;
    const x = randomF32(n * rows, gauss, 3);
    const w = randomF32(n, gauss);
    const y = buffer(ctx, x.byteLength);
    await run(ctx, [
      ops.rmsNorm({ x: buffer(ctx, x), w: buffer(ctx, w), y, n, step: makeStep(ctx, 0, rows), eps: 1e-5 }),
    ]);
    expect(maxRelError(await readF32(ctx, y, n * rows), ref.rmsNorm(x, w, n, 1e-5))).toBeLessThan(1e-5);
  });

  it('normalizes only the last token for the output head, and works in place per head', async () => {
    const n = 64;
    const x = randomF32(n * 4, gauss);
    const w = randomF32(n * 2, gauss);
    const y = buffer(ctx, n * 4);
    await run(ctx, [
      ops.rmsNorm({
        x: buffer(ctx, x),
        w: buffer(ctx, w),
        y,
        n,
        step: makeStep(ctx, 0, 4),
        eps: 1e-6,
        lastOnly: true,
        wOffset: n,
      }),
    ]);
    const expected = ref.rmsNorm(x.slice(3 * n), w.slice(n), n, 1e-6);
    expect(maxRelError(await readF32(ctx, y, n), expected)).toBeLessThan(1e-5);

    // Per-head norm (qwen3's Q/K norm): 2 tokens of 2 heads of 64, in place.
    const xb = buffer(ctx, x);
    await run(ctx, [
      ops.rmsNorm({ x: xb, w: buffer(ctx, w), n, rowsPerToken: 2, step: makeStep(ctx, 0, 2), eps: 1e-6 }),
    ]);
    expect(maxRelError(await readF32(ctx, xb, n * 4), ref.rmsNorm(x, w, n, 1e-6))).toBeLessThan(1e-5);
  });

  it("adds the normed rows to the output with accumulate (gemma's post-norms)", async () => {
    const n = 256;
    const x = randomF32(n * 3, gauss, 2);
    const w = randomF32(n, gauss);
    const r = randomF32(n * 3, gauss);
    const y = buffer(ctx, r);
    await run(ctx, [
      ops.rmsNorm({
        x: buffer(ctx, x),
        w: buffer(ctx, w),
        y,
        n,
        step: makeStep(ctx, 0, 3),
        eps: 1e-6,
        accumulate: true,
      }),
    ]);
    const normed = ref.rmsNorm(x, w, n, 1e-6);
    // Sums may cancel to near zero: errors are measured against the largest magnitude.
    expect(
      scaledError(
        await readF32(ctx, y, n * 3),
        Float64Array.from(r, (v, i) => v + normed[i]!),
      ),
    ).toBeLessThan(1e-6);
  });
});

const plainRope = (nRot: number, neox: boolean): RopeParams => ({
  nRot,
  neox,
  freqBase: 10000,
  freqScale: 1,
  extFactor: 0,
  attnFactor: 1,
  betaFast: 32,
  betaSlow: 1,
  nCtxOrig: 4096,
});

describe('rope table', () => {
  it('gives the textbook angles (float accumulation: 2e-3 at position 500)', () => {
    const table = ropeTable(plainRope(64, false), 501);
    let worst = 0;
    for (const p of [0, 1, 7, 100, 500]) {
      for (let i = 0; i < 32; i++) {
        const a = ref.ropeAngle(p, i, 64, 10000);
        worst = Math.max(
          worst,
          Math.abs(table[(p * 32 + i) * 2]! - Math.cos(a)),
          Math.abs(table[(p * 32 + i) * 2 + 1]! - Math.sin(a)),
        );
      }
    }
    expect(worst).toBeLessThan(2e-3);
  });

  it('applies frequency factors, linear scaling and YaRN', () => {
    const factors = Float32Array.from({ length: 8 }, (_, i) => 1 + i);
    const scaled = { ...plainRope(16, true), freqScale: 0.25 };
    const t1 = ropeTable(scaled, 20, factors);
    const a = (p: number, i: number) => (0.25 * ref.ropeAngle(p, i, 16, 10000)) / (1 + i);
    expect(t1[(19 * 8 + 5) * 2]!).toBeCloseTo(Math.cos(a(19, 5)), 5);
    // YaRN: low pairs (fast rotation) extrapolate, high pairs interpolate; magnitudes scale by 1 + 0.1 ln(1/s).
    const yarn = { ...plainRope(16, true), freqScale: 0.25, extFactor: 1, nCtxOrig: 64 };
    const t2 = ropeTable(yarn, 40);
    const mscale = 1 + 0.1 * Math.log(4);
    expect(Math.hypot(t2[(39 * 8 + 3) * 2]!, t2[(39 * 8 + 3) * 2 + 1]!)).toBeCloseTo(mscale, 5);
    expect(Math.atan2(t2[(1 * 8 + 0) * 2 + 1]!, t2[(1 * 8 + 0) * 2]!)).toBeCloseTo(ref.ropeAngle(1, 0, 16, 10000), 5);
    expect(Math.atan2(t2[(1 * 8 + 7) * 2 + 1]!, t2[(1 * 8 + 7) * 2]!)).toBeCloseTo(
      0.25 * ref.ropeAngle(1, 7, 16, 10000),
      5,
    );
  });
});

describe('rope.wgsl', () => {
  it('halves and indexes without dividing (CPU drivers divide lane by lane)', () => {
    const code = readFileSync(join(REPO_ROOT, 'shaders/rope.wgsl'), 'utf8').replace(/\/\/.*$/gm, '');
    expect(code).toContain('fn rope_pair');
    expect(code).not.toMatch(/[/%]/);
  });
});

describe('store_kv + attention (with RoPE)', () => {
  const cases = [
    {
      name: 'stories260K heads (8 over 4, head 8)',
      nHead: 8,
      nKvHead: 4,
      headDim: 8,
      nRot: 8,
      neox: false,
      past: 11,
      nTokens: 1,
    },
    {
      name: 'GQA 4, head 128, NeoX, 150 past positions (three key tiles), 3-token batch',
      nHead: 8,
      nKvHead: 2,
      headDim: 128,
      nRot: 128,
      neox: true,
      past: 150,
      nTokens: 3,
    },
    {
      name: 'no GQA, head 64, RoPE over 48 dimensions, prefill from position 0',
      nHead: 4,
      nKvHead: 4,
      headDim: 64,
      nRot: 48,
      neox: false,
      past: 0,
      nTokens: 70,
    },
  ];
  for (const kvF16 of [true, false]) {
    const kv: KvCacheTypes = kvF16 ? { k: 'f16', v: 'f16' } : { k: 'f32', v: 'f32' };
    for (const c of cases) {
      // The reference rotates with the same angle table, in double precision; with an F16 cache it
      // rounds the rotated K and V to halves as the cache does.
      it(`${c.name}, ${kvF16 ? 'F16' : 'F32'} cache (tolerance 2e-5 of the output scale)`, async () => {
        const kernels = new OpKernels(ctx.device, kv);
        const kvStride = c.nKvHead * c.headDim;
        const total = c.past + c.nTokens;
        const capacity = total + 5;
        const kAll = randomF32(total * kvStride, gauss);
        const vAll = randomF32(total * kvStride, gauss);
        const q = randomF32(c.nTokens * c.nHead * c.headDim, gauss);
        const table = ropeTable(plainRope(c.nRot, c.neox), capacity);
        const rope = { table: buffer(ctx, table), nRot: c.nRot, neox: c.neox };
        const kCache = buffer(ctx, kernels.kvCacheBytes('k', capacity, kvStride));
        const vCache = buffer(ctx, kernels.kvCacheBytes('v', capacity, kvStride));
        const out = buffer(ctx, q.byteLength);
        const step0 = makeStep(ctx, 0, c.past);
        const step1 = makeStep(ctx, c.past, c.nTokens);
        const store = (from: number, to: number, step: typeof step0) =>
          kernels.storeKv({
            k: buffer(ctx, kAll.slice(from * kvStride, to * kvStride)),
            v: buffer(ctx, vAll.slice(from * kvStride, to * kvStride)),
            kCache,
            vCache,
            step,
            kvStride,
            headDim: c.headDim,
            rope,
          });
        const scale = 1 / Math.sqrt(c.headDim);
        const dispatches = [];
        if (c.past > 0) dispatches.push(store(0, c.past, step0));
        dispatches.push(
          store(c.past, total, step1),
          kernels.attention({
            q: buffer(ctx, q),
            kCache,
            vCache,
            out,
            step: step1,
            nHead: c.nHead,
            nKvHead: c.nKvHead,
            headDim: c.headDim,
            scale,
            rope,
          }),
        );
        await run(ctx, dispatches);
        const round = kvF16 ? ref.roundF16 : (x: number) => x;
        const ropeOf = (x: Float32Array, pos0: number, nTokens: number, nHeads: number) =>
          ref.rope(x, table, { pos0, nTokens, nHeads, headDim: c.headDim, nRot: c.nRot, neox: c.neox });
        const kRot = ropeOf(kAll, 0, total, c.nKvHead).map(round);
        const expected = ref.attention(
          Float32Array.from(ropeOf(q, c.past, c.nTokens, c.nHead)),
          kRot,
          Float64Array.from(vAll, round),
          {
            pos0: c.past,
            nTokens: c.nTokens,
            nHead: c.nHead,
            nKvHead: c.nKvHead,
            headDim: c.headDim,
            scale,
          },
        );
        expect(scaledError(await readF32(ctx, out, q.length), expected)).toBeLessThan(2e-5);
        kernels.destroy();
      });
    }
  }
});

describe('store_kv fused into decode attention (STORE)', () => {
  // 8 heads over 2 KV heads of 64 (NeoX, RoPE over 48), 200 positions cached (two splits), the new
  // token's q|k|v in one fused row: the same output and cache, bit for bit, as store_kv then
  // attention, with the cache whole and split into a part per KV head.
  const kinds: KvCacheTypes[] = [
    { k: 'f16', v: 'f16' },
    { k: 'f32', v: 'f32' },
    { k: 'q8_0', v: 'q4_0' },
    { k: 'q4_0', v: 'f16' },
  ];
  for (const kv of kinds) {
    for (const cpu of [false, true]) {
      it(`${kv.k}/${kv.v} cache, ${cpu ? 'CPU' : 'GPU'} shape`, async () => {
        const kernels = new OpKernels(ctx.device, kv, opKernelShapes(ctx.info, cpu));
        const [nHead, nKvHead, headDim, nRot, past] = [8, 2, 64, 48, 200];
        const qDim = nHead * headDim;
        const kvStride = nKvHead * headDim;
        const rowWidth = qDim + 2 * kvStride;
        const table = ropeTable(plainRope(nRot, true), past + 4);
        const rope = { table: buffer(ctx, table), nRot, neox: true };
        const positions = past + 4;
        // A position's row of the cache in words: whole groups of a quantized cache, as heads of 64 are.
        const rowWords = { k: kvCacheBytes(kv.k, kvStride) / 4, v: kvCacheBytes(kv.v, kvStride) / 4 };
        const history = {
          k: buffer(ctx, randomF32(past * kvStride, gauss)),
          v: buffer(ctx, randomF32(past * kvStride, gauss)),
        };
        const qkv = buffer(ctx, randomF32(rowWidth, gauss));
        const rows = { stride: rowWidth, kOffset: qDim, vOffset: qDim + kvStride };
        const step0 = makeStep(ctx, 0, past);
        const step1 = makeStep(ctx, past, 1);
        const words = (b: GPUBuffer) => readU32(ctx, b, b.size / 4);
        const results = [];
        const variants = [
          { fused: false, parts: [undefined] },
          { fused: true, parts: [undefined] },
          { fused: true, parts: [0, 1].map((first) => ({ first, count: 1 })) },
        ];
        for (const { fused, parts } of variants) {
          const out = buffer(ctx, qDim * 4);
          const k: Uint32Array[] = [];
          const v: Uint32Array[] = [];
          for (const kvHeads of parts) {
            const width = (kvHeads?.count ?? nKvHead) * headDim;
            const kCache = buffer(ctx, kernels.kvCacheBytes('k', positions, width));
            const vCache = buffer(ctx, kernels.kvCacheBytes('v', positions, width));
            const store = { k: qkv, v: qkv, kCache, vCache, kvHeads, step: step1, kvStride, headDim, rope, rows };
            const attend = {
              q: qkv,
              kCache,
              vCache,
              kvHeads,
              out,
              step: step1,
              nHead,
              nKvHead,
              headDim,
              scale: 0.125,
              rope,
              qRows: { stride: rowWidth, offset: 0 },
            };
            await run(ctx, [
              kernels.storeKv({ ...history, kCache, vCache, kvHeads, step: step0, kvStride, headDim, rope }),
            ]);
            await run(
              ctx,
              fused ? [kernels.storeKvAndAttend(store, attend)] : [kernels.storeKv(store), kernels.attention(attend)],
            );
            k.push(await words(kCache));
            v.push(await words(vCache));
          }
          results.push({
            out: await words(out),
            k: joinParts(k, rowWords.k, positions),
            v: joinParts(v, rowWords.v, positions),
          });
        }
        for (const other of results.slice(1)) {
          expect(other.out).toEqual(results[0]!.out);
          expect(other.k).toEqual(results[0]!.k);
          expect(other.v).toEqual(results[0]!.v);
        }
        kernels.destroy();
      });
    }
  }
});

/** A cache split into parts of one KV head each (`headWords` words a row) as the whole cache's words. */
/** Caches split into equal parts of KV heads, joined into the whole cache's `positions` rows of rowWords. */
function joinParts(parts: Uint32Array[], rowWords: number, positions: number): Uint32Array {
  const partWords = rowWords / parts.length;
  const whole = new Uint32Array(positions * rowWords);
  parts.forEach((part, h) => {
    for (let row = 0; row < positions; row++)
      whole.set(part.subarray(row * partWords, (row + 1) * partWords), row * rowWords + h * partWords);
  });
  return whole;
}

describe('sliding window, soft-capped scores, sinks and a fused q|k|v input (tolerance 2e-5 of the output scale)', () => {
  // Past positions are stored from separate K and V buffers, the batch from fused q|k|v rows, which
  // attention also reads its queries from.
  const cases = [
    {
      name: 'window 8 and soft-cap 1.5 over 20 past positions, 5-token batch',
      past: 20,
      nTokens: 5,
      window: 8,
      softcap: 1.5,
    },
    {
      name: 'window 20 over a 70-token prefill (windows across key tiles), no soft-cap',
      past: 0,
      nTokens: 70,
      window: 20,
      softcap: 0,
    },
    { name: 'soft-cap 2, no window, 100 past positions, 1 token', past: 100, nTokens: 1, window: 0, softcap: 2 },
    // gpt-oss: a logit per head in each softmax's denominator; some above every score, some below.
    {
      name: 'sinks with window 8 over 20 past positions, 5-token batch',
      past: 20,
      nTokens: 5,
      window: 8,
      softcap: 0,
      sinks: [4, -3, 0.5, 12],
    },
    {
      name: 'sinks over a 70-token prefill, no window',
      past: 0,
      nTokens: 70,
      window: 0,
      softcap: 0,
      sinks: [-1, 2, 6, 0],
    },
  ];
  const nHead = 4;
  const nKvHead = 2;
  const headDim = 64;
  const qDim = nHead * headDim;
  const kvStride = nKvHead * headDim;
  const rowWidth = qDim + 2 * kvStride;
  for (const c of cases) {
    it(c.name, async () => {
      const total = c.past + c.nTokens;
      // Queries of 3σ: scores of several units, so a soft-cap of 1.5 bends them hard.
      const q = randomF32(c.nTokens * qDim, gauss, 3);
      const kAll = randomF32(total * kvStride, gauss);
      const vAll = randomF32(total * kvStride, gauss);
      const fused = new Float32Array(c.nTokens * rowWidth);
      for (let t = 0; t < c.nTokens; t++) {
        fused.set(q.subarray(t * qDim, (t + 1) * qDim), t * rowWidth);
        fused.set(kAll.subarray((c.past + t) * kvStride, (c.past + t + 1) * kvStride), t * rowWidth + qDim);
        fused.set(vAll.subarray((c.past + t) * kvStride, (c.past + t + 1) * kvStride), t * rowWidth + qDim + kvStride);
      }
      const table = ropeTable(plainRope(headDim, true), total);
      const rope = { table: buffer(ctx, table), nRot: headDim, neox: true };
      const kCache = buffer(ctx, ops.kvCacheBytes('k', total, kvStride));
      const vCache = buffer(ctx, ops.kvCacheBytes('v', total, kvStride));
      const out = buffer(ctx, q.byteLength);
      const qkv = buffer(ctx, fused);
      const batch = makeStep(ctx, c.past, c.nTokens);
      const common = { kCache, vCache, kvStride, headDim, rope };
      const dispatches = [];
      if (c.past > 0) {
        const k = buffer(ctx, kAll.slice(0, c.past * kvStride));
        const v = buffer(ctx, vAll.slice(0, c.past * kvStride));
        dispatches.push(ops.storeKv({ ...common, k, v, step: makeStep(ctx, 0, c.past) }));
      }
      const scale = 1 / Math.sqrt(headDim);
      const sinks = 'sinks' in c && c.sinks ? Float32Array.from(c.sinks) : undefined;
      dispatches.push(
        ops.storeKv({
          ...common,
          k: qkv,
          v: qkv,
          step: batch,
          rows: { stride: rowWidth, kOffset: qDim, vOffset: qDim + kvStride },
        }),
        ops.attention({
          ...common,
          q: qkv,
          out,
          step: batch,
          nHead,
          nKvHead,
          scale,
          qRows: { stride: rowWidth, offset: 0 },
          window: c.window,
          softcap: c.softcap,
          sinks: sinks && buffer(ctx, sinks),
        }),
      );
      await run(ctx, dispatches);
      const ropeOf = (x: Float32Array, pos0: number, nTokens: number, nHeads: number) =>
        ref.rope(x, table, { pos0, nTokens, nHeads, headDim, nRot: headDim, neox: true });
      const kRot = ropeOf(kAll, 0, total, nKvHead).map(ref.roundF16);
      const o = {
        pos0: c.past,
        nTokens: c.nTokens,
        nHead,
        nKvHead,
        headDim,
        scale,
        window: c.window,
        softcap: c.softcap,
        sinks,
      };
      const expected = ref.attention(
        Float32Array.from(ropeOf(q, c.past, c.nTokens, nHead)),
        kRot,
        Float64Array.from(vAll, ref.roundF16),
        o,
      );
      const got = await readF32(ctx, out, q.length);
      expect(scaledError(got, expected)).toBeLessThan(2e-5);
      // The window and the cap change the result: the reference without them is far off.
      if (c.window && total > c.window) {
        expect(
          scaledError(
            got,
            ref.attention(
              Float32Array.from(ropeOf(q, c.past, c.nTokens, nHead)),
              kRot,
              Float64Array.from(vAll, ref.roundF16),
              { ...o, window: 0 },
            ),
          ),
        ).toBeGreaterThan(1e-2);
      }
      if (c.softcap) {
        expect(
          scaledError(
            got,
            ref.attention(
              Float32Array.from(ropeOf(q, c.past, c.nTokens, nHead)),
              kRot,
              Float64Array.from(vAll, ref.roundF16),
              { ...o, softcap: 0 },
            ),
          ),
        ).toBeGreaterThan(1e-2);
      }
      if (sinks) {
        expect(
          scaledError(
            got,
            ref.attention(
              Float32Array.from(ropeOf(q, c.past, c.nTokens, nHead)),
              kRot,
              Float64Array.from(vAll, ref.roundF16),
              { ...o, sinks: undefined },
            ),
          ),
        ).toBeGreaterThan(1e-2);
      }
    });
  }
});

describe('elementwise (tolerance 1e-6 relative)', () => {
  it('swiglu, residual add and bias add', async () => {
    const n = 1000;
    const g = randomF32(n, gauss, 4);
    const u = randomF32(n, gauss);
    const gb = buffer(ctx, g);
    const x = randomF32(n, gauss);
    const xb = buffer(ctx, x);
    const b = randomF32(100, gauss);
    const xb2 = buffer(ctx, x);
    const step = makeStep(ctx, 0, 10);
    await run(ctx, [
      ops.swiglu(gb, buffer(ctx, u), 100, step),
      ops.add(xb, buffer(ctx, u), 100, step),
      ops.addBias(xb2, buffer(ctx, b), 100, step),
    ]);
    expect(
      maxRelError(
        await readF32(ctx, gb, n),
        Float64Array.from(g, (v, i) => ref.silu(v) * u[i]!),
      ),
    ).toBeLessThan(1e-6);
    expect(
      maxRelError(
        await readF32(ctx, xb, n),
        Float64Array.from(x, (v, i) => v + u[i]!),
      ),
    ).toBeLessThan(1e-6);
    expect(
      maxRelError(
        await readF32(ctx, xb2, n),
        Float64Array.from(x, (v, i) => v + b[i % 100]!),
      ),
    ).toBeLessThan(1e-6);
  });

  it("GeGLU through llama.cpp's half-precision GELU table: >= 99% bit-exact, the rest within one half step (2^-10)", async () => {
    const width = 500;
    const tokens = 8;
    const g = randomF32(width * tokens, gauss, 5); // past ±10 too, where the table is bypassed
    const u = randomF32(width * tokens, gauss);
    // Separate gate and up buffers, and phi3's packed gate|up rows.
    const packed = new Float32Array(2 * width * tokens);
    for (let t = 0; t < tokens; t++) {
      packed.set(g.subarray(t * width, (t + 1) * width), 2 * t * width);
      packed.set(u.subarray(t * width, (t + 1) * width), (2 * t + 1) * width);
    }
    const gb = buffer(ctx, g);
    const pb = buffer(ctx, packed);
    const step = makeStep(ctx, 0, tokens);
    await run(ctx, [
      ops.glu({ gate: gb, up: buffer(ctx, u), width, step, act: 'gelu' }),
      ops.glu({ gate: pb, width, step, act: 'gelu' }),
    ]);
    const expected = Float32Array.from(g, (v, i) => ref.geluHalfTable(v) * u[i]!);
    const separate = await readF32(ctx, gb, g.length);
    const fromPacked = (await readF32(ctx, pb, packed.length)).filter((_, i) => Math.floor(i / width) % 2 === 0);
    for (const got of [separate, fromPacked]) {
      const exact = got.filter((v, i) => v === expected[i]).length;
      expect(exact / got.length).toBeGreaterThanOrEqual(0.99);
      expect(maxRelError(got, expected, 1e-6)).toBeLessThanOrEqual(2 ** -10);
    }
    // The plain (unrounded) GELU is measurably different: the table matters.
    const plain = Float32Array.from(
      g,
      (v, i) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * v * (1 + 0.044715 * v * v))) * u[i]!,
    );
    expect(separate.filter((v, i) => v === plain[i]).length / g.length).toBeLessThan(0.5);
  });

  it('SwiGLU-OAI (gpt-oss: alpha 1.702, limit 7), with gate and up beyond the limit', async () => {
    const n = 1000;
    const g = randomF32(n, gauss, 6);
    const u = randomF32(n, gauss, 6);
    const gb = buffer(ctx, g);
    await run(ctx, [ops.swigluOai(gb, buffer(ctx, u), 100, makeStep(ctx, 0, 10), 1.702, 7)]);
    const got = await readF32(ctx, gb, n);
    expect(
      maxRelError(
        got,
        Float64Array.from(g, (v, i) => ref.swigluOai(v, u[i]!, 1.702, 7)),
      ),
    ).toBeLessThan(1e-6);
    // The clamps bite: unclamped, the result differs.
    expect(
      maxRelError(
        got,
        Float64Array.from(g, (v, i) => ref.swigluOai(v, u[i]!, 1.702, Infinity)),
      ),
    ).toBeGreaterThan(1e-2);
  });

  it("SwiGLU on packed gate|up rows (phi3's fused ffn_up)", async () => {
    const width = 300;
    const tokens = 3;
    const packed = randomF32(2 * width * tokens, gauss, 4);
    const pb = buffer(ctx, packed);
    await run(ctx, [ops.glu({ gate: pb, width, step: makeStep(ctx, 0, tokens), act: 'silu' })]);
    const got = await readF32(ctx, pb, packed.length);
    const expected = Float64Array.from(packed, (v, i) =>
      Math.floor(i / width) % 2 === 0 ? ref.silu(v) * packed[i + width]! : v,
    );
    expect(maxRelError(got, expected)).toBeLessThan(1e-6);
  });

  it('scale, and the logit soft-cap over a fixed row count (tolerance 1e-6)', async () => {
    const width = 700;
    const x = randomF32(width * 4, gauss, 20);
    const xs = buffer(ctx, x);
    const xc = buffer(ctx, x);
    const step = makeStep(ctx, 0, 4);
    const cap = 30;
    // Soft-cap of the last token's logits only (1 row), as the output head does; the rest stays.
    await run(ctx, [ops.scale(xs, 16, width, step), ops.softcap(xc, cap, width, step, 1)]);
    expect(
      maxRelError(
        await readF32(ctx, xs, x.length),
        Float64Array.from(x, (v) => v * 16),
      ),
    ).toBeLessThan(1e-6);
    const capped = await readF32(ctx, xc, x.length);
    expect(
      maxRelError(
        capped.subarray(0, width),
        Float64Array.from(x.subarray(0, width), (v) => cap * Math.tanh(v / cap)),
      ),
    ).toBeLessThan(1e-6);
    expect(Array.from(capped.subarray(width))).toEqual(Array.from(x.subarray(width)));
  });
});

describe('sampling on the GPU', () => {
  /** A sampler over fixed logits: returns the token of each call, at step positions pos0 = 0, 1, ... */
  function sampler(logits: Float32Array, s: SamplingParams, recent: number[] = [], nLogprobs = 0, force?: SamplerPath) {
    const vocab = logits.length;
    const state = new Uint32Array(SAMPLER_STATE_WORDS);
    state[0] = recent.length;
    state[1] = recent.length;
    state.set(recent, 2);
    const args = {
      logits: buffer(ctx, logits),
      work: buffer(ctx, vocab * 4),
      state: buffer(ctx, state),
      out: buffer(ctx, SAMPLER_OUT_WORDS * 4),
      params: uniformBuffer(ctx, samplingParamsBytes(vocab, s, nLogprobs)),
    };
    let pos = 0;
    const path = force ?? samplerPath(s, vocab);
    return {
      args,
      async next(): Promise<number> {
        const step = makeStep(ctx, pos++, 1);
        await run(ctx, [ops.sample({ ...args, step }, path)]);
        return (await readU32(ctx, args.out, 1))[0]!;
      },
    };
  }

  it('greedy picks the largest logit, the first one on ties', async () => {
    const logits = randomF32(5000, gauss);
    logits[4321] = 10;
    expect(await sampler(logits, GREEDY).next()).toBe(4321);
    logits[17] = 10;
    expect(await sampler(logits, GREEDY).next()).toBe(17);
  });

  it('applies repetition, frequency and presence penalties as llama.cpp does', async () => {
    const r = mulberry32(9);
    for (let trial = 0; trial < 5; trial++) {
      const logits = randomF32(300, () => r.gaussian(), 2);
      const recent = Array.from({ length: 40 }, () => r.int(10) * 7); // ids with repeats, mostly near the top
      const ranked = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]!);
      recent.push(ranked[0]!, ranked[0]!, ranked[1]!);
      const o = { repeat: 1.3, frequency: 0.2, presence: 0.4 };
      const s = {
        ...GREEDY,
        repeatPenalty: o.repeat,
        frequencyPenalty: o.frequency,
        presencePenalty: o.presence,
        penaltyLastN: 32,
      };
      const window = recent.slice(-32);
      const expected = ref.penalize(logits, window, o);
      const best = Array.from(expected.keys()).reduce((a, b) => (expected[b]! > expected[a]! ? b : a));
      expect(await sampler(logits, s, recent).next()).toBe(best);
    }
  });

  it('draws only from the top-k / top-p / min-p set, with its tempered probabilities', async () => {
    const r = mulberry32(3);
    const logits = randomF32(2000, () => r.gaussian(), 1.5);
    for (let i = 0; i < 8; i++) logits[r.int(2000)] = 5 + r.gaussian();
    const settings: SamplingParams[] = [
      { ...GREEDY, temperature: 1, topK: 5, seed: 1 },
      { ...GREEDY, temperature: 0.7, topP: 0.8, seed: 2 },
      { ...GREEDY, temperature: 1.5, topK: 40, topP: 0.95, minP: 0.05, seed: 3 },
    ];
    for (const s of settings) {
      const kept = ref.keptDistribution(logits, s);
      const counts = new Map<number, number>();
      const draws = 200;
      const smp = sampler(logits, s);
      for (let i = 0; i < draws; i++) {
        const t = await smp.next();
        expect(kept.has(t), `token ${t} outside the kept set of ${JSON.stringify(s)}`).toBe(true);
        counts.set(t, (counts.get(t) ?? 0) + 1);
      }
      // Frequencies within 4.5 standard deviations of the kept probabilities: tokens of p >= 0.03
      // one by one, the rest as one bucket.
      const buckets = new Map<string, [number, number]>();
      for (const [t, p] of kept) {
        const key = p >= 0.03 ? String(t) : 'rest';
        const b = buckets.get(key) ?? [0, 0];
        buckets.set(key, [b[0] + p, b[1] + (counts.get(t) ?? 0)]);
      }
      for (const [p, count] of buckets.values()) {
        const sd = Math.sqrt((p * (1 - p)) / draws);
        expect(Math.abs(count / draws - p)).toBeLessThan(4.5 * sd + 1e-9);
      }
    }
  });

  it('top-k with more than 256 tokens tied at the k-th logit draws among the tied tokens', async () => {
    const logits = randomF32(4000, gauss);
    const tied = new Set<number>();
    for (let i = 0; i < 4000; i += 13) {
      logits[i] = 9;
      tied.add(i);
    }
    expect(tied.size).toBeGreaterThan(256);
    const smp = sampler(logits, { ...GREEDY, temperature: 1, topK: 40, seed: 4 });
    for (let i = 0; i < 5; i++) expect(tied.has(await smp.next())).toBe(true);
  });

  it('top-k 1 is greedy; the same seed and step give the same token', async () => {
    const logits = randomF32(1000, gauss);
    const best = Array.from(logits.keys()).reduce((a, b) => (logits[b]! > logits[a]! ? b : a));
    expect(await sampler(logits, { ...GREEDY, temperature: 2, topK: 1 }).next()).toBe(best);
    const s = { ...GREEDY, temperature: 3, seed: 42 };
    const a = sampler(logits, s);
    const b = sampler(logits, s);
    const seqA = [await a.next(), await a.next(), await a.next()];
    const seqB = [await b.next(), await b.next(), await b.next()];
    expect(seqA).toEqual(seqB);
    expect(new Set(seqA).size).toBeGreaterThan(1);
  });

  it('returns the top log-probabilities of the raw logits (tolerance 1e-5)', async () => {
    const logits = randomF32(3000, gauss, 2);
    const smp = sampler(logits, GREEDY, [], 5);
    await run(ctx, [ops.topLogprobs({ ...smp.args, step: makeStep(ctx, 0, 1) })]);
    const out = await readU32(ctx, smp.args.out, 12);
    const f = new Float32Array(out.buffer);
    const m = Math.max(...logits);
    const logZ = m + Math.log(logits.reduce((s, z) => s + Math.exp(z - m), 0));
    const ranked = Array.from(logits.keys())
      .sort((a, b) => logits[b]! - logits[a]!)
      .slice(0, 5);
    expect(Array.from({ length: 5 }, (_, r) => out[2 + 2 * r])).toEqual(ranked);
    for (let r = 0; r < 5; r++) expect(Math.abs(f[3 + 2 * r]! - (logits[ranked[r]!]! - logZ))).toBeLessThan(1e-5);
    // out[1]: the log-sum-exp, which the draw after it turns into the chosen token's log-probability.
    expect(Math.abs(f[1]! - logZ)).toBeLessThan(1e-4);
  });
});
