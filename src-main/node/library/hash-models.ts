/**
 * The library's background hashing: the SHA-256 of every readable model that has none yet (of
 * the first part of a split set), one file at a time. A file that changed since it was scanned is left for after the next scan (its
 * row then describes the new contents), so a hash is only ever stored for the bytes it was
 * computed from.
 */
import { stat } from 'node:fs/promises';
import type { HashResult, ModelEntry } from '../../../src-preload/api';
import type { ModelStore } from '../store/models';
import { reasonOf } from './find-gguf-files';
import { sha256File } from './sha256-file';

export interface HashRun {
  signal: AbortSignal;
  /** Models this run leaves unhashed (ids): those whose hashing the user cancelled. */
  skip?: ReadonlySet<number>;
  /** Bytes hashed in this run, of `total` known so far; `detail` names the file. */
  progress(done: number, total: number, detail: string): void;
  /** A model's hash was stored. */
  onHashed(model: ModelEntry): void;
  /** Called the moment nothing is left to hash, before the returned promise settles. */
  onIdle(): void;
}

export async function hashModels(store: ModelStore, run: HashRun): Promise<HashResult> {
  const result: HashResult = { hashed: 0, skipped: [] };
  const tried = new Set<number>(run.skip);
  let done = 0;
  for (;;) {
    run.signal.throwIfAborted();
    const pending = store.needingHash().filter((m) => !tried.has(m.id));
    const model = pending[0];
    if (!model) {
      run.onIdle();
      return result;
    }
    tried.add(model.id);
    const total = done + pending.reduce((sum, m) => sum + m.bytes, 0);
    try {
      if (!(await unchanged(model))) {
        result.skipped.push({ path: model.path, reason: `${model.path} changed since it was scanned` });
        continue;
      }
      const sha256 = await sha256File(model.path, {
        signal: run.signal,
        onProgress: (bytes) => run.progress(done + bytes, total, model.fileName),
      });
      if (!(await unchanged(model))) {
        result.skipped.push({ path: model.path, reason: `${model.path} changed while it was hashed` });
        continue;
      }
      store.setSha256(model.id, sha256, model.mtimeMs);
      result.hashed++;
      run.onHashed(model);
    } catch (err) {
      if (run.signal.aborted) throw err;
      result.skipped.push({ path: model.path, reason: `cannot hash ${model.path}: ${reasonOf(err)}` });
    } finally {
      done += model.bytes;
      run.progress(done, total, model.fileName);
    }
  }
}

/** Whether the file is as it was scanned (`bytes` counts every part of a split set; the first is hashed). */
async function unchanged(model: ModelEntry): Promise<boolean> {
  const info = await stat(model.path);
  return (model.parts > 1 || info.size === model.bytes) && Math.floor(info.mtimeMs) === model.mtimeMs;
}
