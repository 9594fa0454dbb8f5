/**
 * One attention step (OpKernels.attention: a batch of `tokens` after `past` cached positions) on
 * random K, V and queries, beside the double-precision reference over the same inputs: what the
 * decode (one token) and prefill attention tests both check.
 */
import { afterAll } from 'vitest';
import type { GpuContext } from '../../../src-main/engine/gpu/device';
import { OpKernels, opKernelShapes, type KvHeads } from '../../../src-main/engine/gpu/ops';
import { DEFAULT_KV_CACHE_TYPES, type KvCacheTypes } from '../../../src-preload/api/kv-cache';
import { mulberry32, randomF32 } from '../../support/random';
import { buffer, makeStep, readF32, run } from '../gpu-harness';
import * as ref from '../reference';
import { cached } from './kv-cache-codec';

export interface AttentionCase {
  nHead: number;
  nKvHead: number;
  headDim: number;
  /** Positions cached before the batch. */
  past: number;
  /** The batch's tokens (1: a decode step). */
  tokens: number;
  /** The caches' types (default f16 both). */
  kv?: KvCacheTypes;
  /** The CPU adapters' shapes and split policy. */
  cpu?: boolean;
  /** Their workgroup's lanes (default: the adapter's, opKernelShapes). */
  cpuLanes?: number;
  /** Whether decode loads a whole K or V row before its arithmetic (default: the adapter's policy). */
  rowLoadsFirst?: boolean;
  window?: number;
  softcap?: number;
  sinks?: boolean;
  causal?: boolean;
  /** The cache split by KV heads into this many parts, a pair of buffers each (default 1), as a layer's cache that outgrows a binding. */
  parts?: number;
}

/** nKvHead KV heads in `parts` parts, as even as can be. */
function kvHeadParts(nKvHead: number, parts: number): KvHeads[] {
  const count = Math.ceil(nKvHead / parts);
  return Array.from({ length: Math.ceil(nKvHead / count) }, (_, i) => ({
    first: i * count,
    count: Math.min(count, nKvHead - i * count),
  }));
}

/** Runs cases on `ctx`, each with OpKernels of its own, all destroyed after the test file. */
export function attentionRunner(
  ctx: GpuContext,
  seed: number,
): (c: AttentionCase) => Promise<{ got: Float32Array; expected: Float64Array }> {
  const kernels: OpKernels[] = [];
  afterAll(() => kernels.forEach((k) => k.destroy()));
  return async (c) => {
    const rng = mulberry32(seed);
    const gauss = () => rng.gaussian();
    const kv = c.kv ?? DEFAULT_KV_CACHE_TYPES;
    const adapter = opKernelShapes(ctx.info, c.cpu === true);
    const shapes = c.cpu
      ? {
          cpuLanes: c.cpuLanes ?? adapter.cpuLanes,
          rowLoadsFirst: c.rowLoadsFirst ?? adapter.rowLoadsFirst,
        }
      : adapter;
    const ops = new OpKernels(ctx.device, kv, shapes);
    kernels.push(ops);
    const kvStride = c.nKvHead * c.headDim;
    const total = c.past + c.tokens;
    const k = randomF32(total * kvStride, gauss);
    const v = randomF32(total * kvStride, gauss);
    // Queries of 2σ: scores of a few units, so the softmax is far from flat.
    const q = randomF32(c.tokens * c.nHead * c.headDim, gauss, 2);
    // No rotation (nRot 0): RoPE inside attention is ops.test.ts's subject.
    const rope = { table: buffer(ctx, 16), nRot: 0, neox: false };
    const out = buffer(ctx, q.byteLength);
    const sinks = c.sinks ? Float32Array.from({ length: c.nHead }, (_, h) => (h % 3) * 2 - 1) : undefined;
    const scale = 1 / Math.sqrt(c.headDim);
    const shape = {
      nHead: c.nHead,
      nKvHead: c.nKvHead,
      headDim: c.headDim,
      scale,
      window: c.window,
      softcap: c.softcap,
      causal: c.causal,
    };
    const inputs = { k: buffer(ctx, k), v: buffer(ctx, v), q: buffer(ctx, q), sinks: sinks && buffer(ctx, sinks) };
    const fill = makeStep(ctx, 0, total);
    const step = makeStep(ctx, c.past, c.tokens);
    await run(
      ctx,
      kvHeadParts(c.nKvHead, c.parts ?? 1).flatMap((kvHeads) => {
        const width = kvHeads.count * c.headDim;
        const kCache = buffer(ctx, ops.kvCacheBytes('k', total, width));
        const vCache = buffer(ctx, ops.kvCacheBytes('v', total, width));
        return [
          ops.storeKv({
            k: inputs.k,
            v: inputs.v,
            kCache,
            vCache,
            kvHeads,
            step: fill,
            kvStride,
            headDim: c.headDim,
            rope,
          }),
          ops.attention({ ...shape, q: inputs.q, kCache, vCache, kvHeads, out, step, rope, sinks: inputs.sinks }),
        ];
      }),
    );
    // The reference reads the values the caches hold: halves, or llama.cpp's blocks decoded (and rotated back).
    const rot = ops.kvRotation(c.headDim);
    const expected = ref.attention(q, cached(kv.k, k, kvStride, rot.K_ROT), cached(kv.v, v, kvStride, rot.V_ROT), {
      ...shape,
      pos0: c.past,
      nTokens: c.tokens,
      sinks,
    });
    return { got: await readF32(ctx, out, q.length), expected };
  };
}
