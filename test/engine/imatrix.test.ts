/**
 * The engine's importance-matrix collection against a CPU forward pass in double precision (the
 * kernels' references in reference.ts, put together as a llama, dense or with Mixtral-style MoE
 * layers), on a random model's F32 weights with an f32 KV cache: per weight matrix (per expert for
 * the stacked expert tensors), Σ x² and Σ x per input column and the token counts, to a relative
 * 1e-4. (llama.cpp's own collector is the oracle of imatrix-llama.test.ts.) Then the MoE sums through llama-imatrix's GGUF file into
 * gufo quantize --imatrix, which weighs each expert's rows by that expert's columns.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dequantizeTensor } from '../../src-main/core/dequantize';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { imatrixGguf, type CollectedWeight } from '../../src-main/core/imatrix';
import { encoderFor } from '../../src-main/core/quants/encoders';
import { tensorName, type BlockRole } from '../../src-main/core/tensor-names';
import { Engine } from '../../src-main/engine/engine';
import { readHParams } from '../../src-main/engine/model/hparams';
import { ropeTable } from '../../src-main/engine/model/rope-table';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { loadImatrix } from '../../src-main/node/imatrix-file';
import { quantizeFile } from '../../src-main/node/quantize';
import { mulberry32 } from '../support/random';
import { TEST_VOCAB, writeRandomModel } from '../support/test-models';
import { attention, moeRoute, rmsNorm, rope, silu } from './reference';

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

/** A weight's statistics: Σ x² (sum2) and Σ x (sum) per column, [matrix][column], and the tokens per matrix. */
interface Stats {
  sum2: Float64Array;
  sum: Float64Array;
  counts: number[];
}

function statsOf(all: Map<string, Stats>, weight: string, n: number, matrices = 1): Stats {
  let s = all.get(weight);
  if (!s)
    all.set(
      weight,
      (s = {
        sum2: new Float64Array(n * matrices),
        sum: new Float64Array(n * matrices),
        counts: new Array<number>(matrices).fill(0),
      }),
    );
  return s;
}

/** Each row of `x` (rows of `n`) added to the statistics of the weights named (one matrix each). */
function addRows(all: Map<string, Stats>, weights: string[], x: Float64Array, n: number): void {
  for (const w of weights) {
    const s = statsOf(all, w, n);
    for (let i = 0; i < x.length; i++) {
      s.sum2[i % n]! += x[i]! ** 2;
      s.sum[i % n]! += x[i]!;
    }
    s.counts[0]! += x.length / n;
  }
}

/** One row (n values) added to expert e's statistics of the stacked weights named. */
function addExpertRow(
  all: Map<string, Stats>,
  weights: string[],
  row: Float64Array,
  n: number,
  experts: number,
  e: number,
): void {
  for (const w of weights) {
    const s = statsOf(all, w, n, experts);
    for (let i = 0; i < n; i++) {
      s.sum2[e * n + i]! += row[i]! ** 2;
      s.sum[e * n + i]! += row[i]!;
    }
    s.counts[e]!++;
  }
}

