import { closeSync, ftruncateSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import type { ByteSource } from '../../src-main/core/gguf/byte-source';
import { GgufError } from '../../src-main/core/gguf/errors';
import { parseGguf } from '../../src-main/core/gguf/reader';
import { layoutGguf } from '../../src-main/core/gguf/writer';
import { GgufType, StringArray } from '../../src-main/core/gguf/values';
import { openGguf } from '../../src-main/node/gguf-io';
import { openFile } from '../../src-main/node/mapped-file';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const MiB = 2 ** 20;

function withoutMmap<T>(f: () => T): T {
  process.env.GUFO_NO_MMAP = '1';
  try {
    return f();
  } finally {
    delete process.env.GUFO_NO_MMAP;
  }
}

/** Writes `bytes` at `offset` of a sparse file of `size` bytes. */
function sparseFile(path: string, size: number, writes: [number, Uint8Array][]): void {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, size);
    for (const [offset, bytes] of writes) writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

describe('memory-mapped files', () => {
  it('maps by default and every tensor view holds the bytes on disk', () => {
    const disk = readFileSync(STORIES_260K);
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      expect(file.access).toBe('mmap');
      for (const t of gguf.tensors) {
        const start = gguf.dataOffset + t.offset;
        expect(Buffer.from(gguf.tensorData(t)).equals(disk.subarray(start, start + t.bytes)), t.name).toBe(true);
      }
    } finally {
      file.close();
    }
  });

  it('hands out views into one mapping, not copies', () => {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const [a, b] = [gguf.tensorData(gguf.tensors[0]!), gguf.tensorData(gguf.tensors[1]!)];
      expect(a.buffer).toBe(b.buffer);
      expect(a.buffer.byteLength).toBe(gguf.fileBytes);
    } finally {
      file.close();
    }
  });

  it('falls back to positional reads when asked, and reports it', () => {
    const disk = readFileSync(STORIES_260K);
    const { gguf, file } = withoutMmap(() => openGguf(STORIES_260K));
    try {
      expect(file.access).toBe('read');
      const t = gguf.tensors[5]!;
      const start = gguf.dataOffset + t.offset;
      expect(Buffer.from(gguf.tensorData(t)).equals(disk.subarray(start, start + t.bytes))).toBe(true);
    } finally {
      file.close();
    }
  });

  it('reads ranges that cross mapping windows and ranges longer than a window', () => {
    const path = join(tempDir(), 'sparse.bin');
    const size = 1600 * MiB;
    const marks: [number, Uint8Array][] = [
      [512 * MiB - 3, Uint8Array.of(1, 2, 3, 4, 5, 6)],
      [1024 * MiB + 100, Uint8Array.of(7, 8)],
      [size - 4, Uint8Array.of(9, 10, 11, 12)],
    ];
    sparseFile(path, size, marks);
    for (const mode of ['mmap', 'read'] as const) {
      const file = mode === 'mmap' ? openFile(path) : withoutMmap(() => openFile(path));
      try {
        expect(file.access).toBe(mode);
        expect(Array.from(file.bytes(512 * MiB - 3, 6))).toEqual([1, 2, 3, 4, 5, 6]);
        expect(Array.from(file.bytes(size - 6, 6))).toEqual([0, 0, 9, 10, 11, 12]);
        if (mode === 'mmap') {
          // 700 MiB in one view: only the touched pages are read.
          const long = file.bytes(400 * MiB, 700 * MiB);
          expect(long.byteLength).toBe(700 * MiB);
          expect(Array.from(long.subarray(112 * MiB - 3, 112 * MiB + 3))).toEqual([1, 2, 3, 4, 5, 6]);
          expect(Array.from(long.subarray(624 * MiB + 100, 624 * MiB + 102))).toEqual([7, 8]);
        }
        expect(() => file.bytes(size - 2, 4)).toThrow(RangeError);
      } finally {
        file.close();
      }
    }
  });

  it('opening a 20 GB model reads its header and no tensor data', () => {
    const path = join(tempDir(), 'huge.gguf');
    const q4k = ggmlTypeByName('Q4_K')!;
    const vocab = Array.from({ length: 150_000 }, (_, i) => `tok${i}`);
    const tensors = Array.from({ length: 160 }, (_, i) => ({
      name: `blk.${i}.ffn_up.weight`,
      type: q4k,
      ne: [8192, 28672],
    }));
    const layout = layoutGguf({
      kvs: [
        { key: 'general.architecture', type: GgufType.STRING, value: 'llama' },
        {
          key: 'tokenizer.ggml.tokens',
          type: GgufType.ARRAY,
          value: { itemType: GgufType.STRING, items: StringArray.fromStrings(vocab) },
        },
      ],
      tensors,
    });
    expect(layout.fileBytes).toBeGreaterThan(20e9);
    sparseFile(path, layout.fileBytes, [[0, layout.header]]);
    const file = openFile(path);
    let requested = 0;
    const counting: ByteSource = {
      size: file.size,
      access: file.access,
      bytes: (offset, length) => ((requested += length), file.bytes(offset, length)),
    };
    try {
      const gguf = parseGguf(counting, path);
      expect(gguf.tensors).toHaveLength(160);
      expect(gguf.getArray('tokenizer.ggml.tokens')!.items).toHaveLength(150_000);
      // The parser pulls the header in 1 MiB chunks; the last one may overhang into the data.
      expect(requested).toBeLessThan(2 * (layout.dataOffset + MiB));
      expect(gguf.tensorData(gguf.tensors[159]!).byteLength).toBe(gguf.tensors[159]!.bytes);
    } finally {
      file.close();
    }
  });

  it('turns a truncated file on disk into a GgufError, never a crash', () => {
    const dir = tempDir();
    const disk = readFileSync(STORIES_260K);
    for (const length of [0, 3, 24, 700, 14_000, 14_200, disk.length - 1]) {
      const path = join(dir, `cut-${length}.gguf`);
      writeFileSync(path, disk.subarray(0, length));
      expect(() => openGguf(path), `cut at ${length}`).toThrow(GgufError);
      try {
        openGguf(path);
      } catch (err) {
        expect((err as Error).message.startsWith(`${path}: `)).toBe(true);
      }
    }
  });

  it('refuses a folder with a message naming it', () => {
    const dir = tempDir();
    expect(() => openGguf(dir)).toThrow(`${dir}: not a regular file`);
  });
});
