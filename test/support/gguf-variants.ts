/**
 * Real GGUF files made from stories260K for library and hand-off tests: with other metadata (a
 * chat template, a name), or cut into a split set the way llama.cpp's gguf-split cuts it (every
 * part a GGUF file with split.no/split.count/split.tensors.count; the first keeps the metadata).
 */
import { join } from 'node:path';
import type { GgufKv } from '../../src-main/core/gguf/values';
import { GgufType } from '../../src-main/core/gguf/values';
import { openGguf, tensorChunks, writeGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from './paths';

export const stringKv = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });

/** stories260K with `kvs` added (or replacing those of the same key). */
export async function writeStoriesWith(path: string, kvs: GgufKv[]): Promise<void> {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const replaced = new Set(kvs.map((kv) => kv.key));
    await writeGguf(
      path,
      { kvs: [...gguf.kvs.filter((kv) => !replaced.has(kv.key)), ...kvs], tensors: gguf.tensors },
      (i) => tensorChunks(gguf, gguf.tensors[i]!),
    );
  } finally {
    file.close();
  }
}

/** stories260K as `<dir>/<prefix>-0000i-of-0000N.gguf`; answers the parts' paths in order. */
export async function writeStoriesSplit(dir: string, prefix: string, count: number): Promise<string[]> {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const per = Math.ceil(gguf.tensors.length / count);
    const paths: string[] = [];
    for (let i = 0; i < count; i++) {
      const tensors = gguf.tensors.slice(i * per, (i + 1) * per);
      const split: GgufKv[] = [
        { key: 'split.no', type: GgufType.UINT16, value: i },
        { key: 'split.count', type: GgufType.UINT16, value: count },
        { key: 'split.tensors.count', type: GgufType.INT32, value: gguf.tensors.length },
      ];
      const path = join(dir, `${prefix}-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.gguf`);
      await writeGguf(path, { kvs: i === 0 ? [...gguf.kvs, ...split] : split, tensors }, (t) =>
        tensorChunks(gguf, tensors[t]!),
      );
      paths.push(path);
    }
    return paths;
  } finally {
    file.close();
  }
}
