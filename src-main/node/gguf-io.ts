import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseGguf } from '../core/gguf/reader';
import type { GgufFile, GgufTensorInfo } from '../core/gguf/gguf-file';
import { layoutGguf, type GgufHeaderSpec } from '../core/gguf/writer';
import { openFile, type OpenedFile } from './mapped-file';

export interface OpenGguf {
  readonly gguf: GgufFile;
  readonly file: OpenedFile;
}

/** Opens and parses a GGUF file; tensor bytes stay on disk until a tensor is read. */
export function openGguf(path: string): OpenGguf {
  const file = openFile(path);
  try {
    return { gguf: parseGguf(file, path), file };
  } catch (err) {
    file.close();
    throw err;
  }
}

/** Bytes handed to the writer at a time: large enough for fast I/O, small enough for bounded memory. */
const WRITE_CHUNK = 16 * 2 ** 20;

/** A tensor's bytes in bounded slices, straight from the source file (views when it is mapped). */
export function* tensorChunks(gguf: GgufFile, tensor: GgufTensorInfo, chunk = WRITE_CHUNK): Iterable<Uint8Array> {
  const start = gguf.dataOffset + tensor.offset;
  for (let done = 0; done < tensor.bytes; done += chunk) {
    yield gguf.source.bytes(start + done, Math.min(chunk, tensor.bytes - done));
  }
}

export type TensorBytes = Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export interface WriteOptions {
  /** Called after each tensor with the bytes written so far and the total. */
  onProgress?: (written: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * Writes a GGUF file: the header from `spec`, then each tensor's bytes from `data(i)` (streamed,
 * never gathered in memory). The file is written beside `path` under a temporary name, synced,
 * and renamed into place only when complete, so a crash or a full disk never leaves a partial
 * file at `path`.
 */
export async function writeGguf(
  path: string,
  spec: GgufHeaderSpec,
  data: (index: number) => TensorBytes,
  options: WriteOptions = {},
): Promise<void> {
  const layout = layoutGguf(spec);
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    let position = 0;
    const put = async (bytes: Uint8Array) => {
      for (let done = 0; done < bytes.byteLength; ) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    };
    await put(layout.header);
    for (const [i, t] of layout.tensors.entries()) {
      options.signal?.throwIfAborted();
      const name = spec.tensors[i]!.name;
      const start = position;
      for await (const chunk of data(i)) {
        if (position - start + chunk.byteLength > t.bytes) throw new Error(`${path}: tensor "${name}" got more than its ${t.bytes} bytes`);
        await put(chunk);
      }
      if (position - start !== t.bytes) throw new Error(`${path}: tensor "${name}" got ${position - start} of its ${t.bytes} bytes`);
      const next = layout.tensors[i + 1];
      await put(new Uint8Array((next ? layout.dataOffset + next.offset : layout.fileBytes) - position));
      options.onProgress?.(position, layout.fileBytes);
    }
    await handle.datasync();
    await handle.close();
    await rename(temp, path);
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/** Rewrites `source` to `path` with the same metadata, tensor infos and data. */
export async function copyGguf(source: GgufFile, path: string, options: WriteOptions = {}): Promise<void> {
  const version = source.version === 2 ? 2 : 3;
  const tensors = source.tensors.map(({ name, type, ne }) => ({ name, type, ne }));
  await writeGguf(path, { version, kvs: source.kvs, tensors }, (i) => tensorChunks(source, source.tensors[i]!), options);
}
