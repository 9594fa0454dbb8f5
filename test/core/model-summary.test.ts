import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeModel } from '../../src-main/core/model-summary';
import { openGguf } from '../../src-main/node/gguf-io';
import { llamaCpp, logs } from '../support/llama';
import { MODELS, STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel, type ModelShape } from '../support/test-models';

function summaryOf(path: string, context?: number) {
  const { gguf, file } = openGguf(path);
  try {
    return summarizeModel(gguf, context);
  } finally {
    file.close();
  }
}

/** What llama.cpp logs about a model and a context of `contextSize` cells. */
async function llamaReport(path: string, contextSize: number) {
  const from = logs.length;
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    const context = await model.createContext({ contextSize, threads: 1 });
    await context.dispose();
  } finally {
    await model.dispose();
  }
  const text = logs.slice(from).join('\n');
  // One line per cache: a model with sliding-window layers has two, the full one first.
  const kvs = [...text.matchAll(/llama_kv_cache: size =\s*([\d.]+) MiB \(\s*(\d+) cells/g)];
  const params = /model params\s*=\s*([\d.]+ \w)/.exec(text);
  if (kvs.length === 0 || !params) throw new Error(`llama.cpp did not report sizes:\n${text}`);
  return { kvMiB: kvs.map((kv) => Number(kv[1])), cells: kvs.map((kv) => Number(kv[2])), params: params[1]! };
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

  it('estimates the KV cache of a real 32-layer model from a vocab-only file', () => {
    // ggml-vocab-llama-spm carries Llama-2-7B's hyper-parameters: 32 layers, 32 heads of 128.
    const s = summaryOf(`${MODELS}/vocab/ggml-vocab-llama-spm.gguf`, 4096);
    expect(s.kvCache!.bytesPerToken).toBe(32 * 32 * (128 + 128) * 2);
    expect(s.kvCache!.bytes).toBe(2 * 2 ** 30);
    expect(s.weightBytes).toBe(0);
  });
});
