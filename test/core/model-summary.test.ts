import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { kvCacheGgmlType } from '../../src-main/core/kv-cache-types';
import { estimateKvCache, summarizeModel } from '../../src-main/core/model-summary';
import { openGguf } from '../../src-main/node/gguf-io';
import { llamaCpp, logs } from '../support/llama';
import { MODELS, STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel, type ModelShape } from '../support/test-models';

function summaryOf(path: string, context?: number, kvTypes?: { k: string; v: string }) {
  const { gguf, file } = openGguf(path);
  try {
    return summarizeModel(gguf, context, kvTypes);
  } finally {
    file.close();
  }
}

/** What llama.cpp logs about a model and a context of `contextSize` cells (with `kv`, its --cache-type-k/-v). */
async function llamaReport(path: string, contextSize: number, kv?: { k: string; v: string }) {
  const from = logs.length;
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    // A quantized V cache needs flash attention in llama.cpp.
    const cache = kv && {
      flashAttention: true,
      experimentalKvCacheKeyType: kvCacheGgmlType(kv.k).name as 'F16',
      experimentalKvCacheValueType: kvCacheGgmlType(kv.v).name as 'F16',
    };
    const context = await model.createContext({ contextSize, threads: 1, ...cache });
    await context.dispose();
  } finally {
    await model.dispose();
  }
  const text = logs.slice(from).join('\n');
  // One line per cache: a model with sliding-window layers has two, the full one first.
  const kvs = [...text.matchAll(/llama_kv_cache: size =\s*([\d.]+) MiB \(\s*(\d+) cells/g)];
  const types = /K \((\w+)\):.*V \((\w+)\)/.exec(text.slice(text.lastIndexOf('llama_kv_cache: size')));
  const params = /model params\s*=\s*([\d.]+ \w)/.exec(text);
  if (kvs.length === 0 || !params) throw new Error(`llama.cpp did not report sizes:\n${text}`);
  return {
    kvMiB: kvs.map((kv) => Number(kv[1])),
    cells: kvs.map((kv) => Number(kv[2])),
    params: params[1]!,
    types: types && { k: types[1]!, v: types[2]! },
  };
}

