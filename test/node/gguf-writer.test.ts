import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { GgufType, StringArray, type GgufKv } from '../../src-main/core/gguf/values';
import { copyGguf, openGguf, tensorChunks, writeGguf } from '../../src-main/node/gguf-io';
import { readWithLlamaGguf } from '../support/ggml-oracle';
import { greedyCompletion } from '../support/llama';
import { MODELS, STORIES_260K } from '../support/paths';
import { sharedGgufFiles } from '../support/shared-files';
import { tempDir } from '../support/temp';

describe('GGUF writer', () => {
  for (const path of sharedGgufFiles().filter((p) => !basename(p).startsWith('v1-'))) {
    it(`rewrites ${basename(path)} byte for byte`, async () => {
      const out = join(tempDir(), 'copy.gguf');
      const { gguf, file } = openGguf(path);
      try {
        await copyGguf(gguf, out);
      } finally {
        file.close();
      }
      expect(readFileSync(out).equals(readFileSync(path))).toBe(true);
    });
  }

  it('upgrades a v1 file to v3 that llama.cpp reads, with the same tensors and metadata', async () => {
    const out = join(tempDir(), 'v3.gguf');
    const v1 = openGguf(join(MODELS, 'legacy/v1-tinyllamas-stories-260k-f32.gguf'));
    await copyGguf(v1.gguf, out);
    const v3 = openGguf(out);
    try {
      expect(v3.gguf.version).toBe(3);
      expect(v3.gguf.kvs.map((kv) => [kv.key, kv.type])).toEqual(v1.gguf.kvs.map((kv) => [kv.key, kv.type]));
      const tokens = (f: typeof v1) => (f.gguf.getArray('tokenizer.ggml.tokens')!.items as StringArray).toArray();
      expect(tokens(v3)).toEqual(tokens(v1));
      for (const t of v1.gguf.tensors) {
        expect(
          Buffer.from(v3.gguf.tensorData(v3.gguf.tensor(t.name)!)).equals(Buffer.from(v1.gguf.tensorData(t))),
        ).toBe(true);
      }
      const llama = readWithLlamaGguf(out);
      expect(llama?.tensors.map((t) => t.name)).toEqual(v1.gguf.tensors.map((t) => t.name));
    } finally {
      v1.file.close();
      v3.file.close();
    }
  });

  it('stores every metadata type, nested arrays included, and reads it back unchanged', async () => {
    const out = join(tempDir(), 'types.gguf');
    const kvs: GgufKv[] = [
      { key: 'u8', type: GgufType.UINT8, value: 255 },
      { key: 'i8', type: GgufType.INT8, value: -128 },
      { key: 'u16', type: GgufType.UINT16, value: 65535 },
      { key: 'i16', type: GgufType.INT16, value: -32768 },
      { key: 'u32', type: GgufType.UINT32, value: 4294967295 },
      { key: 'i32', type: GgufType.INT32, value: -2147483648 },
      { key: 'f32', type: GgufType.FLOAT32, value: Math.fround(0.1) },
      { key: 'bool', type: GgufType.BOOL, value: true },
      { key: 'string', type: GgufType.STRING, value: 'héllo \u{1F989} \uFEFF' },
      { key: 'u64', type: GgufType.UINT64, value: 2n ** 64n - 1n },
      { key: 'i64', type: GgufType.INT64, value: -(2n ** 63n) },
      { key: 'f64', type: GgufType.FLOAT64, value: Math.PI },
      { key: 'general.alignment', type: GgufType.UINT32, value: 64 },
      {
        key: 'floats',
        type: GgufType.ARRAY,
        value: { itemType: GgufType.FLOAT32, items: new Float32Array([1.5, -2, 3e-8]) },
      },
      { key: 'bools', type: GgufType.ARRAY, value: { itemType: GgufType.BOOL, items: new Uint8Array([1, 0, 1]) } },
      {
        key: 'u64s',
        type: GgufType.ARRAY,
        value: { itemType: GgufType.UINT64, items: new BigUint64Array([0n, 2n ** 64n - 1n]) },
      },
      {
        key: 'strings',
        type: GgufType.ARRAY,
        value: { itemType: GgufType.STRING, items: StringArray.fromStrings(['', 'a', '\uFEFFb', 'ünï']) },
      },
      {
        key: 'nested',
        type: GgufType.ARRAY,
        value: {
          itemType: GgufType.ARRAY,
          items: [
            { itemType: GgufType.INT32, items: new Int32Array([1, 2]) },
            { itemType: GgufType.STRING, items: StringArray.fromStrings(['x']) },
          ],
        },
      },
    ];
    const q8 = ggmlTypeByName('Q8_0')!;
    const tensors = [
      { name: 'a', type: ggmlTypeByName('F32')!, ne: [3] },
      { name: 'b', type: q8, ne: [64, 2] },
    ];
    const data = [new Uint8Array(12).fill(7), new Uint8Array(2 * 2 * q8.typeSize).fill(9)];
    await writeGguf(out, { kvs, tensors }, (i) => [data[i]!]);
    const { gguf, file } = openGguf(out);
    try {
      expect(gguf.alignment).toBe(64);
      expect(gguf.kvs.map((kv) => kv.key)).toEqual(kvs.map((kv) => kv.key));
      for (const kv of kvs) {
        const back = gguf.metadata.get(kv.key)!;
        expect(back.type, kv.key).toBe(kv.type);
        if (kv.key === 'strings')
          expect((back.value as { items: StringArray }).items.toArray()).toEqual(['', 'a', '\uFEFFb', 'ünï']);
        else if (kv.key === 'nested') {
          const nested = back.value as { items: readonly { items: unknown }[] };
          expect(Array.from(nested.items[0]!.items as Int32Array)).toEqual([1, 2]);
          expect((nested.items[1]!.items as StringArray).toArray()).toEqual(['x']);
        } else expect(back.value, kv.key).toEqual(kv.value);
      }
      expect(gguf.tensors.map((t) => [t.name, t.offset % 64])).toEqual([
        ['a', 0],
        ['b', 0],
      ]);
      gguf.tensors.forEach((t, i) => expect(Buffer.from(gguf.tensorData(t)).equals(Buffer.from(data[i]!))).toBe(true));
      expect(gguf.fileBytes % 64).toBe(0);
    } finally {
      file.close();
    }
  });

  it('writes a model that llama.cpp loads and runs', async () => {
    const out = join(tempDir(), 'stories-rewritten.gguf');
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      // A real rewrite, not a copy: new metadata, and tensors in a different order.
      const kvs: GgufKv[] = [
        ...gguf.kvs.filter((kv) => kv.key !== 'general.name'),
        { key: 'general.name', type: GgufType.STRING, value: 'rewritten by gufo' },
      ];
      const tensors = [...gguf.tensors].reverse();
      await writeGguf(out, { kvs, tensors }, (i) => tensorChunks(gguf, tensors[i]!, 1000));
    } finally {
      file.close();
    }
    expect(readFileSync(out).equals(readFileSync(STORIES_260K))).toBe(false);
    const text = await greedyCompletion(out, 'Once upon a time', 40);
    expect(text).toBe(
      ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.',
    );
  });

  it('leaves nothing behind, and keeps an existing file, when a write fails midway', async () => {
    const dir = tempDir();
    const out = join(dir, 'model.gguf');
    writeFileSync(out, 'previous contents');
    const f32 = ggmlTypeByName('F32')!;
    const spec = {
      kvs: [],
      tensors: [
        { name: 'a', type: f32, ne: [1024] },
        { name: 'b', type: f32, ne: [1024] },
      ],
    };
    // eslint-disable-next-line @typescript-eslint/require-await -- an async source (read with for await) that fails partway
    async function* failing(): AsyncIterable<Uint8Array> {
      yield new Uint8Array(1024);
      throw new Error('disk full (simulated)');
    }
    await expect(writeGguf(out, spec, (i) => (i === 0 ? [new Uint8Array(4096)] : failing()))).rejects.toThrow(
      'disk full',
    );
    expect(readFileSync(out, 'utf8')).toBe('previous contents');
    expect(readdirSync(dir)).toEqual(['model.gguf']);
  });

  it('refuses tensor data of the wrong length, naming the tensor', async () => {
    const dir = tempDir();
    const out = join(dir, 'short.gguf');
    const spec = { kvs: [], tensors: [{ name: 'w', type: ggmlTypeByName('F32')!, ne: [8] }] };
    await expect(writeGguf(out, spec, () => [new Uint8Array(31)])).rejects.toThrow(/tensor "w" got 31 of its 32 bytes/);
    await expect(writeGguf(out, spec, () => [new Uint8Array(33)])).rejects.toThrow(
      /tensor "w" got more than its 32 bytes/,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stops when aborted', async () => {
    const dir = tempDir();
    const controller = new AbortController();
    controller.abort();
    const spec = { kvs: [], tensors: [{ name: 'w', type: ggmlTypeByName('F32')!, ne: [8] }] };
    await expect(
      writeGguf(join(dir, 'x.gguf'), spec, () => [new Uint8Array(32)], { signal: controller.signal }),
    ).rejects.toThrow();
    expect(readdirSync(dir)).toEqual([]);
  });
});
