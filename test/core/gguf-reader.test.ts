import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType } from '../../src-main/core/gguf/values';
import { openGguf } from '../../src-main/node/gguf-io';
import { readWithLlamaGguf } from '../support/ggml-oracle';
import { MODELS, STORIES_260K } from '../support/paths';
import { sharedGgufFiles } from '../support/shared-files';

const files = sharedGgufFiles();

describe('GGUF reader against llama.cpp', () => {
  it('finds the shared test files', () => {
    expect(files.length).toBeGreaterThanOrEqual(17);
  });

  // llama.cpp no longer reads GGUF v1, so v1 files are checked against their v3 twins below.
  for (const path of files.filter((p) => !basename(p).startsWith('v1-'))) {
    it(`reads ${basename(path)} exactly as gguf_init_from_file does`, () => {
      const llama = readWithLlamaGguf(path);
      expect(llama, 'llama.cpp reads the file').not.toBeNull();
      const { gguf, file } = openGguf(path);
      try {
        expect(gguf.version).toBe(llama!.version);
        expect(gguf.alignment).toBe(llama!.alignment);
        if (gguf.tensors.length > 0) expect(gguf.dataOffset).toBe(llama!.dataOffset);
        expect(gguf.kvs.map((kv) => kv.key)).toEqual(llama!.kvs.map((kv) => kv.key));
        gguf.kvs.forEach((kv, i) => {
          const theirs = llama!.kvs[i]!;
          expect(kv.type, kv.key).toBe(theirs.type);
          if (typeof kv.value === 'bigint')
            return expect(kv.value, kv.key).toBe(BigInt(theirs.value as number | bigint));
          if (kv.type !== GgufType.ARRAY) return expect(kv.value, kv.key).toEqual(theirs.value);
          const array = kv.value as Exclude<typeof kv.value, string | number | bigint | boolean>;
          const their = theirs.value as { itemType: number; items: string[] | Uint8Array };
          expect(array.itemType, kv.key).toBe(their.itemType);
          if (array.itemType === GgufType.STRING) {
            expect(array.items.toArray(), kv.key).toEqual(their.items);
          } else if (array.itemType !== GgufType.ARRAY) {
            const bytes = new Uint8Array(array.items.buffer, array.items.byteOffset, array.items.byteLength);
            expect(Buffer.from(bytes).equals(Buffer.from(their.items as Uint8Array)), kv.key).toBe(true);
          }
        });
        expect(gguf.tensors.map((t) => [t.name, t.type.id, t.offset, t.bytes])).toEqual(
          llama!.tensors.map((t) => [t.name, t.type, t.offset, t.bytes]),
        );
      } finally {
        file.close();
      }
    });
  }
});

describe('GGUF v1', () => {
  it('reads the v1 stories260K with the same tensors and data as its v3 twin', () => {
    const v1 = openGguf(`${MODELS}/legacy/v1-tinyllamas-stories-260k-f32.gguf`);
    const v3 = openGguf(STORIES_260K);
    try {
      expect(v1.gguf.version).toBe(1);
      const infos = (f: typeof v1) => f.gguf.tensors.map((t) => [t.name, t.type.name, t.ne]).sort();
      expect(infos(v1)).toEqual(infos(v3));
      for (const t of v1.gguf.tensors) {
        const twin = v3.gguf.tensor(t.name)!;
        expect(Buffer.from(v1.gguf.tensorData(t)).equals(Buffer.from(v3.gguf.tensorData(twin))), t.name).toBe(true);
      }
      expect(v1.gguf.getArray('tokenizer.ggml.tokens')!.items).toHaveLength(512);
      expect(v1.gguf.getString('general.name')).toBe('tinyllamas-stories-260k');
      const tokens = (key: string, f: typeof v1) => (f.gguf.getArray(key)!.items as { toArray(): string[] }).toArray();
      expect(tokens('tokenizer.ggml.tokens', v1)).toEqual(tokens('tokenizer.ggml.tokens', v3));
    } finally {
      v1.file.close();
      v3.file.close();
    }
  });

  it('reads the v1 vocab-only llama file', () => {
    const { gguf, file } = openGguf(`${MODELS}/legacy/v1-ggml-vocab-llama.gguf`);
    try {
      expect(gguf.version).toBe(1);
      expect(gguf.tensors).toHaveLength(0);
      expect(gguf.kvs).toHaveLength(13);
      const tokens = gguf.getArray('tokenizer.ggml.tokens')!;
      expect(tokens.items).toHaveLength(32000);
      expect(gguf.getNumber('llama.embedding_length')).toBe(4096);
    } finally {
      file.close();
    }
  });
});

describe('vocab-only files', () => {
  it('accepts a data offset past the end of a file without tensors', () => {
    const { gguf, file } = openGguf(`${MODELS}/vocab/ggml-vocab-gpt-2.gguf`);
    try {
      expect(gguf.tensors).toHaveLength(0);
      expect(gguf.dataOffset).toBeGreaterThanOrEqual(gguf.fileBytes);
      expect(gguf.getArray('tokenizer.ggml.merges')!.items).toHaveLength(50000);
    } finally {
      file.close();
    }
  });
});