describe('model summary', () => {
  it('describes stories260K from its metadata', () => {
    const s = summaryOf(STORIES_260K);
    expect(s).toMatchObject({
      architecture: 'llama',
      contextLength: 2048,
      layers: 5,
      heads: 8,
      kvHeads: 4,
      headSize: 8,
      valueHeadSize: 8,
      embeddingSize: 64,
      feedForwardSize: 172,
      vocabSize: 512,
      tokenizerModel: 'llama',
      hasChatTemplate: false,
      fileType: null,
      weightBytes: 1185376 - 14176,
    });
    expect(s.typeMix).toEqual([{ type: 'F32', tensors: 48, parameters: 292_800, bytes: 1_171_200 }]);
  });

  it('names the file type and mixes F16 with F32 for llama-2-tiny-random', () => {
    const s = summaryOf(TINY_RANDOM_LLAMA);
    expect(s.fileType).toBe('F16');
    expect(s.typeMix.map((t) => [t.type, t.tensors])).toEqual([
      ['F16', 9],
      ['F32', 3],
    ]);
    expect(s.vocabSize).toBe(32000);
  });

  for (const [path, contexts] of [
    [STORIES_260K, [256, 1024, 4096]],
    [TINY_RANDOM_LLAMA, [512, 2048]],
  ] as const) {
    it(`matches llama.cpp's parameter count and KV cache size for ${path.split('/').pop()}`, async () => {
      for (const context of contexts) {
        const llama = await llamaReport(path, context);
        const s = summaryOf(path, llama.cells[0]);
        expect(llama.cells).toHaveLength(1);
        expect(s.kvCache!.context).toBe(llama.cells[0]);
        // llama.cpp prints MiB with two decimals (ties to even, unlike toFixed): compare within half a unit.
        expect(Math.abs(s.kvCache!.bytes / 2 ** 20 - llama.kvMiB[0]!), `context ${context}`).toBeLessThanOrEqual(
          0.005 + 1e-9,
        );
        const [value, unit] = llama.params.split(' ');
        const scale = { K: 1e3, M: 1e6, B: 1e9 }[unit as 'K' | 'M' | 'B'];
        expect((s.parameters / scale).toFixed(2)).toBe(value);
      }
    });
  }

  // Sliding-window layers get a smaller cache of their own: window + one micro-batch, padded.
  const windowed: [string, ModelShape][] = [
    ['gemma2', { arch: 'gemma2', nLayer: 4, nEmbd: 64, nFf: 128, nHead: 4, nHeadKv: 2, slidingWindow: 64 }],
    [
      'gemma3',
      { arch: 'gemma3', nLayer: 7, nEmbd: 64, nFf: 128, nHead: 4, nHeadKv: 1, headDim: 32, slidingWindow: 300 },
    ],
  ];
  for (const [arch, shape] of windowed) {
    it(`matches llama.cpp's two KV caches for a ${arch} with sliding-window layers`, async () => {
      const path = join(tempDir(), `${arch}.gguf`);
      await writeRandomModel(path, shape);
      for (const context of [512, 2048]) {
        const llama = await llamaReport(path, context);
        expect(llama.cells, 'a full cache and a windowed one').toHaveLength(2);
        const s = summaryOf(path, llama.cells[0]);
        const bytes = llama.kvMiB[0]! + llama.kvMiB[1]!;
        expect(Math.abs(s.kvCache!.bytes / 2 ** 20 - bytes), `context ${context}`).toBeLessThanOrEqual(0.01 + 1e-9);
        expect(s.kvCache!.formula).toContain(`(${llama.cells[1]})`);
      }
    });
  }

  it("takes the cache types' bytes from the ggml type table: q8_0 34 bytes a block of 32, q4_0 18", () => {
    // llama.cpp's ggml_type_traits: block_q8_0 is an f16 scale and 32 int8s, block_q4_0 an f16 scale and 16 bytes of nibbles.
    expect([ggmlTypeByName('q8_0')!.typeSize, ggmlTypeByName('q8_0')!.blockSize]).toEqual([34, 32]);
    expect([ggmlTypeByName('q4_0')!.typeSize, ggmlTypeByName('q4_0')!.blockSize]).toEqual([18, 32]);
    // Llama-2-7B's shape: 32 layers, 32 KV heads of 128, at 4096 tokens (f16: 2 GiB).
    const at = (k: string, v = k) => estimateKvCache(32, 32, 128, 128, 4096, null, { k, v });
    const cells = 4096 * 32 * 32 * 128 * 2; // K and V elements
    expect(at('f16').bytes).toBe(cells * 2);
    expect(at('q8_0').bytes).toBe((cells / 32) * 34);
    expect(at('q4_0').bytes).toBe((cells / 32) * 18);
    expect(at('f32').bytes).toBe(cells * 4);
    expect(at('q8_0', 'f16').bytes).toBe((cells / 2 / 32) * 34 + (cells / 2) * 2);
    expect(at('q8_0').bytesPerToken).toBe(at('q8_0').bytes / 4096);
    expect(at('q8_0').formula).toBe(
      'context × Σ_layers kv_heads × (head_size_k + head_size_v) × 1.0625 bytes (Q8_0 K and V)',
    );
    expect(at('q4_0', 'f16').formula).toContain('(head_size_k × 0.5625 + head_size_v × 2) bytes (Q4_0 K, F16 V)');
    // A block may not straddle two heads, as llama.cpp refuses.
    expect(() => estimateKvCache(5, 4, 8, 8, 256, null, { k: 'q8_0', v: 'f16' })).toThrow(
      "a q8_0 KV cache needs a head size that is a multiple of 32; this model's heads have 8",
    );
  });

  it("matches llama.cpp's KV cache size with q8_0 and q4_0 caches", async () => {
    // Heads of 32: whole q8_0 and q4_0 blocks.
    const path = join(tempDir(), 'heads-32.gguf');
    await writeRandomModel(path, { nLayer: 3, nEmbd: 128, nFf: 256, nHead: 4, nHeadKv: 2 });
    for (const kv of [
      { k: 'q8_0', v: 'q8_0' },
      { k: 'q4_0', v: 'q4_0' },
      { k: 'q8_0', v: 'f16' },
    ]) {
      const llama = await llamaReport(path, 1024, kv);
      expect(llama.types, 'llama.cpp used the types asked for').toEqual({ k: kv.k, v: kv.v });
      const s = summaryOf(path, llama.cells[0], kv).kvCache!;
      expect(s.bytes).toBe(estimateKvCache(3, 2, 32, 32, 1024, null, kv).bytes);
      expect(Math.abs(s.bytes / 2 ** 20 - llama.kvMiB[0]!), `${kv.k}/${kv.v}`).toBeLessThanOrEqual(0.005 + 1e-9);
    }
  });

  it('estimates the KV cache of a real 32-layer model from a vocab-only file', () => {
    // ggml-vocab-llama-spm carries Llama-2-7B's hyper-parameters: 32 layers, 32 heads of 128.
    const s = summaryOf(`${MODELS}/vocab/ggml-vocab-llama-spm.gguf`, 4096);
    expect(s.kvCache!.bytesPerToken).toBe(32 * 32 * (128 + 128) * 2);
    expect(s.kvCache!.bytes).toBe(2 * 2 ** 30);
    expect(s.weightBytes).toBe(0);
  });
});
