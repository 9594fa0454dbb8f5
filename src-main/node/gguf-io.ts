import { parseGguf } from '../core/gguf/reader';
import type { GgufFile, GgufTensorInfo } from '../core/gguf/gguf-file';
import { layoutGguf, type GgufHeaderSpec } from '../core/gguf/writer';
import { writeAtomically } from './atomic-write';
import { openFile, type OpenedFile, type OpenOptions } from './mapped-file';

export interface OpenGguf {
  readonly gguf: GgufFile;
  readonly file: OpenedFile;
}

/** Opens and parses a GGUF file; tensor bytes stay on disk until a tensor is read. */
export function openGguf(path: string, options: OpenOptions = {}): OpenGguf {
  const file = openFile(path, options);
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
  /** Whether an existing file at the path is replaced (the default); see writeAtomically. */
  overwrite?: boolean;
}

/**
 * Writes a GGUF file: the header from `spec`, then each tensor's bytes from `data(i)` (streamed,
 * never gathered in memory), all or nothing (see writeAtomically).
 */
export async function writeGguf(
  path: string,
  spec: GgufHeaderSpec,
  data: (index: number) => TensorBytes,
  options: WriteOptions = {},
): Promise<void> {
  const layout = layoutGguf(spec);
  await writeAtomically(
    path,
    async (put) => {
      await put(layout.header);
      let position = layout.header.byteLength;
      for (const [i, t] of layout.tensors.entries()) {
        options.signal?.throwIfAborted();
        const name = spec.tensors[i]!.name;
        let written = 0;
        for await (const chunk of data(i)) {
          written += chunk.byteLength;
          if (written > t.bytes) throw new Error(`${path}: tensor "${name}" got more than its ${t.bytes} bytes`);
          await put(chunk);
        }
        if (written !== t.bytes) throw new Error(`${path}: tensor "${name}" got ${written} of its ${t.bytes} bytes`);
        const next = layout.tensors[i + 1];
        const end = next ? layout.dataOffset + next.offset : layout.fileBytes;
        await put(new Uint8Array(end - position - written));
        position = end;
        options.onProgress?.(position, layout.fileBytes);
      }
    },
    { overwrite: options.overwrite },
  );
}

/** Rewrites `source` to `path` with the same metadata, tensor infos and data. */
export async function copyGguf(source: GgufFile, path: string, options: WriteOptions = {}): Promise<void> {
  const version = source.version === 2 ? 2 : 3;
  const tensors = source.tensors.map(({ name, type, ne }) => ({ name, type, ne }));
  await writeGguf(
    path,
    { version, kvs: source.kvs, tensors },
    (i) => tensorChunks(source, source.tensors[i]!),
    options,
  );
}
