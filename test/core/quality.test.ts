/**
 * Platform-free quality figures: llama-perplexity's windows, KL statistics and the per-tensor
 * error of an export (checked against the round-trip error gufo quantize measures while encoding,
 * and against a direct computation over whole tensors).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dequantizeTensor } from '../../src-main/core/dequantize';
import type { GgufFile } from '../../src-main/core/gguf/gguf-file';
import {
  comparePosition,
  DivergenceStats,
  logSoftmax,
  percentile,
  vocabularyMismatch,
} from '../../src-main/core/quality/divergence';
import { perplexityOf, perplexityWindows, QualityError } from '../../src-main/core/quality/perplexity';
import { tensorErrorSteps, type TensorErrorReport } from '../../src-main/core/quality/tensor-error';
import { tensorLocation } from '../../src-main/core/tensor-names';
import { readVocab } from '../../src-main/core/tokenizer/index';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

const ids = (n: number) => Array.from({ length: n }, (_, i) => 100 + i);

describe('perplexity windows (llama-perplexity)', () => {
  it('scores every token after the first of a text that fits in one window', () => {
    const tokens = [1, ...ids(9)];
    const plan = perplexityWindows(tokens, 16, 1);
    expect(plan.windows).toEqual([{ ids: tokens, first: 0 }]);
    expect(plan).toMatchObject({ tokens: 10, scored: 9, ctx: 10 });
  });

  it('cuts a longer text into whole chunks, puts BOS first in each and scores the second half', () => {
    const tokens = [1, ...ids(10)]; // 11 tokens, ctx 4: chunks [0,4) and [4,8); 3 tokens left over
    const plan = perplexityWindows(tokens, 4, 1);
    expect(plan.windows).toEqual([
      { ids: [1, 100, 101, 102], first: 2 },
      { ids: [1, 104, 105, 106], first: 2 },
    ]);
    // Positions 2 of each window predict the tokens at 3: one per window.
    expect(plan).toMatchObject({ tokens: 11, scored: 2, ctx: 4 });
    const odd = perplexityWindows([1, ...ids(14)], 5, 1);
    expect(odd.windows.map((w) => w.first)).toEqual([2, 2, 2]);
    expect(odd.scored).toBe(3 * 2);
  });

  it('leaves the first token of each chunk alone when the vocabulary adds no BOS', () => {
    const plan = perplexityWindows(ids(8), 4, null);
    expect(plan.windows.map((w) => w.ids)).toEqual([ids(4), ids(8).slice(4)]);
  });

  it('refuses texts of fewer than 2 tokens and contexts that score nothing', () => {
    expect(() => perplexityWindows([1], 8, 1)).toThrow(
      new QualityError('the text gives 1 token (BOS included); at least 2 are needed to score one'),
    );
    expect(() => perplexityWindows([], 8, null)).toThrow(/gives 0 tokens; at least 2/);
    expect(() => perplexityWindows(ids(5), 1, null)).toThrow(/context must be at least 2 tokens, not 1/);
    expect(() => perplexityWindows(ids(5), 2, null)).toThrow(
      /context of 2 tokens scores no token of a text longer than it \(5 tokens\)/,
    );
    expect(perplexityWindows(ids(2), 2, null).scored).toBe(1);
  });

  it('perplexity is exp of the mean negative log-likelihood', () => {
    expect(perplexityOf(3 * Math.log(4), 3)).toBeCloseTo(4, 12);
  });
});

describe('KL statistics', () => {
  const p = [0.5, 0.25, 0.25].map(Math.log);
  const q = [0.25, 0.5, 0.25].map(Math.log);

  it('log-softmax in float64 normalizes any logits', () => {
    const l = logSoftmax(Float32Array.from([2, -1, 0.5, 30]));
    expect(l.reduce((s, v) => s + Math.exp(v), 0)).toBeCloseTo(1, 14);
    expect(l[3]! - l[0]!).toBeCloseTo(28, 6);
    expect(logSoftmax([Math.log(2), 0, 0])).toEqual(Float64Array.from(p));
  });

  it('compares two distributions position by position', () => {
    // KL(p‖q) = ½·ln(½/¼) + ¼·ln(¼/½) + ¼·0 = ¼·ln 2.
    const c = comparePosition(p, q, 2);
    expect(c.kl).toBeCloseTo(Math.log(2) / 4, 15);
    expect(c.sameTop).toBe(false);
    expect(c.deltaP).toBeCloseTo(-0.25, 15); // at the base's top token 0
    expect(c.deltaPNext).toBeCloseTo(0, 15); // at the next token 2
    expect(comparePosition(p, p, 0)).toEqual({ kl: 0, sameTop: true, deltaP: 0, deltaPNext: 0 });
    // A token both give no probability adds nothing (no 0·∞).
    expect(comparePosition([...p, -Infinity], [...q, -Infinity], 1).kl).toBeCloseTo(Math.log(2) / 4, 15);
    // One the base expects and the model rules out makes KL infinite.
    expect(comparePosition(p, [q[0]!, 0, -Infinity], 1).kl).toBe(Infinity);
  });

  it('percentiles interpolate between ranks as llama-perplexity does', () => {
    const sorted = Float64Array.from({ length: 10 }, (_, i) => i * 10);
    expect(percentile(sorted, 0.99)).toBeCloseTo(89.1, 12); // rank 0.99·9 = 8.91
    expect(percentile(sorted, 0.5)).toBeCloseTo(45, 12);
    expect(percentile(sorted, 0)).toBe(0);
    expect(percentile(sorted, 1)).toBe(90);
  });

  it('sums windows up: means, p99, top-1, perplexity of both over the same positions', () => {
    const stats = new DivergenceStats();
    stats.addBase({ nll: [1, 2] });
    stats.addBase({ nll: [3] });
    stats.addCompared({
      nll: [2, 2],
      comparison: { kl: [0.3, 0.1], sameTop: [true, false], deltaP: [-0.1, 0], deltaPNext: [0.2, 0] },
    });
    stats.addCompared({ nll: [5], comparison: { kl: [0.2], sameTop: [true], deltaP: [-0.2], deltaPNext: [0.1] } });
    const s = stats.summary();
    expect(s.positions).toBe(3);
    expect(s.meanKl).toBeCloseTo(0.2, 15);
    expect(s.p99Kl).toBeCloseTo(0.2 + 0.98 * 0.1, 12); // sorted [0.1, 0.2, 0.3], rank 1.98
    expect(s.maxKl).toBe(0.3);
    expect(s.top1).toBeCloseTo(2 / 3, 15);
    expect(s.meanDeltaP).toBeCloseTo(-0.1, 15);
    expect(s.meanDeltaPNext).toBeCloseTo(0.1, 15);
    expect(s.pplBase).toBeCloseTo(Math.exp(2), 12);
    expect(s.pplQuant).toBeCloseTo(Math.exp(3), 12);

    const uneven = new DivergenceStats();
    uneven.addBase({ nll: [1, 2] });
    uneven.addCompared({ nll: [1], comparison: { kl: [0], sameTop: [true], deltaP: [0], deltaPNext: [0] } });
    expect(() => uneven.summary()).toThrow(/base scored 2 positions and the compared model 1/);
    expect(() => uneven.addCompared({ nll: [1] })).toThrow(QualityError);
  });

  it('tells vocabularies apart, naming both files', () => {
    const stories = openGguf(STORIES_260K);
    const tiny = openGguf(TINY_RANDOM_LLAMA);
    try {
      const a = readVocab(stories.gguf);
      expect(vocabularyMismatch(a, readVocab(stories.gguf))).toBeNull();
      expect(vocabularyMismatch(a, readVocab(tiny.gguf))).toBe(
        `${TINY_RANDOM_LLAMA}: its vocabulary has 32000 tokens, not 512 (the base ${STORIES_260K} differs); KL divergence needs the same vocabulary`,
      );
      const tokens = a.tokens;
      const changed = {
        ...a,
        file: 'other.gguf',
        tokens: {
          length: tokens.length,
          bytesAt: (i: number) => (i === 300 ? new Uint8Array([120]) : tokens.bytesAt(i)),
          at: (i: number) => (i === 300 ? 'x' : tokens.at(i)),
        },
      };
      expect(vocabularyMismatch(a, changed as unknown as typeof a)).toBe(
        `other.gguf: token 300 is "x", not ${JSON.stringify(tokens.at(300))} (the base ${STORIES_260K} differs); KL divergence needs the same vocabulary`,
      );
    } finally {
      stories.file.close();
      tiny.file.close();
    }
  });
});

function drain(source: GgufFile, exported: GgufFile): { report: TensorErrorReport; steps: number } {
  const it = tensorErrorSteps(source, exported);
  let steps = 0;
  for (;;) {
    const r = it.next();
    if (r.done) return { report: r.value, steps };
    steps++;
  }
}

describe('per-tensor error of an export', () => {
  it('names layer and role from the tensor name', () => {
    expect(tensorLocation('blk.12.ffn_down.weight')).toEqual({ layer: 12, role: 'ffn_down' });
    expect(tensorLocation('blk.0.attn_q.bias')).toEqual({ layer: 0, role: 'attn_q.bias' });
    expect(tensorLocation('output.weight')).toEqual({ layer: null, role: 'output' });
  });

  it('gives each tensor the RMSE gufo quantize measured while encoding it, and pools sums by layer and role', async () => {
    const out = join(tempDir(), 'stories-q4_0.gguf');
    const quantized = await quantizeFile(STORIES_260K, out, 'Q4_0');
    const source = openGguf(STORIES_260K);
    const exported = openGguf(out);
    try {
      const { report, steps } = drain(source.gguf, exported.gguf);
      expect(steps).toBeGreaterThanOrEqual(source.gguf.tensors.length);
      expect(report.tensors.map((t) => t.name)).toEqual(source.gguf.tensors.map((t) => t.name));
      for (const [i, t] of report.tensors.entries()) {
        const q = quantized.tensors.find((x) => x.name === t.name)!;
        expect(t.exportType, t.name).toBe(q.to);
        expect(t.rmse, t.name).toBeCloseTo(q.rmse!, 12);
        expect(t.sourceType).toBe(source.gguf.tensors[i]!.type.name);
      }
      const changed = report.tensors.filter((t) => t.sourceType !== t.exportType);
      expect(changed.length).toBeGreaterThan(0);
      expect(
        report.tensors
          .filter((t) => t.sourceType === t.exportType)
          .every((t) => t.rmse === 0 && t.snrDb === null && t.relativeError === 0),
      ).toBe(true);

      // One tensor computed directly over its whole f32 values.
      const name = 'blk.2.attn_q.weight';
      const a = dequantizeTensor(source.gguf, source.gguf.tensor(name)!);
      const b = dequantizeTensor(exported.gguf, exported.gguf.tensor(name)!);
      let signal = 0;
      let noise = 0;
      a.forEach((v, i) => {
        signal += v * v;
        noise += (b[i]! - v) ** 2;
      });
      const t = report.tensors.find((x) => x.name === name)!;
      expect(t).toMatchObject({ layer: 2, role: 'attn_q', elements: a.length, sourceType: 'F32', exportType: 'Q4_0' });
      expect(t.relativeError).toBeCloseTo(Math.sqrt(noise / signal), 12);
      expect(t.snrDb).toBeCloseTo(10 * Math.log10(signal / noise), 9);
      expect(t.snrDb!).toBeGreaterThan(10); // 4.5 bits a weight keep the signal well above the noise

      // Pooled figures: sums of squares over the group's tensors.
      const pooled = (ts: typeof report.tensors) =>
        Math.sqrt(ts.reduce((s, x) => s + x.rmse ** 2 * x.elements, 0) / ts.reduce((s, x) => s + x.elements, 0));
      expect(report.byLayer.map((g) => g.layer)).toEqual([0, 1, 2, 3, 4, null]);
      for (const g of report.byLayer)
        expect(g.rmse).toBeCloseTo(pooled(report.tensors.filter((x) => x.layer === g.layer)), 12);
      const attnQ = report.byRole.find((g) => g.role === 'attn_q')!;
      expect(attnQ.elements).toBe(5 * 64 * 64);
      expect(attnQ.rmse).toBeCloseTo(pooled(report.tensors.filter((x) => x.role === 'attn_q')), 12);
      expect(report.total.elements).toBe(source.gguf.tensors.reduce((n, x) => n + x.elements, 0));
      expect(report.total.rmse).toBeCloseTo(pooled(report.tensors), 12);
    } finally {
      source.file.close();
      exported.file.close();
    }
  });

  it('refuses files whose tensors differ, naming both files and the tensor', async () => {
    const dir = tempDir();
    const shape = { nLayer: 1, nEmbd: 32, nFf: 64, nHead: 2 };
    const [full, tied] = [join(dir, 'full.gguf'), join(dir, 'tied.gguf')];
    await writeRandomModel(full, shape);
    await writeRandomModel(tied, { ...shape, tiedEmbeddings: true });
    const [f, t, s] = [openGguf(full), openGguf(tied), openGguf(STORIES_260K)];
    try {
      expect(() => drain(f.gguf, t.gguf)).toThrow(
        new QualityError(`${tied}: no tensor "output.weight", which ${full} has`),
      );
      expect(() => drain(t.gguf, f.gguf)).toThrow(
        new QualityError(`${full}: tensor "output.weight" is not in ${tied}`),
      );
      expect(() => drain(s.gguf, f.gguf)).toThrow(
        `${full}: tensor "token_embd.weight" has shape [32, 512], in ${STORIES_260K} it has [64, 512]`,
      );
    } finally {
      for (const x of [f, t, s]) x.file.close();
    }
  });
});
