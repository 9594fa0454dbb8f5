/**
 * SHA-256 of a file, read in chunks (a 40 GB model never sits in memory), cancellable, and polite:
 * it yields to the event loop between chunks so the back end keeps answering the UI while it hashes.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';

const CHUNK_BYTES = 1 << 20;

export interface HashOptions {
  signal?: AbortSignal;
  /** Bytes hashed so far. */
  onProgress?(bytes: number): void;
}

export async function sha256File(path: string, options: HashOptions = {}): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const handle = await open(path, 'r');
  try {
    for (let position = 0; ; ) {
      options.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      position += bytesRead;
      options.onProgress?.(position);
      await nextTurn();
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}
