/**
 * Counts read from metadata are checked before they size anything (issue #14): against
 * llama.cpp's limits where a file holds no tensors to check them by, against its tensors where it
 * does, and with one entry per layer in per-layer arrays. The value fuzz (gguf-value-fuzz.test.ts)
 * covers the real models' keys; these cover what they lack: a tensor-less file, split parts,
 * per-layer arrays and sliding windows.
 */
import { describe, expect, it } from 'vitest';
import { memorySource } from '../../src-main/core/gguf/byte-source';
import { GgufError } from '../../src-main/core/gguf/errors';
import { parseGguf } from '../../src-main/core/gguf/reader';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { layoutGguf } from '../../src-main/core/gguf/writer';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { summarizeModel } from '../../src-main/core/model-summary';
import { readHParams } from '../../src-main/engine/model/hparams';
import { modelKvs, modelTensors, type ModelShape } from '../support/test-models';

const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
const f32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
const u32s = (key: string, values: number[]): GgufKv => ({
  key,
  type: GgufType.ARRAY,
  value: { itemType: GgufType.UINT32, items: new Uint32Array(values) },
});

const small: ModelShape = { nLayer: 2, nEmbd: 64, nFf: 128, nHead: 4, nHeadKv: 2 };

/** A model file in memory (zero weights): `shape`'s metadata with `kvs` in place of those of the same key. */
function model(shape: ModelShape, kvs: GgufKv[] = [], withTensors = true) {
  const replaced = new Set(kvs.map((kv) => kv.key));
  const f32Type = ggmlTypeByName('F32')!;
  const tensors = withTensors ? modelTensors(shape).map(({ name, ne }) => ({ name, ne, type: f32Type })) : [];
  const layout = layoutGguf({ kvs: [...modelKvs(shape).filter((kv) => !replaced.has(kv.key)), ...kvs], tensors });
  const bytes = new Uint8Array(layout.fileBytes);
  bytes.set(layout.header);
  return parseGguf(memorySource(bytes), 'm.gguf');
}

describe('metadata counts', () => {
  it("a file without tensors may claim at most llama.cpp's 512 layers", () => {
    expect(summarizeModel(model(small, [u32('llama.block_count', 512)], false)).layers).toBe(512);
    const many = model(small, [u32('llama.block_count', 1_000_000)], false);
    expect(() => summarizeModel(many)).toThrow(GgufError);
    expect(() => summarizeModel(many)).toThrow(
      'm.gguf: metadata "llama.block_count": 1000000 layers, more than the 512 llama.cpp loads',
    );
  });

  it('a file with its tensors must claim the layers they hold; one part of a split set need not', () => {
    const fewer = model(small, [u32('llama.block_count', 1)]);
    expect(() => summarizeModel(fewer)).toThrow(
      'm.gguf: metadata "llama.block_count": 1 layers, but the file\'s tensors hold 2 (blk.0 to blk.1)',
    );
    expect(() => readHParams(fewer)).toThrow('metadata "llama.block_count": 1 layers');
    const part = model(small, [u32('llama.block_count', 40), { key: 'split.count', type: GgufType.UINT16, value: 3 }]);
    expect(summarizeModel(part).layers).toBe(40);
  });

  it('per-layer head counts need one entry per layer, each a count', () => {
    expect(summarizeModel(model(small, [u32s('llama.attention.head_count_kv', [2, 1])])).kvHeads).toEqual([2, 1]);
    const short = model(small, [u32s('llama.attention.head_count_kv', [2, 2, 2])]);
    expect(() => summarizeModel(short)).toThrow(
      'm.gguf: metadata "llama.attention.head_count_kv": has 3 entries for 2 layers',
    );
    const floats: GgufKv = {
      key: 'llama.attention.head_count',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.FLOAT32, items: new Float32Array([4, Number.NaN]) },
    };
    expect(() => summarizeModel(model(small, [floats]))).toThrow(
      'metadata "llama.attention.head_count": must be a whole number or one per layer, found an array of float32',
    );
  });

  it("a sliding window or its pattern out of range is the file's error, in the summary and the engine", () => {
    const gemma: ModelShape = { ...small, arch: 'gemma2' };
    expect(summarizeModel(model(gemma, [u32('gemma2.attention.sliding_window', 128)])).kvCache).not.toBeNull();
    const nan = model(gemma, [f32('gemma2.attention.sliding_window', Number.NaN)]);
    expect(() => summarizeModel(nan)).toThrow(
      'm.gguf: metadata "gemma2.attention.sliding_window": must be a whole number, found float32 NaN',
    );
    expect(() => readHParams(nan)).toThrow(
      /^m\.gguf: metadata "gemma2\.attention\.sliding_window": must be a whole number/,
    );
    const pattern: GgufKv = { key: 'gemma2.attention.sliding_window_pattern', type: GgufType.UINT64, value: 2n ** 63n };
    expect(() => summarizeModel(model(gemma, [pattern]))).toThrow(
      '"gemma2.attention.sliding_window_pattern": 9223372036854775808 is out of range',
    );
  });

  it('the engine refuses a float hyper-parameter that is not finite, naming it', () => {
    expect(() => readHParams(model(small, [f32('llama.attention.layer_norm_rms_epsilon', Number.NaN)]))).toThrow(
      'm.gguf: metadata "llama.attention.layer_norm_rms_epsilon": NaN is not a finite number',
    );
    expect(() => readHParams(model(small, [f32('llama.rope.freq_base', Infinity)]))).toThrow(
      'metadata "llama.rope.freq_base": Infinity is not a finite number',
    );
  });
});
