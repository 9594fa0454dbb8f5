/**
 * Decode attention (attention-decode.wgsl: the keys of one token split across workgroups, then
 * merged) against the double-precision reference, over the shapes its lane mapping branches on:
 * narrow and wide heads, query-head groups above and below a workgroup's block, key counts at and
 * around tile and split edges, the CPU and GPU shapes and split policies, sliding windows,
 * soft-caps and sinks, F16, F32, Q8_0 and Q4_0 caches (the reference reads the values they hold).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DECODE_HEAD_BLOCK, DECODE_MAX_SPLITS, DECODE_QUERY_FLOATS } from '../../../src-main/engine/gpu/ops';
import { REPO_ROOT } from '../../support/paths';
import { scaledError, testGpu } from '../gpu-harness';
import { attentionRunner, type AttentionCase } from './attention-cases';
import { cpuLanes, cpuRowLoadsFirst } from '../../../src-main/engine/gpu/row-groups';

const ctx = await testGpu();
const run = attentionRunner(ctx, 27);

/** A decode step: one token at position `past`. */
type Case = Omit<AttentionCase, 'tokens' | 'causal'>;
const decode = (c: Case) => run({ ...c, tokens: 1 });

/**
 * Every case runs in the GPU shape (attend_split: a pipeline per cache types; workgroup-memory
 * tiles whose lane mapping turns on the head size and block). The CPU shape (attend_split_cpu) is
 * written out per HEAD_DIM × HEAD_BLOCK × cache types, seconds of SwiftShader compilation each, and
 * its code turns on neither but the loop bounds: the cases marked 'cpu' too keep to six such
 * configurations that reach its branches (each cache type as K and as V, the quantized ones
 * rotated; two blocks of query heads, the last partial; the CPU split policy's most partials; the
 * first token; a cache in parts; sinks, a window, and below a soft-cap) and the head size that is
 * not whole vec4 pairs (the GPU shape stands in).
 */
const both = ['gpu', 'cpu'] as const;
const gpu = ['gpu'] as const;

