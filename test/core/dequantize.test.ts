import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dequantizeExpert, dequantizeRange, dequantizeRows, TensorRangeError } from '../../src-main/core/dequantize';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import type { GgufFile } from '../../src-main/core/gguf/gguf-file';
import { decodedValues } from '../../src-main/core/quants/decoders';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { gufo } from '../support/cli';
import { llamaDequantize, llamaQuantize } from '../support/ggml-oracle';
import { mulberry32 } from '../support/random';
import { tempDir } from '../support/temp';
import { readFileSync } from 'node:fs';

const Q4_K = ggmlTypeByName('Q4_K')!;
const [COLS, ROWS, EXPERTS] = [512, 6, 4];

/** A file with one stacked expert tensor [512, 6, 4] quantized to Q4_K by llama.cpp. */
async function expertFile(dir: string): Promise<{ path: string; blocks: Uint8Array }> {
  const rng = mulberry32(7);
  const values = Float32Array.from({ length: COLS * ROWS * EXPERTS }, () => rng.gaussian());
  const blocks = llamaQuantize(Q4_K.id, values, ROWS * EXPERTS, COLS);
  const path = join(dir, 'experts.gguf');
  await writeGguf(
    path,
    { kvs: [], tensors: [{ name: 'blk.0.ffn_up_exps.weight', type: Q4_K, ne: [COLS, ROWS, EXPERTS] }] },
    () => [blocks],
  );
  return { path, blocks };
}

describe('range decoding', () => {
  it('decodes expert e of a stacked tensor exactly as llama.cpp decodes its blocks', async () => {
    const { path, blocks } = await expertFile(tempDir());
    const { gguf, file } = openGguf(path);
    try {
      const tensor = gguf.tensors[0]!;
      const expertBytes = ((COLS * ROWS) / Q4_K.blockSize) * Q4_K.typeSize;
      for (let e = 0; e < EXPERTS; e++) {
        const ours = dequantizeExpert(gguf, tensor, e);
        const theirs = llamaDequantize(Q4_K.id, blocks.subarray(e * expertBytes, (e + 1) * expertBytes), COLS * ROWS);
        expect(ours.length).toBe(COLS * ROWS);
        expect(
          ours.every((v, i) => Object.is(v, theirs[i])),
          `expert ${e}`,
        ).toBe(true);
      }
      const rows = dequantizeRows(gguf, tensor, 7, 9);
      const all = llamaDequantize(Q4_K.id, blocks, COLS * ROWS * EXPERTS);
      expect(rows.every((v, i) => Object.is(v, all[7 * COLS + i]))).toBe(true);
    } finally {
      file.close();
    }
  });

  it('decodes into a given buffer (a decodedValues one too) and refuses one too small, naming the tensor', async () => {
    const { path, blocks } = await expertFile(tempDir());
    const { gguf, file } = openGguf(path);
    try {
      const tensor = gguf.tensors[0]!;
      const all = llamaDequantize(Q4_K.id, blocks, COLS * ROWS * EXPERTS);
      for (const into of [new Float32Array(4 * COLS), decodedValues(4 * COLS)]) {
        const rows = dequantizeRows(gguf, tensor, 7, 10, into);
        expect(rows.buffer).toBe(into.buffer);
        expect(rows.length).toBe(3 * COLS);
        expect(rows.every((v, i) => Object.is(v, all[7 * COLS + i]))).toBe(true);
      }
      expect(() => dequantizeRows(gguf, tensor, 0, 5, new Float32Array(4 * COLS))).toThrow(
        /experts\.gguf: tensor "blk\.0\.ffn_up_exps\.weight": range \[0, 2560\) needs 2560 values, the buffer holds 2048/,
      );
    } finally {
      file.close();
    }
  });

  it('reads only the blocks of the range', async () => {
    const { path } = await expertFile(tempDir());
    const { gguf, file } = openGguf(path);
    try {
      const requests: [number, number][] = [];
      const counting = Object.create(gguf, {
        source: {
          value: { ...gguf.source, bytes: (o: number, n: number) => (requests.push([o, n]), gguf.source.bytes(o, n)) },
        },
      }) as GgufFile;
      dequantizeExpert(counting, gguf.tensors[0]!, 2);
      const expertBytes = ((COLS * ROWS) / Q4_K.blockSize) * Q4_K.typeSize;
      expect(requests).toEqual([[gguf.dataOffset + 2 * expertBytes, expertBytes]]);
    } finally {
      file.close();
    }
  });

  it('refuses ranges that are off block boundaries or outside the tensor, naming the tensor', async () => {
    const { path } = await expertFile(tempDir());
    const { gguf, file } = openGguf(path);
    try {
      const t = gguf.tensors[0]!;
      expect(() => dequantizeRange(gguf, t, 100, 356)).toThrow(TensorRangeError);
      expect(() => dequantizeRange(gguf, t, 100, 356)).toThrow(
        /tensor "blk.0.ffn_up_exps.weight": range \[100, 356\) does not start and end on Q4_K block boundaries/,
      );
      expect(() => dequantizeRange(gguf, t, 0, t.elements + 256)).toThrow(/outside its 12288 elements/);
      expect(() => dequantizeExpert(gguf, t, 4)).toThrow(/has experts 0 to 3, not 4/);
    } finally {
      file.close();
    }
  });

  it('gufo dequant writes raw little-endian f32 of a tensor or one expert', async () => {
    const dir = tempDir();
    const { path, blocks } = await expertFile(dir);
    const out = join(dir, 'e1.f32');
    const r = gufo(['dequant', path, 'blk.0.ffn_up_exps.weight', '--expert', '1', '-o', out, '--json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'Q4_K', elements: COLS * ROWS, bytes: COLS * ROWS * 4 });
    const written = new Float32Array(readFileSync(out).buffer.slice(0));
    const theirs = llamaDequantize(Q4_K.id, blocks, COLS * ROWS * EXPERTS).subarray(COLS * ROWS, 2 * COLS * ROWS);
    expect(written.every((v, i) => Object.is(v, theirs[i]))).toBe(true);
    expect(gufo(['dequant', path, 'nope', '-o', out]).stderr).toBe(`gufo: ${path}: no tensor named "nope"\n`);
  });

  it('gufo dequant writes a tensor of several chunks (1M values each, one reused buffer) as llama.cpp decodes it', async () => {
    const dir = tempDir();
    const [cols, rows] = [4096, 300]; // 1.17 chunks of whole rows
    const rng = mulberry32(8);
    const blocks = llamaQuantize(
      Q4_K.id,
      Float32Array.from({ length: cols * rows }, () => rng.gaussian()),
      rows,
      cols,
    );
    const path = join(dir, 'wide.gguf');
    await writeGguf(path, { kvs: [], tensors: [{ name: 'w', type: Q4_K, ne: [cols, rows] }] }, () => [blocks]);
    const out = join(dir, 'w.f32');
    expect(gufo(['dequant', path, 'w', '-o', out]).stderr).toBe('');
    const written = new Float32Array(readFileSync(out).buffer.slice(0));
    const theirs = llamaDequantize(Q4_K.id, blocks, cols * rows);
    expect(written.length).toBe(cols * rows);
    expect(written.every((v, i) => Object.is(v, theirs[i]))).toBe(true);
  });
});
