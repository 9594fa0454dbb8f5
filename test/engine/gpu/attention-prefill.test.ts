/**
 * Prefill attention (attention-prefill.wgsl: tiles of PREFILL_ROWS tokens of one query head, keys
 * in tiles with an online softmax) against the double-precision reference, over what its tiling
 * branches on: batches at and around the row tile, key counts at and around the key tile, a batch
 * after cached positions, narrow and wide heads, head sizes that are not whole vec4 pairs (the
 * CPU shape falls back to the GPU's), sliding windows that start inside a tile, soft-caps, sinks,
 * an encoder's bidirectional batch, F16, F32, Q8_0 and Q4_0 caches, both shapes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PREFILL_ROWS } from '../../../src-main/engine/gpu/ops';
import { REPO_ROOT } from '../../support/paths';
import { scaledError, testGpu } from '../gpu-harness';
import { attentionRunner, type AttentionCase } from './attention-cases';

const prefill = attentionRunner(await testGpu(), 3);

/**
 * Every case runs in the GPU shape (attend_tile). The CPU shape's kernels are compiled per head
 * size (attend_tile_cpu) and, as ops.attention builds a decode step's dispatches too, per head
 * size × head block × cache types (attention-decode.wgsl's attend_split_cpu, seconds of
 * SwiftShader compilation each): the cases marked 'cpu' too keep to few such configurations that
 * reach the CPU shape's branches: row tiles and a batch after cached positions, every cache type
 * (F32 and non-causal in the encoder, Q8_0 rotated, Q4_0), windows, the soft-cap, sinks, parts,
 * and the head size that is not whole vec4 pairs (the GPU shape stands in). Its code turns on the
 * head size only as a loop bound, so the wide heads are the GPU shape's (its lanes' pairs).
 */
const both = ['gpu', 'cpu'] as const;
const gpu = ['gpu'] as const;

describe('prefill attention, tiled (tolerance 2e-5 of the output scale)', () => {
  const cases: [string, AttentionCase, readonly ('gpu' | 'cpu')[]][] = [
    ['head 8, 2 query heads per KV head, 2 tokens', { nHead: 8, nKvHead: 4, headDim: 8, past: 0, tokens: 2 }, both],
    [
      'head 64, 4 per KV head, a row tile less a token',
      { nHead: 8, nKvHead: 2, headDim: 64, past: 0, tokens: PREFILL_ROWS - 1 },
      both,
    ],
    [
      'head 64, 4 per KV head, a row tile and a token after 60 cached',
      { nHead: 8, nKvHead: 2, headDim: 64, past: 60, tokens: PREFILL_ROWS + 1 },
      both,
    ],
    [
      'head 64, no GQA, 130 tokens (keys across three tiles)',
      { nHead: 2, nKvHead: 2, headDim: 64, past: 0, tokens: 130 },
      gpu,
    ],
    [
      'head 12 (not whole vec4 pairs), 2 per KV head, 20 tokens after 5',
      { nHead: 4, nKvHead: 2, headDim: 12, past: 5, tokens: 20 },
      both,
    ],
    [
      'head 128, 8 per KV head, 17 tokens after 300, F32 cache',
      { nHead: 8, nKvHead: 1, headDim: 128, past: 300, tokens: 17, kv: { k: 'f32', v: 'f32' } },
      gpu,
    ],
    ['head 256, 2 per KV head, 9 tokens after 70', { nHead: 4, nKvHead: 2, headDim: 256, past: 70, tokens: 9 }, gpu],
    [
      'sliding window of 20 over a 70-token batch, soft-cap 1.5',
      { nHead: 4, nKvHead: 2, headDim: 64, past: 0, tokens: 70, window: 20, softcap: 1.5 },
      both,
    ],
    [
      'sliding window of 13 after 100 cached, 11 tokens',
      { nHead: 4, nKvHead: 2, headDim: 32, past: 100, tokens: 11, window: 13 },
      both,
    ],
    [
      'sinks, 3 per KV head, 40 tokens after 90',
      { nHead: 6, nKvHead: 2, headDim: 64, past: 90, tokens: 40, sinks: true },
      gpu,
    ],
    [
      'head 64, 4 per KV head, 20 tokens after 70, q8_0 cache',
      { nHead: 8, nKvHead: 2, headDim: 64, past: 70, tokens: 20, kv: { k: 'q8_0', v: 'q8_0' } },
      gpu,
    ],
    [
      'head 96 (3 blocks), 2 per KV head, 9 tokens after 31, q4_0 K and f16 V',
      { nHead: 6, nKvHead: 3, headDim: 96, past: 31, tokens: 9, kv: { k: 'q4_0', v: 'f16' } },
      both,
    ],
    [
      'an encoder: every token sees the whole batch of 45',
      { nHead: 4, nKvHead: 4, headDim: 32, past: 0, tokens: 45, causal: false, kv: { k: 'f32', v: 'f32' } },
      both,
    ],
    [
      'a cache in 3 parts of KV heads (2, 2, 1), sinks, 12 tokens after 50',
      { nHead: 10, nKvHead: 5, headDim: 64, past: 50, tokens: 12, sinks: true, parts: 3 },
      both,
    ],
    [
      'a cache in 2 parts, window of 9, 4 per KV head, 20 tokens after 30',
      { nHead: 8, nKvHead: 2, headDim: 32, past: 30, tokens: 20, window: 9, parts: 2 },
      gpu,
    ],
    [
      'a q8_0 cache (rotated) in 3 parts (2, 2, 1), 3 per KV head, 15 tokens after 40',
      { nHead: 15, nKvHead: 5, headDim: 64, past: 40, tokens: 15, parts: 3, kv: { k: 'q8_0', v: 'q8_0' } },
      both,
    ],
  ];
  for (const [name, c, shapes] of cases) {
    for (const shape of shapes) {
      it(`${name}, ${shape.toUpperCase()} shape`, async () => {
        const { got, expected } = await prefill({ ...c, cpu: shape === 'cpu' });
        expect(scaledError(got, expected)).toBeLessThan(2e-5);
      });
    }
  }

  it('the window, the cap and the sinks together, CPU shape; each of them and causality change the result (the reference without it is far off)', async () => {
    const c: AttentionCase = {
      nHead: 4,
      nKvHead: 2,
      headDim: 64,
      past: 30,
      tokens: 20,
      window: 12,
      softcap: 1,
      sinks: true,
      cpu: true,
    };
    const { got, expected } = await prefill(c);
    expect(scaledError(got, expected)).toBeLessThan(2e-5);
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