describe('decode attention, split across workgroups (tolerance 2e-5 of the output scale)', () => {
  const cases: [string, Case, readonly ('gpu' | 'cpu')[]][] = [
    ['head 8, 2 query heads per KV head, first token', { nHead: 8, nKvHead: 4, headDim: 8, past: 0 }, both],
    ['head 64, 4 per KV head, one tile less a key', { nHead: 16, nKvHead: 4, headDim: 64, past: 126 }, gpu],
    ['head 64, 4 per KV head, one tile and a key', { nHead: 16, nKvHead: 4, headDim: 64, past: 128 }, gpu],
    ['head 12 (not whole vec4 pairs), 2 per KV head', { nHead: 4, nKvHead: 2, headDim: 12, past: 40 }, both],
    ['head 128, 8 per KV head, 1000 keys over many splits', { nHead: 16, nKvHead: 2, headDim: 128, past: 999 }, gpu],
    [
      'head 128, 16 per KV head (two blocks of 8), F32 cache',
      { nHead: 16, nKvHead: 1, headDim: 128, past: 300, kv: { k: 'f32', v: 'f32' } },
      gpu,
    ],
    [
      'head 16, 12 per KV head (blocks of 8 and 4), F32 cache',
      { nHead: 12, nKvHead: 1, headDim: 16, past: 300, kv: { k: 'f32', v: 'f32' } },
      both,
    ],
    ['head 256, 6 per KV head (blocks of 4), 2 pairs a lane', { nHead: 12, nKvHead: 2, headDim: 256, past: 260 }, gpu],
    ['head 32, no GQA, 2000 keys', { nHead: 4, nKvHead: 4, headDim: 32, past: 1999 }, both],
    ['head 32, 2 KV heads, 1000 keys: 8 splits', { nHead: 2, nKvHead: 2, headDim: 32, past: 999 }, both],
    [
      'sliding window of 100 over 700 keys, soft-cap 1.5',
      { nHead: 8, nKvHead: 2, headDim: 64, past: 699, window: 100, softcap: 1.5 },
      gpu,
    ],
    ['sinks, 500 keys, 3 query heads per KV head', { nHead: 6, nKvHead: 2, headDim: 64, past: 499, sinks: true }, gpu],
    [
      'head 64, 4 per KV head, 500 keys, q8_0 cache',
      { nHead: 8, nKvHead: 2, headDim: 64, past: 499, kv: { k: 'q8_0', v: 'q8_0' } },
      gpu,
    ],
    [
      'head 128, 8 per KV head, 300 keys, q4_0 K and q8_0 V',
      { nHead: 8, nKvHead: 1, headDim: 128, past: 299, kv: { k: 'q4_0', v: 'q8_0' } },
      gpu,
    ],
    [
      'head 64, 2 per KV head, 300 keys, q4_0 K and q8_0 V (rotated)',
      { nHead: 4, nKvHead: 2, headDim: 64, past: 299, kv: { k: 'q4_0', v: 'q8_0' } },
      both,
    ],
    [
      'head 96 (3 blocks), 2 per KV head, 130 keys, f16 K and q4_0 V',
      { nHead: 6, nKvHead: 3, headDim: 96, past: 129, kv: { k: 'f16', v: 'q4_0' } },
      gpu,
    ],
    [
      'a cache in 3 parts of KV heads (2, 2, 1), sinks, window of 200 over 301 keys',
      { nHead: 10, nKvHead: 5, headDim: 64, past: 300, sinks: true, window: 200, parts: 3 },
      both,
    ],
    [
      'a cache in 2 parts, 8 per KV head, 1000 keys over many splits',
      { nHead: 16, nKvHead: 2, headDim: 128, past: 999, parts: 2 },
      gpu,
    ],
    [
      'a q8_0 K and q4_0 V cache (rotated) in 2 parts, 2 per KV head, 300 keys',
      { nHead: 8, nKvHead: 4, headDim: 64, past: 299, parts: 2, kv: { k: 'q8_0', v: 'q4_0' } },
      both,
    ],
  ];
  for (const [name, c, shapes] of cases) {
    for (const shape of shapes) {
      it(`${name}, ${shape.toUpperCase()} shape`, async () => {
        const { got, expected } = await decode({ ...c, cpu: shape === 'cpu' });
        expect(scaledError(got, expected)).toBeLessThan(2e-5);
      });
    }
  }

  // The CPU shape's workgroup is the adapter's SIMD register (SwiftShader 4 lanes, lavapipe 8, an
  // AVX-512 llvmpipe 16): the others here, on whatever adapter runs the tests.
  for (const lanes of [4, 8, 16].filter((n) => n !== cpuLanes(ctx.info))) {
    const most = lanes === 8 ? ' (8 splits of 8: its most partials)' : '';
    it(`head 32, 2 KV heads, 1000 keys, CPU shape of ${lanes} lanes${most}`, async () => {
      const c: Case = { nHead: 2, nKvHead: 2, headDim: 32, past: 999, cpu: true, cpuLanes: lanes };
      const { got, expected } = await decode(c);
      expect(scaledError(got, expected)).toBeLessThan(2e-5);
    });
  }

  // The CPU shape loads a K or V row whole before its arithmetic on SwiftShader, an oct at a time
  // elsewhere (cpuRowLoadsFirst): the other order here, each cache type's words once.
  const otherOrder = !cpuRowLoadsFirst(ctx.info);
  for (const kv of [
    { k: 'f32', v: 'q8_0' },
    { k: 'q4_0', v: 'f16' },
  ] as const) {
    const order = otherOrder ? 'whole rows first' : 'an oct at a time';
    it(`head 64, 2 per KV head, 300 keys, ${kv.k} K and ${kv.v} V, CPU shape loading ${order}`, async () => {
      const c: Case = { nHead: 4, nKvHead: 2, headDim: 64, past: 299, kv, cpu: true, rowLoadsFirst: otherOrder };
      const { got, expected } = await decode(c);
      expect(scaledError(got, expected)).toBeLessThan(2e-5);
    });
  }

  it('the window, the cap and the sinks together, CPU shape; each changes the result (the reference without it is far off)', async () => {
    const c: Case = { nHead: 4, nKvHead: 2, headDim: 64, past: 299, window: 40, softcap: 1, sinks: true, cpu: true };
    const { got, expected } = await decode(c);
    expect(scaledError(got, expected)).toBeLessThan(2e-5);
    for (const without of [{ window: 0 }, { softcap: 0 }, { sinks: false }]) {
      const { expected } = await decode({ ...c, ...without });
      expect(scaledError(got, expected)).toBeGreaterThan(1e-2);
    }
  });
});

describe('attention-decode.wgsl', () => {
  it('has the head block, query and split counts ops.ts plans with', () => {
    const wgsl = readFileSync(join(REPO_ROOT, 'shaders/attention-decode.wgsl'), 'utf8');
    const constant = (name: string) => Number(new RegExp(`const ${name}: u32 = (\\d+)u;`).exec(wgsl)?.[1]);
    expect(constant('MAX_HB')).toBe(DECODE_HEAD_BLOCK);
    expect(constant('MAX_Q')).toBe(DECODE_QUERY_FLOATS);
    expect(constant('MAX_SPLITS')).toBe(DECODE_MAX_SPLITS);
  });

  it('has no barrier in the CPU shape, whose lanes each write the stored row whole', () => {
    // lavapipe compiles a kernel with a barrier as a coroutine, and recomputed the split's integer
    // divisions inside its key loop (1.4× the kernel's time at depth 4096).
    const wgsl = readFileSync(join(REPO_ROOT, 'shaders/attention-decode.wgsl'), 'utf8');
    const cpu = /fn attend_split_cpu[\s\S]*?\n#endif/.exec(wgsl)?.[0] ?? '';
    expect(cpu).toContain('if (STORE && begin <= pos && pos < end)');
    expect(cpu).not.toMatch(/Barrier\(/);
    expect(cpu).not.toMatch(/\blid\b[^;]*; (d|g) < HEAD_DIM/);
  });
});
