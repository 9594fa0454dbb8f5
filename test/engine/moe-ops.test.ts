/**
 * The MoE routing and combining kernels (shaders/moe.wgsl) against plain TypeScript references
 * (reference.ts): softmax, top-k and weight normalisation as llama.cpp's build_moe_ffn (and
 * gpt-oss's softmax_weight gating), the experts' biases, and the weighted sum of the experts'
 * outputs (with qwen2moe's sigmoid-gated shared expert) added to the residual stream. f32 kernels
 * against double-precision references: 1e-6 relative.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { OpKernels } from '../../src-main/engine/gpu/ops';
import { mulberry32, randomF32 } from '../support/random';
import { buffer, makeStep, maxRelError, readF32, readU32, run, testGpu } from './gpu-harness';
import * as ref from './reference';

const ctx = await testGpu();
const ops = new OpKernels(ctx.device);
const rng = mulberry32(41);
const gauss = () => rng.gaussian();

afterAll(() => ops.destroy());

async function route(
  logits: Float32Array,
  experts: number,
  used: number,
  norm: boolean,
  tokens = logits.length / experts,
  gating: 'softmax' | 'softmax_weight' = 'softmax',
) {
  const ids = buffer(ctx, tokens * used * 4);
  const weights = buffer(ctx, tokens * used * 4);
  await run(ctx, [
    ops.moeRoute({
      logits: buffer(ctx, logits),
      ids,
      weights,
      step: makeStep(ctx, 0, tokens),
      experts,
      used,
      norm,
      gating,
    }),
  ]);
  return {
    ids: Array.from(await readU32(ctx, ids, tokens * used)),
    weights: await readF32(ctx, weights, tokens * used),
  };
}

describe('moe_route', () => {
  it.each([
    { experts: 8, used: 2, norm: true },
    { experts: 60, used: 4, norm: false }, // qwen2moe-like
    { experts: 128, used: 8, norm: true }, // Qwen3-30B-A3B-like: more experts than threads
    { experts: 300, used: 1, norm: true },
  ])(
    '$experts experts, top $used, norm $norm: the reference ids in order, and their weights',
    async ({ experts, used, norm }) => {
      const tokens = 7;
      const logits = randomF32(tokens * experts, gauss, 2);
      const got = await route(logits, experts, used, norm);
      const want = ref.moeRoute(logits, experts, used, norm);
      expect(got.ids).toEqual(want.ids);
      expect(maxRelError(got.weights, want.weights, 1e-6)).toBeLessThan(1e-6);
      if (norm) {
        for (let t = 0; t < tokens; t++)
          expect(got.weights.subarray(t * used, (t + 1) * used).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
      }
    },
  );

  it("equal probabilities go to the lower expert id; only the step's tokens are routed", async () => {
    const logits = new Float32Array([0, 3, 1, 3, 3, /* second token */ 5, 5, 5, 5, 5]);
    const got = await route(logits, 5, 3, true);
    expect(got.ids).toEqual([1, 3, 4, 0, 1, 2]);
    for (const w of got.weights) expect(w).toBeCloseTo(1 / 3, 6);
    const first = await route(logits, 5, 2, false, 1);
    expect(first.ids).toEqual([1, 3]);
  });
});

describe('moe_route with softmax_weight gating (gpt-oss)', () => {
  it.each([
    { experts: 8, used: 2 },
    { experts: 32, used: 4 }, // gpt-oss-20b
    { experts: 128, used: 4 }, // gpt-oss-120b: more experts than threads
  ])(
    '$experts experts, top $used: the largest logits in order, weighted by their own softmax',
    async ({ experts, used }) => {
      const tokens = 7;
      // Negative logits too: the chosen-expert marker must stay below every logit.
      const logits = randomF32(tokens * experts, () => gauss() - 5, 2);
      const got = await route(logits, experts, used, false, tokens, 'softmax_weight');
      const want = ref.moeRouteSoftmaxWeight(logits, experts, used);
      expect(got.ids).toEqual(want.ids);
      expect(maxRelError(got.weights, want.weights, 1e-6)).toBeLessThan(1e-6);
      // Not the softmax over all experts: those weights are far smaller.
      const softmax = ref.moeRoute(logits, experts, used, false);
      expect(maxRelError(got.weights, softmax.weights, 1e-6)).toBeGreaterThan(1e-2);
    },
  );
});

describe('moe_add_bias', () => {
  it("adds each pair's expert bias row to the pair's row, for the step's tokens only", async () => {
    const tokens = 4;
    const used = 2;
    const experts = 6;
    const width = 70;
    const ids = new Uint32Array([5, 0, 2, 3, 3, 2, 1, 4]);
    const rows = randomF32((tokens + 1) * used * width, gauss);
    const bias = randomF32(experts * width, gauss);
    const rb = buffer(ctx, rows);
    await run(ctx, [
      ops.moeAddBias({
        rows: rb,
        bias: buffer(ctx, bias),
        ids: buffer(ctx, ids),
        step: makeStep(ctx, 0, tokens),
        width,
        used,
      }),
    ]);
    const want = Float64Array.from(rows, (v, i) => {
      const pair = Math.floor(i / width);
      return pair < tokens * used ? v + bias[ids[pair]! * width + (i % width)]! : v;
    });
    expect(maxRelError(await readF32(ctx, rb, rows.length), want)).toBeLessThan(1e-6);
  });
});

describe('moe_combine', () => {
  it.each([false, true])('x += Σ weight · expert output (shared expert: %s)', async (shared) => {
    const tokens = 5;
    const used = 3;
    const width = 70;
    const x = randomF32(tokens * width, gauss);
    const down = randomF32(tokens * used * width, gauss);
    const weights = randomF32(tokens * used, () => rng.next());
    const out = randomF32(tokens * width, gauss);
    const gate = randomF32(tokens, gauss, 3);
    const xb = buffer(ctx, x);
    const sharedBuffers = shared ? { out: buffer(ctx, out), gate: buffer(ctx, gate) } : undefined;
    const step = makeStep(ctx, 0, tokens);
    await run(ctx, [
      ops.moeCombine({
        x: xb,
        down: buffer(ctx, down),
        weights: buffer(ctx, weights),
        step,
        width,
        used,
        shared: sharedBuffers,
      }),
    ]);
    // Each sum against the sum of its terms' magnitudes (terms may cancel).
    const want = new Float64Array(x.length);
    const scale = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++) {
      const t = Math.floor(i / width);
      const terms = [x[i]!];
      for (let s = 0; s < used; s++) terms.push(weights[t * used + s]! * down[(t * used + s) * width + (i % width)]!);
      if (shared) terms.push(out[i]! / (1 + Math.exp(-gate[t]!)));
      want[i] = terms.reduce((a, b) => a + b, 0);
      scale[i] = terms.reduce((a, b) => a + Math.abs(b), 0);
    }
    const got = await readF32(ctx, xb, tokens * width);
    const worst = Math.max(...Array.from(got, (v, i) => Math.abs(v - want[i]!) / scale[i]!));
    expect(worst).toBeLessThan(1e-6);
  });
});