/** The CPU forward of a llama (dense or Mixtral-style MoE) over `ids` from position 0, adding every weight's input statistics to `all`. */
function referenceStats(path: string, ids: readonly number[], all: Map<string, Stats>): void {
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
      addRows(all, [blk('attn_q'), blk('attn_k'), blk('attn_v')], xb, nEmbd);
      const ropeOf = (v: Float64Array, heads: number) =>
        rope(Float32Array.from(v), table, {
          pos0: 0,
          nTokens: n,
          nHeads: heads,
          headDim,
          nRot: hp.rope.nRot,
          neox: hp.rope.neox,
        });
      const q = ropeOf(matmul(w(blk('attn_q')), xb, nEmbd, nHead * headDim), nHead);
      const k = ropeOf(matmul(w(blk('attn_k')), xb, nEmbd, nHeadKv * headDim), nHeadKv);
      const v = matmul(w(blk('attn_v')), xb, nEmbd, nHeadKv * headDim);
      const att = attention(Float32Array.from(q), k, v, {
        pos0: 0,
        nTokens: n,
        nHead,
        nKvHead: nHeadKv,
        headDim,
        scale: hp.attnScale,
      });
      addRows(all, [blk('attn_output')], att, nHead * headDim);
      const o = matmul(w(blk('attn_output')), att, nHead * headDim, nEmbd);
      x = x.map((value, i) => value + o[i]!);
      const fb = rmsNorm(Float32Array.from(x), w(blk('ffn_norm')), nEmbd, hp.eps);
      const d = hp.moe ? moeFfnReference(w, l, fb, all, nEmbd, hp.moe) : denseFfnReference(w, l, fb, all, nEmbd, nFf);
      x = x.map((value, i) => value + d[i]!);
    }
  } finally {
    file.close();
  }
}

function denseFfnReference(
  w: (name: string) => Float32Array,
  l: number,
  fb: Float64Array,
  all: Map<string, Stats>,
  nEmbd: number,
  nFf: number,
): Float64Array {
  const blk = (role: BlockRole) => tensorName(role, l);
  addRows(all, [blk('ffn_gate'), blk('ffn_up')], fb, nEmbd);
  const gate = matmul(w(blk('ffn_gate')), fb, nEmbd, nFf);
  const up = matmul(w(blk('ffn_up')), fb, nEmbd, nFf);
  const h = gate.map((g, i) => silu(g) * up[i]!);
  addRows(all, [blk('ffn_down')], h, nFf);
  return matmul(w(blk('ffn_down')), h, nFf, nEmbd);
}

/** Mixtral's FFN: the router's softmax top-k, each chosen expert's SwiGLU FFN, summed by the normalized weights. */
function moeFfnReference(
  w: (name: string) => Float32Array,
  l: number,
  fb: Float64Array,
  all: Map<string, Stats>,
  nEmbd: number,
  moe: { nExpert: number; nExpertUsed: number; nFfExp: number },
): Float64Array {
  const blk = (role: BlockRole) => tensorName(role, l);
  const { nExpert, nExpertUsed: used, nFfExp: ff } = moe;
  const tokens = fb.length / nEmbd;
  addRows(all, [blk('ffn_gate_inp')], fb, nEmbd);
  const routing = moeRoute(Float32Array.from(matmul(w(blk('ffn_gate_inp')), fb, nEmbd, nExpert)), nExpert, used, true);
  const [gateW, upW, downW] = [w(blk('ffn_gate_exps')), w(blk('ffn_up_exps')), w(blk('ffn_down_exps'))];
  const out = new Float64Array(fb.length);
  // As llama-imatrix adds them: slot by slot, tokens in order within a slot.
  for (let slot = 0; slot < used; slot++) {
    for (let t = 0; t < tokens; t++) {
      const e = routing.ids[t * used + slot]!;
      const row = fb.subarray(t * nEmbd, (t + 1) * nEmbd);
      addExpertRow(all, [blk('ffn_gate_exps'), blk('ffn_up_exps')], row, nEmbd, nExpert, e);
      const gate = matmul(gateW.subarray(e * ff * nEmbd, (e + 1) * ff * nEmbd), row, nEmbd, ff);
      const up = matmul(upW.subarray(e * ff * nEmbd, (e + 1) * ff * nEmbd), row, nEmbd, ff);
      const h = gate.map((g, i) => silu(g) * up[i]!);
      addExpertRow(all, [blk('ffn_down_exps')], h, ff, nExpert, e);
      const d = matmul(downW.subarray(e * nEmbd * ff, (e + 1) * nEmbd * ff), h, ff, nEmbd);
      for (let i = 0; i < nEmbd; i++) out[t * nEmbd + i]! += routing.weights[t * used + slot]! * d[i]!;
    }
  }
  return out;
}

