/**
 * SHA-256 of a file, read in chunks (a 40 GB model never sits in memory), cancellable, and polite:
 * it yields to the event loop between chunks so the back end keeps answering the UI while it hashes.
 */
import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';

const CHUNK_BYTES = 1 << 20;

export interface HashOptions {
  signal?: AbortSignal;
  /** Bytes hashed so far. */
  onProgress?: (bytes: number) => void;
}

export async function sha256File(path: string, options: HashOptions = {}): Promise<string> {
  const hash = createHash('sha256');
  await hashFile(path, hash, Infinity, options);
  return hash.digest('hex');
}

/** Feeds the first `length` bytes of the file (all of it, if shorter) into `hash`. */
export async function hashFile(path: string, hash: Hash, length: number, options: HashOptions = {}): Promise<void> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const handle = await open(path, 'r');
  try {
    for (let position = 0; position < length;) {
      options.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, length - position), position);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      position += bytesRead;
      options.onProgress?.(position);
      await nextTurn();
    }
  } finally {
    await handle.close();
  }
}
