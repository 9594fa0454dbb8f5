/** The inspector's cache of open GGUF files: reuse, reopening changed files, eviction, and files in use. */
import { copyFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GgufCache } from '../../src-main/node/inspect/gguf-cache';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

function copies(n: number): string[] {
  const dir = tempDir();
  return Array.from({ length: n }, (_, i) => {
    const path = join(dir, `m${i}.gguf`);
    copyFileSync(STORIES_260K, path);
    return path;
  });
}

/** Reads a tensor's first bytes: with positional reads (GUFO_NO_MMAP, Electron) this needs the file open. */
const firstTensorBytes = (gguf: ReturnType<GgufCache['acquire']>['gguf']) =>
  gguf.tensorData(gguf.tensors[0]!).slice(0, 4);

describe('GgufCache', () => {
  it('reuses an open file while it is unchanged, and opens it again once it changes on disk', () => {
    const [path] = copies(1);
    const cache = new GgufCache(2);
    try {
      const first = cache.use(path!, (g) => g);
      expect(cache.use(path!, (g) => g)).toBe(first);
      utimesSync(path!, new Date(), new Date(Date.now() + 5000));
      const reopened = cache.use(path!, (g) => g);
      expect(reopened).not.toBe(first);
      expect(reopened.tensors.map((t) => t.name)).toEqual(first.tensors.map((t) => t.name));
    } finally {
      cache.close();
    }
  });

  it('keeps at most `capacity` files, least recently used out first', () => {
    const paths = copies(3);
    const cache = new GgufCache(2);
    try {
      const [a, b, c] = paths.map((p) => cache.use(p, (g) => g));
      expect(cache.use(paths[1]!, (g) => g)).toBe(b);
      expect(cache.use(paths[2]!, (g) => g)).toBe(c);
      expect(cache.use(paths[0]!, (g) => g)).not.toBe(a);
    } finally {
      cache.close();
    }
  });

  it('closes an evicted file only when the work holding it releases it', () => {
    vi.stubEnv('GUFO_NO_MMAP', '1');
    const paths = copies(3);
    const cache = new GgufCache(1);
    try {
      const lease = cache.acquire(paths[0]!);
      expect(lease.gguf.source.access).toBe('read');
      cache.use(paths[1]!, () => undefined);
      cache.use(paths[2]!, () => undefined);
      // Evicted twice over, but still in use: it reads.
      expect(firstTensorBytes(lease.gguf)).toHaveLength(4);
      lease.release();
      lease.release(); // a second release is harmless
      expect(() => firstTensorBytes(lease.gguf)).toThrow(/m0\.gguf: file is closed/);
    } finally {
      cache.close();
      vi.unstubAllEnvs();
    }
  });
});