/**
 * Checks the engine's statistics against the reference: the same weights, counts exactly; Σ x² to
 * a relative 1e-4, Σ x to 1e-4 of √(count · Σ x²) (which bounds Σ |x|). A column whose inputs
 * nearly vanish (an expert with a token or two) is held to its matrix's mean Σ x² instead: the
 * f32 matmul that made those inputs is only that exact relative to the row. A matrix that saw no
 * token holds zeros. Returns the worst relative error of Σ x².
 */
function expectStats(ours: readonly CollectedWeight[], ref: Map<string, Stats>): number {
  expect(ours.map((a) => a.weight).sort()).toEqual([...ref.keys()].sort());
  let worst = 0;
  for (const a of ours) {
    const r = ref.get(a.weight)!;
    expect(a.counts, a.weight).toEqual(r.counts);
    expect(a.sums.length).toBe(r.sum2.length);
    expect(a.inSums.length).toBe(r.sum.length);
    const columns = r.sum2.length / r.counts.length;
    r.counts.forEach((count, m) => {
      const at = m * columns;
      if (count === 0) {
        expect([...a.sums.subarray(at, at + columns), ...a.inSums.subarray(at, at + columns)]).toEqual(
          new Array(2 * columns).fill(0),
        );
        return;
      }
      const mean = r.sum2.subarray(at, at + columns).reduce((x, y) => x + y, 0) / columns;
      for (let i = at; i < at + columns; i++) {
        const scale = Math.max(r.sum2[i]!, mean);
        worst = Math.max(worst, Math.abs(a.sums[i]! - r.sum2[i]!) / scale);
        expect(Math.abs(a.inSums[i]! - r.sum[i]!), `${a.weight} in_sum[${i}]`).toBeLessThan(
          1e-4 * Math.sqrt(count * scale),
        );
      }
    });
  }
  expect(worst).toBeLessThan(1e-4);
  return worst;
}

/** Two chunks of `length` random token ids. */
function randomChunks(seed: number, length: number): number[][] {
  const rng = mulberry32(seed);
  return [Array.from({ length }, () => rng.int(TEST_VOCAB)), Array.from({ length }, () => rng.int(TEST_VOCAB))];
}

/** Copies row `from` of each layer's router over rows `to` in place: those experts tie with it, and the lowest id wins a tie. */
function tieRouterRows(path: string, from: number, to: number[]): void {
  const { gguf, file } = openGguf(path);
  const fd = openSync(path, 'r+');
  try {
    const hp = readHParams(gguf);
    for (let l = 0; l < hp.nLayer; l++) {
      const router = gguf.tensor(tensorName('ffn_gate_inp', l))!;
      const rowBytes = hp.nEmbd * 4;
      const row = gguf.tensorData(router).slice(from * rowBytes, (from + 1) * rowBytes);
      for (const e of to) writeSync(fd, row, 0, rowBytes, gguf.dataOffset + router.offset + e * rowBytes);
    }
  } finally {
    file.close();
    closeSync(fd);
  }
}

