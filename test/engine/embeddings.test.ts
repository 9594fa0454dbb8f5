/**
 * Embeddings against llama.cpp (node-llama-cpp's LlamaEmbeddingContext, CPU), on SwiftShader here:
 * random-weight F32 decoder models with each pooling_type (mean, cls, last; none is the last
 * token's state, as node-llama-cpp answers it) give vectors within 1e-4 cosine distance of
 * llama.cpp's, unit-length; a generation model without pooling_type embeds as with mean pooling;
 * a reranker (rank) is refused by name. Encoders: bert (separate or fused Q/K/V), nomic-bert (RoPE,
 * SwiGLU), and bert quantized by Gufo's own quantizer against llama.cpp on the quantized file's exact
 * F32 copy (the exactness bar of the quantized generative models). An encoder embeds several inputs
 * in one pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { embedInputs } from '../../src-main/engine/embed';
import { Engine } from '../../src-main/engine/engine';
import { cosineDistance, llamaEmbeddings } from '../support/llama';
import { mulberry32 } from '../support/random';
import { TEST_VOCAB, writeRandomModel, type ModelShape } from '../support/test-models';
import { BERT_CLS, BERT_SEP, BERT_VOCAB, writeRandomBert, type BertShape } from '../support/bert-model';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { writeDecodedCopy } from './quantized-models';

const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-embeddings-'));

afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const BASE: ModelShape = {
  arch: 'qwen3',
  nLayer: 2,
  nEmbd: 64,
  nFf: 128,
  nHead: 4,
  nHeadKv: 2,
  scale: 0.1,
  randomNorms: true,
};

/** BOS (1 in stories260K's vocabulary) then random ids. */
function inputIds(seed: number, length: number): number[] {
  const rng = mulberry32(seed);
  return [1, ...Array.from({ length: length - 1 }, () => 3 + Math.floor(rng.next() * (TEST_VOCAB - 3)))];
}

const INPUTS = [inputIds(11, 7), inputIds(12, 40), inputIds(13, 1)];

const CASES: [string, ModelShape, string][] = [
  ['qwen3, pooling_type 3 (last, Qwen3-Embedding)', { ...BASE, poolingType: 3 }, 'last'],
  ['qwen3, pooling_type 1 (mean)', { ...BASE, poolingType: 1 }, 'mean'],
  ['llama, pooling_type 2 (cls)', { ...BASE, arch: 'llama', poolingType: 2, seed: 5 }, 'cls'],
  ['llama, pooling_type 0 (none: the last token)', { ...BASE, arch: 'llama', poolingType: 0, seed: 6 }, 'last'],
];

describe('embeddings of decoder models equal llama.cpp', () => {
  for (const [name, shape, pooling] of CASES) {
    it(name, async () => {
      const path = join(dir, `${name.replace(/\W+/g, '-')}.gguf`);
      await writeRandomModel(path, shape);
      const ref = await llamaEmbeddings(path, INPUTS);
      await engine.load(path, { ctx: 128, maxBatch: 16 });
      const ours = await embedInputs(engine, INPUTS);
      expect(ours.pooling).toBe(pooling);
      expect(ours.promptTokens).toBe(INPUTS.reduce((sum, ids) => sum + ids.length, 0));
      expect(ours.embeddings).toHaveLength(INPUTS.length);
      for (const [i, v] of ours.embeddings.entries()) {
        expect(v).toHaveLength(shape.nEmbd);
        const distance = cosineDistance(v, ref[i]!);
        console.log(`${name}, input ${i} (${INPUTS[i]!.length} tokens): cosine distance ${distance.toExponential(2)}`);
        expect(distance).toBeLessThan(1e-4);
        expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      }
    });
  }

  it('a generation model without pooling_type embeds with mean pooling', async () => {
    const plain = join(dir, 'plain.gguf');
    const mean = join(dir, 'mean.gguf');
    await writeRandomModel(plain, { ...BASE, seed: 9 });
    await writeRandomModel(mean, { ...BASE, seed: 9, poolingType: 1 });
    await engine.load(plain, { ctx: 128 });
    expect(engine.model?.pooling).toBeNull();
    const ours = await embedInputs(engine, INPUTS);
    expect(ours.pooling).toBe('mean');
    const ref = await llamaEmbeddings(mean, INPUTS);
    for (const [i, v] of ours.embeddings.entries()) expect(cosineDistance(v, ref[i]!)).toBeLessThan(1e-4);
  });

  it('refuses a reranker (pooling_type rank) by name', async () => {
    const path = join(dir, 'rank.gguf');
    await writeRandomModel(path, { ...BASE, poolingType: 4 });
    await engine.load(path, { ctx: 128 });
    await expect(embedInputs(engine, INPUTS)).rejects.toThrow(/rank.pooling.*reranker|reranker/);
  });
});

/** The type name of tensor `name` in the file at `path`. */
function tensorType(path: string, name: string): string | undefined {
  const { gguf, file } = openGguf(path);
  try {
    return gguf.tensor(name)?.type.name;
  } finally {
    file.close();
  }
}

/** [CLS] random word pieces [SEP], as the WordPiece tokenizer frames an input. */
function bertIds(seed: number, length: number): number[] {
  const rng = mulberry32(seed);
  return [
    BERT_CLS,
    ...Array.from({ length: length - 2 }, () => 1000 + Math.floor(rng.next() * (BERT_VOCAB - 1000))),
    BERT_SEP,
  ];
}

const BERT_INPUTS = [bertIds(21, 9), bertIds(22, 70), bertIds(23, 2)];
const BERT: BertShape = { nLayer: 3, nEmbd: 64, nFf: 256, nHead: 4, poolingType: 1 };

