/**
 * The engine's importance-matrix collection against a CPU forward pass in double precision (the
 * kernels' references in reference.ts, put together as a llama), on a random model's F32 weights
 * with an f32 KV cache: per weight matrix, Σ x² per input column over all the tokens of two
 * chunks, to a relative 1e-4. (llama.cpp's llama-imatrix is not part of node-llama-cpp, so it
 * cannot be run here; the sums are the quantity it defines.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dequantizeTensor } from '../../src-main/core/dequantize';
import { tensorName, type BlockRole } from '../../src-main/core/tensor-names';
import { Engine } from '../../src-main/engine/engine';
import { readHParams } from '../../src-main/engine/model/hparams';
import { ropeTable } from '../../src-main/engine/model/rope-table';
import { openGguf } from '../../src-main/node/gguf-io';
import { mulberry32 } from '../support/random';
import { TEST_VOCAB, writeRandomModel } from '../support/test-models';
import { attention, rmsNorm, rope, silu } from './reference';

const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-imatrix-'));

afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** y = W·x for each row of x (W: `out` rows of `n` values, as GGUF stores [n, out]). */
function matmul(w: Float32Array, x: Float64Array, n: number, out: number): Float64Array {
  const rows = x.length / n;
  const y = new Float64Array(rows * out);
  for (let t = 0; t < rows; t++) {
    for (let o = 0; o < out; o++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += w[o * n + i]! * x[t * n + i]!;
      y[t * out + o] = s;
    }
  }
  return y;
}

/** Σ x² per column of `x` (rows of `n`), added to `sums` of the weights named. */
function addSquares(sums: Map<string, Float64Array>, weights: string[], x: Float64Array, n: number): void {
  const s = new Float64Array(n);
  for (let i = 0; i < x.length; i++) s[i % n] += x[i]! ** 2;
  for (const w of weights) {
    const acc = sums.get(w) ?? new Float64Array(n);
    for (let i = 0; i < n; i++) acc[i] += s[i]!;
    sums.set(w, acc);
  }
}

/** The CPU forward of a llama over `ids` from position 0, adding every weight's input squares to `sums`. */
function referenceSums(path: string, ids: readonly number[], sums: Map<string, Float64Array>): void {
  const { gguf, file } = openGguf(path);
  try {
    const hp = readHParams(gguf);
    const w = (name: string) => dequantizeTensor(gguf, gguf.tensor(name)!);
    const n = ids.length;
    const { nEmbd, nHead, nHeadKv, headDim, nFf } = hp;
    const table = ropeTable(hp.rope, n);
    const embd = w(tensorName('token_embd'));
    let x = new Float64Array(n * nEmbd);
    ids.forEach((id, t) => x.set(embd.subarray(id * nEmbd, (id + 1) * nEmbd), t * nEmbd));
    for (let l = 0; l < hp.nLayer; l++) {
      const blk = (role: BlockRole) => tensorName(role, l);
      const xb = rmsNorm(Float32Array.from(x), w(blk('attn_norm')), nEmbd, hp.eps);
      addSquares(sums, [blk('attn_q'), blk('attn_k'), blk('attn_v')], xb, nEmbd);
      const ropeOf = (v: Float64Array, heads: number) =>
        rope(Float32Array.from(v), table, { pos0: 0, nTokens: n, nHeads: heads, headDim, nRot: hp.rope.nRot, neox: hp.rope.neox });
      const q = ropeOf(matmul(w(blk('attn_q')), xb, nEmbd, nHead * headDim), nHead);
      const k = ropeOf(matmul(w(blk('attn_k')), xb, nEmbd, nHeadKv * headDim), nHeadKv);
      const v = matmul(w(blk('attn_v')), xb, nEmbd, nHeadKv * headDim);
      const att = attention(Float32Array.from(q), k, v, { pos0: 0, nTokens: n, nHead, nKvHead: nHeadKv, headDim, scale: hp.attnScale });
      addSquares(sums, [blk('attn_output')], att, nHead * headDim);
      const o = matmul(w(blk('attn_output')), att, nHead * headDim, nEmbd);
      x = x.map((value, i) => value + o[i]!);
      const fb = rmsNorm(Float32Array.from(x), w(blk('ffn_norm')), nEmbd, hp.eps);
      addSquares(sums, [blk('ffn_gate'), blk('ffn_up')], fb, nEmbd);
      const gate = matmul(w(blk('ffn_gate')), fb, nEmbd, nFf);
      const up = matmul(w(blk('ffn_up')), fb, nEmbd, nFf);
      const h = gate.map((g, i) => silu(g) * up[i]!);
      addSquares(sums, [blk('ffn_down')], h, nFf);
      const d = matmul(w(blk('ffn_down')), h, nFf, nEmbd);
      x = x.map((value, i) => value + d[i]!);
    }
  } finally {
    file.close();
  }
}

describe('collecting activations (importance matrix)', () => {
  it('sums the squares of every weight matrix input column as a double-precision CPU forward, within 1e-4', async () => {
    const path = join(dir, 'random.gguf');
    await writeRandomModel(path, { nLayer: 2, nEmbd: 64, nFf: 96, nHead: 4, nHeadKv: 2, scale: 0.1, randomNorms: true, seed: 7 });
    const rng = mulberry32(3);
    const chunks = [Array.from({ length: 40 }, () => rng.int(TEST_VOCAB)), Array.from({ length: 40 }, () => rng.int(TEST_VOCAB))];

    // Batches of 16 tokens: a chunk spans several submissions.
    await engine.load(path, { ctx: 64, maxBatch: 16, kvF16: false });
    for (const ids of chunks) await engine.collectActivations(ids);
    const ours = await engine.takeActivations();

    const ref = new Map<string, Float64Array>();
    for (const ids of chunks) referenceSums(path, ids, ref);

    // Every matrix of the layers, the output head left out (llama-imatrix's default).
    expect(ours.map((a) => a.weight).sort()).toEqual([...ref.keys()].sort());
    let worst = 0;
    for (const a of ours) {
      expect(a.tokens).toBe(80);
      const r = ref.get(a.weight)!;
      expect(a.sums.length).toBe(r.length);
      for (let i = 0; i < r.length; i++) worst = Math.max(worst, Math.abs(a.sums[i]! - r[i]!) / r[i]!);
    }
    console.log(`imatrix sums vs CPU reference: worst relative error ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-4);

    // Taking the sums zeroes them.
    await engine.collectActivations(chunks[0]!);
    const again = await engine.takeActivations();
    const first = new Map<string, Float64Array>();
    referenceSums(path, chunks[0]!, first);
    for (const a of again) {
      expect(a.tokens).toBe(40);
      const r = first.get(a.weight)!;
      for (let i = 0; i < r.length; i++) expect(Math.abs(a.sums[i]! - r[i]!) / r[i]!).toBeLessThan(1e-4);
    }
  });
});
