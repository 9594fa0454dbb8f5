import { randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Appends bytes to the file being written; returns once they are written. */
export type Put = (bytes: Uint8Array) => Promise<void>;

/**
 * Writes `path` all or nothing: `write` fills a temporary file beside it, which is synced and
 * renamed over `path` only when `write` succeeds. On any error (a full disk, a cancel, a crash
 * of the producer) the temporary file is removed and an existing `path` is left as it was.
 */
export async function writeAtomically(path: string, write: (put: Put) => Promise<void>): Promise<void> {
  const temp = join(dirname(path), `${tempPrefix(path)}${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    let position = 0;
    await write(async (bytes) => {
      for (let done = 0; done < bytes.byteLength; ) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    });
    await handle.datasync();
    await handle.close();
    await rename(temp, path);
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/** Temporary files of `path` start with this (a dot: hidden), then a random part and `.tmp`. */
function tempPrefix(path: string): string {
  return `.${basename(path)}.`;
}

/**
 * Removes temporary files that a killed writer of `path` left behind (a process that dies
 * mid-write never reaches its clean-up). Only for a path no one is writing now.
 */
export async function removeLeftoverTemps(path: string): Promise<void> {
  const prefix = tempPrefix(path);
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) {
      await unlink(join(dirname(path), name)).catch(() => {});
    }
  }
}
