import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memorySource } from '../../src-main/core/gguf/byte-source';
import { GgufError } from '../../src-main/core/gguf/errors';
import type { GgufFile } from '../../src-main/core/gguf/gguf-file';
import { ggufToJson } from '../../src-main/core/gguf/json';
import { parseGguf } from '../../src-main/core/gguf/reader';
import { GgufType } from '../../src-main/core/gguf/values';
import { summarizeModel } from '../../src-main/core/model-summary';
import { MODELS } from '../support/paths';
import { mulberry32 } from '../support/random';

const EXTREMES = [0n, 1n, 0xffn, 0xffffffffn, 0x7fffffffn, 2n ** 32n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n];

/** One random corruption of `base`, concentrated on the header where the parser's decisions are. */
function mutate(base: Uint8Array, headerEnd: number, random: () => number): Uint8Array {
  const pick = (n: number) => Math.floor(random() * n);
  const at = pick(Math.min(base.length, headerEnd + 64));
  switch (pick(5)) {
    case 0: {
      const out = base.slice();
      for (let i = 0, n = 1 + pick(4); i < n; i++) out[pick(Math.min(out.length, headerEnd))] = pick(256);
      return out;
    }
    case 1: {
      const out = base.slice();
      const value = random() < 0.7 ? EXTREMES[pick(EXTREMES.length)]! : BigInt(pick(2 ** 31));
      const view = new DataView(out.buffer);
      if (at + 8 <= out.length) view.setBigUint64(at, value & (2n ** 64n - 1n), true);
      return out;
    }
    case 2:
      return base.slice(0, pick(base.length));
    case 3: {
      const length = 1 + pick(64);
      const out = new Uint8Array(base.length - Math.min(length, base.length - at));
      out.set(base.subarray(0, at));
      out.set(base.subarray(at + length), at);
      return out;
    }
    default: {
      const chunk = base.subarray(at, at + 1 + pick(64));
      const out = new Uint8Array(base.length + chunk.length);
      out.set(base.subarray(0, at));
      out.set(chunk, at);
      out.set(base.subarray(at), at + chunk.length);
      return out;
    }
  }
}

/** What a successful parse promises, checked without trusting the parser. */
function checkConsistent(gguf: GgufFile, size: number): void {
  const spans = gguf.tensors.map((t) => [t.offset, t.offset + t.bytes] as const).sort((a, b) => a[0] - b[0]);
  for (const t of gguf.tensors) {
    expect(t.offset % gguf.alignment).toBe(0);
    expect(gguf.dataOffset + t.offset + t.bytes).toBeLessThanOrEqual(size);
    expect((t.ne[0] ?? 1) % t.type.blockSize).toBe(0);
    expect(t.elements).toBe(t.ne.reduce((a, b) => a * b, 1));
    expect(gguf.tensorData(t).byteLength).toBe(t.bytes);
  }
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
  for (const kv of gguf.kvs) {
    if (kv.type === GgufType.ARRAY && typeof kv.value === 'object' && kv.value.itemType === GgufType.STRING) {
      const items = kv.value.items;
      if (items.length > 0) expect(typeof items.at(items.length - 1)).toBe('string');
    }
  }
  JSON.stringify(ggufToJson(gguf));
  summarizeModel(gguf, 512);
}

const seeds: [string, number][] = [
  ['stories260K.gguf', 2500],
  ['llama-2-tiny-random.gguf', 1200],
  ['legacy/v1-tinyllamas-stories-260k-f32.gguf', 1500],
  ['legacy/v1-ggml-vocab-llama.gguf', 400],
  ['legacy/v2-ggml-vocab-falcon.gguf', 300],
  ['vocab/ggml-vocab-bert-bge.gguf', 800],
  ['vocab/ggml-vocab-phi-3.gguf', 300],
];

describe('GGUF reader under fuzzing', () => {
  for (const [name, rounds] of seeds) {
    it(`${basename(name)}: ${rounds} mutations either parse consistently or throw GgufError`, () => {
      const base = new Uint8Array(readFileSync(join(MODELS, name)));
      const headerEnd = Math.min(parseGguf(memorySource(base), name).dataOffset, base.length);
      let accepted = 0;
      for (let round = 0; round < rounds; round++) {
        const seed = round * 7919 + name.length;
        const random = mulberry32(seed);
        const bytes = mutate(base, headerEnd, () => random.next());
        let gguf: GgufFile;
        try {
          gguf = parseGguf(memorySource(bytes), 'fuzz.gguf');
        } catch (err) {
          if (!(err instanceof GgufError)) throw new Error(`seed ${seed}: ${(err as Error).stack}`);
          expect(err.message.startsWith('fuzz.gguf: ')).toBe(true);
          continue;
        }
        accepted++;
        checkConsistent(gguf, bytes.length);
      }
      // Seeds name reproducible cases; mutations past the header must still parse, so both outcomes occur.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(rounds);
    });
  }
});