describe('collecting activations (importance matrix)', () => {
  it('sums the squares and values of every weight matrix input column as a double-precision CPU forward, within 1e-4', async () => {
    const path = join(dir, 'random.gguf');
    await writeRandomModel(path, {
      nLayer: 2,
      nEmbd: 64,
      nFf: 96,
      nHead: 4,
      nHeadKv: 2,
      scale: 0.1,
      randomNorms: true,
      seed: 7,
    });
    const chunks = randomChunks(3, 40);

    // Batches of 16 tokens: a chunk spans several submissions.
    await engine.load(path, { ctx: 64, maxBatch: 16, kvTypes: { k: 'f32', v: 'f32' } });
    for (const ids of chunks) await engine.collectActivations(ids);
    const ours = await engine.takeActivations();
    const ref = new Map<string, Stats>();
    for (const ids of chunks) referenceStats(path, ids, ref);
    // Every matrix of the layers, the output head left out (llama-imatrix's default).
    for (const a of ours) expect(a.counts).toEqual([80]);
    const worst = expectStats(ours, ref);
    console.log(`imatrix sums vs CPU reference: worst relative error ${worst.toExponential(2)}`);

    // Taking the sums zeroes them.
    await engine.collectActivations(chunks[0]!);
    const first = new Map<string, Stats>();
    referenceStats(path, chunks[0]!, first);
    expectStats(await engine.takeActivations(), first);
  });

  it('sums a MoE model per expert over the tokens routed to it (an expert no token chose stays empty), into a file quantize weighs each expert by', async () => {
    const path = join(dir, 'moe.gguf');
    const shape = {
      nLayer: 2,
      nEmbd: 64,
      nFf: 96,
      nHead: 4,
      nHeadKv: 2,
      nExpert: 8,
      nExpertUsed: 2,
      scale: 0.1,
      randomNorms: true,
      seed: 11,
    };
    await writeRandomModel(path, shape);
    // Experts 5, 6 and 7 score alike for every token; 5 and 6 win the tie, so no token chooses 7.
    tieRouterRows(path, 5, [6, 7]);
    const chunks = randomChunks(12, 40);

    await engine.load(path, { ctx: 64, maxBatch: 16, kvTypes: { k: 'f32', v: 'f32' } });
    for (const ids of chunks) await engine.collectActivations(ids);
    const ours = await engine.takeActivations();
    const ref = new Map<string, Stats>();
    for (const ids of chunks) referenceStats(path, ids, ref);
    const down = ours.find((a) => a.weight === 'blk.1.ffn_down_exps.weight')!;
    expect(down.counts).toHaveLength(8);
    expect(down.counts[7]).toBe(0);
    expect(down.counts.reduce((a, b) => a + b, 0)).toBe(80 * 2);
    const worst = expectStats(ours, ref);
    console.log(`MoE imatrix sums vs CPU reference: worst relative error ${worst.toExponential(2)}`);

    // llama-imatrix's GGUF: in_sum2 [columns, experts], counts [1, experts], in_sum [columns, experts].
    const { spec, data } = imatrixGguf({ datasets: ['t.txt'], chunkCount: 2, chunkSize: 40, weights: ours });
    const file = join(dir, 'moe.imatrix.gguf');
    await writeGguf(file, spec, (i) => [new Uint8Array(data[i]!.buffer, data[i]!.byteOffset, data[i]!.byteLength)]);
    const written = openGguf(file);
    try {
      const at = (suffix: string) => written.gguf.tensor(`blk.1.ffn_down_exps.weight.${suffix}`)!.ne;
      expect([at('in_sum2'), at('counts'), at('in_sum')]).toEqual([
        [96, 8],
        [1, 8],
        [96, 8],
      ]);
      expect(written.gguf.tensors.slice(0, 3).map((t) => t.name)).toEqual([
        'blk.0.attn_k.weight.in_sum2',
        'blk.0.attn_k.weight.counts',
        'blk.0.attn_k.weight.in_sum',
      ]);
    } finally {
      written.file.close();
    }
    const imatrix = loadImatrix(file);
    const weights = imatrix.get('blk.1.ffn_down_exps.weight')!;
    expect(weights.length).toBe(96 * 8);
    expect(weights[96 * 3]).toBeCloseTo(down.sums[96 * 3]! / down.counts[3]!, 6);
    // The unused expert weighs all its columns alike (1), as llama-quantize reads a zero count.
    expect([...weights.subarray(96 * 7)]).toEqual(new Array(96).fill(1));

    // gufo quantize --imatrix: expert e's rows of a stacked tensor are encoded with expert e's weights.
    const out = join(dir, 'moe-q4_0.gguf');
    await quantizeFile(path, out, 'Q4_0', { pure: true, imatrix });
    const source = openGguf(path);
    const quantized = openGguf(out);
    try {
      const name = 'blk.1.ffn_down_exps.weight';
      const values = dequantizeTensor(source.gguf, source.gguf.tensor(name)!);
      const bytes = quantized.gguf.tensorData(quantized.gguf.tensor(name)!);
      const q4 = ggmlTypeByName('Q4_0')!;
      const per = bytes.byteLength / 8;
      for (let e = 0; e < 8; e++) {
        const expected = new Uint8Array(per);
        encoderFor(q4)(
          values.subarray(e * 64 * 96, (e + 1) * 64 * 96),
          expected,
          64,
          96,
          weights.slice(e * 96, (e + 1) * 96),
        );
        expect(bytes.subarray(e * per, (e + 1) * per), `expert ${e}`).toEqual(expected);
      }
    } finally {
      source.file.close();
      quantized.file.close();
    }
  });

  it('collects a shared expert, a merged gate|up expert tensor and the router of a qwen2moe: per expert where stacked, per token otherwise', async () => {
    const path = join(dir, 'qwen2moe.gguf');
    await writeRandomModel(path, {
      arch: 'qwen2moe',
      nLayer: 1,
      nEmbd: 64,
      nFf: 96,
      nFfExp: 32,
      nFfShexp: 48,
      nHead: 4,
      nHeadKv: 2,
      nExpert: 4,
      nExpertUsed: 2,
      mergedGateUp: true,
      scale: 0.1,
      randomNorms: true,
      seed: 21,
    });
    await engine.load(path, { ctx: 64, maxBatch: 16, kvTypes: { k: 'f32', v: 'f32' } });
    for (const ids of randomChunks(22, 20)) await engine.collectActivations(ids);
    const ours = new Map((await engine.takeActivations()).map((a) => [a.weight.replace('blk.0.', ''), a]));
    const shape = (name: string) => [
      ours.get(`${name}.weight`)!.sums.length,
      ours.get(`${name}.weight`)!.counts.length,
    ];
    expect(
      Object.fromEntries([...ours.keys()].sort().map((name) => [name, shape(name.replace('.weight', ''))])),
    ).toEqual({
      'attn_k.weight': [64, 1],
      'attn_output.weight': [64, 1],
      'attn_q.weight': [64, 1],
      'attn_v.weight': [64, 1],
      'ffn_down_exps.weight': [32 * 4, 4],
      'ffn_down_shexp.weight': [48, 1],
      'ffn_gate_inp.weight': [64, 1],
      'ffn_gate_inp_shexp.weight': [64, 1],
      'ffn_gate_shexp.weight': [64, 1],
      'ffn_gate_up_exps.weight': [64 * 4, 4],
      'ffn_up_shexp.weight': [64, 1],
    });
    const router = ours.get('ffn_gate_inp.weight')!;
    expect(router.counts).toEqual([40]);
    for (const name of ['ffn_gate_inp_shexp', 'ffn_gate_shexp', 'ffn_up_shexp'])
      expect(ours.get(`${name}.weight`)).toEqual({ ...router, weight: `blk.0.${name}.weight` });
    // Each token's input goes to the experts it chose: over the experts, `used` times the router's sums.
    const experts = ours.get('ffn_gate_up_exps.weight')!;
    expect(experts.counts.reduce((a, b) => a + b, 0)).toBe(40 * 2);
    expect(ours.get('ffn_down_exps.weight')!.counts).toEqual(experts.counts);
    for (let j = 0; j < 64; j++) {
      let sum2 = 0;
      let sum = 0;
      for (let e = 0; e < 4; e++) {
        sum2 += experts.sums[e * 64 + j]!;
        sum += experts.inSums[e * 64 + j]!;
      }
      expect(Math.abs(sum2 - 2 * router.sums[j]!) / router.sums[j]!).toBeLessThan(1e-5);
      expect(Math.abs(sum - 2 * router.inSums[j]!)).toBeLessThan(1e-5 * Math.sqrt(40 * router.sums[j]!));
    }
    expect(ours.get('ffn_down_shexp.weight')!.counts).toEqual([40]);
  });
});