describe('embeddings of bert encoders equal llama.cpp', () => {
  const BERT_CASES: [string, BertShape, string][] = [
    ['bert, pooling_type 1 (mean: all-MiniLM, e5)', BERT, 'mean'],
    ['bert, pooling_type 2 (cls: bge)', { ...BERT, poolingType: 2, seed: 4 }, 'cls'],
    ['bert with a fused attn_qkv', { ...BERT, fusedQkv: true, seed: 7 }, 'mean'],
    [
      'nomic-bert, pooling_type 1 (mean: nomic-embed-text; RoPE, SwiGLU)',
      { ...BERT, arch: 'nomic-bert', seed: 8 },
      'mean',
    ],
  ];
  for (const [name, shape, pooling] of BERT_CASES) {
    it(name, async () => {
      const path = join(dir, `${name.replace(/\W+/g, '-')}.gguf`);
      await writeRandomBert(path, shape);
      const ref = await llamaEmbeddings(path, BERT_INPUTS);
      await engine.load(path, { ctx: 128 });
      const ours = await embedInputs(engine, BERT_INPUTS);
      expect(ours.pooling).toBe(pooling);
      for (const [i, v] of ours.embeddings.entries()) {
        expect(v).toHaveLength(shape.nEmbd);
        const distance = cosineDistance(v, ref[i]!);
        console.log(
          `${name}, input ${i} (${BERT_INPUTS[i]!.length} tokens): cosine distance ${distance.toExponential(2)}`,
        );
        expect(distance).toBeLessThan(1e-4);
        expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      }
    });
  }

  it('an encoder only embeds: generation is refused by name', async () => {
    const path = join(dir, 'bert-generate.gguf');
    await writeRandomBert(path, BERT);
    await engine.load(path, { ctx: 128 });
    expect(engine.model?.architecture).toBe('bert');
    await expect(engine.generate([BERT_CLS], { maxTokens: 1 })).rejects.toThrow(/embedding model \(bert\)/);
  });

  it('several inputs share one pass while they fit the context, each still as llama.cpp embeds it alone', async () => {
    const path = join(dir, 'bert-batch.gguf');
    await writeRandomBert(path, { ...BERT, seed: 10 });
    const ref = await llamaEmbeddings(path, BERT_INPUTS);
    const submit = vi.spyOn(engine.gpu.device.queue, 'submit');
    try {
      // 9 + 70 + 2 tokens: one pass in a context of 128; two (9 + 70, then 2) in one of 80.
      for (const [ctx, passes] of [
        [128, 1],
        [80, 2],
      ] as const) {
        await engine.load(path, { ctx });
        submit.mockClear();
        const ours = await embedInputs(engine, BERT_INPUTS);
        expect(submit, `context ${ctx}`).toHaveBeenCalledTimes(passes);
        for (const [i, v] of ours.embeddings.entries())
          expect(cosineDistance(v, ref[i]!), `context ${ctx}, input ${i}`).toBeLessThan(1e-4);
      }
      // In a batch or alone, an input's hidden states are the same (up to the matmul kernels' summation order).
      const batched = await engine.hiddenStatesOfEach(BERT_INPUTS);
      for (const [i, ids] of BERT_INPUTS.entries()) {
        const alone = await engine.hiddenStates(ids);
        const worst = alone.reduce((max, a, j) => Math.max(max, Math.abs(a - batched[i]![j]!)), 0);
        console.log(`input ${i}: batched vs alone, largest difference ${worst.toExponential(2)}`);
        expect(worst).toBeLessThan(1e-5);
      }
    } finally {
      submit.mockRestore();
    }
  }, 180_000);

  // Rows of 256: Q4_K's blocks fit every matrix.
  const WIDE: BertShape = { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, poolingType: 1, seed: 9 };
  const MATRIX_TYPES = { Q8_0: 'Q8_0', Q4_K_M: 'Q4_K' } as const;
  for (const [type, matrixType] of Object.entries(MATRIX_TYPES)) {
    it(`bert quantized to ${type} by Gufo embeds as llama.cpp on its exact F32 copy`, async () => {
      const f32 = join(dir, `bert-wide.gguf`);
      const quantized = join(dir, `bert-${type}.gguf`);
      const exact = join(dir, `bert-${type}-exact-f32.gguf`);
      await writeRandomBert(f32, WIDE);
      await quantizeFile(f32, quantized, type as keyof typeof MATRIX_TYPES, { overwrite: true });
      expect(tensorType(quantized, 'blk.0.attn_q.weight')).toBe(matrixType);
      await writeDecodedCopy(quantized, exact);
      const ref = await llamaEmbeddings(exact, BERT_INPUTS);
      // llama.cpp on the quantized file itself rounds activations to 8 bits: printed, not exact.
      const onQuantized = await llamaEmbeddings(quantized, BERT_INPUTS);
      await engine.load(quantized, { ctx: 128 });
      const ours = await embedInputs(engine, BERT_INPUTS);
      for (const [i, v] of ours.embeddings.entries()) {
        const distance = cosineDistance(v, ref[i]!);
        const fromQuantized = cosineDistance(v, onQuantized[i]!);
        console.log(
          `bert ${type}, input ${i}: cosine distance ${distance.toExponential(2)} (llama.cpp on the ${type} file: ${fromQuantized.toExponential(2)})`,
        );
        expect(distance).toBeLessThan(1e-4);
        expect(fromQuantized).toBeLessThan(1e-2);
      }
    }, 120_000);
  }
});
