/** Free space is checked before a download starts, so a disk that cannot hold the file fails at once, not hours later. */
import { statfs } from 'node:fs/promises';

export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}

/** Throws, naming the folder and the sizes, when `dir` has less than `needed` bytes free. */
export async function ensureFreeSpace(dir: string, needed: number, what: string): Promise<void> {
  const free = await freeBytes(dir);
  if (needed > free) {
    throw new Error(
      `not enough free space in ${dir} for ${what}: ${gigabytes(needed)} more needed, ${gigabytes(free)} free`,
    );
  }
}

function gigabytes(bytes: number): string {
  return `${(bytes / 1e9).toFixed(bytes < 1e9 ? 3 : 1)} GB`;
}
