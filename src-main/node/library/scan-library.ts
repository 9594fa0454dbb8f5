/**
 * Brings the models table up to date with the disk: every .gguf file under the library's folders
 * joins it (source 'folder'), files known before are checked by size and time only (their header
 * is read again when either changed, or when the row has an error that may have gone), folder
 * files that are gone leave, and files added by hand that are gone stay with an error.
 */
import { stat } from 'node:fs/promises';
import type { ModelEntry, ModelSource } from '../../../src-preload/api';
import { readModelFile } from '../model-file';
import type { ModelStore } from '../store/models';
import { findGgufFiles, type ScanProblem } from './find-gguf-files';

export interface ScanOptions {
  /** Read every header again, changed or not (an explicit rescan). */
  full?: boolean;
}

export interface ScanResult {
  /** Whether any row was added, changed or removed. */
  changed: boolean;
  problems: ScanProblem[];
}

export async function scanLibrary(store: ModelStore, folders: readonly string[], options: ScanOptions = {}): Promise<ScanResult> {
  const { files, problems } = await findGgufFiles(folders);
  const found = new Set(files);
  let changed = false;
  for (const path of files) {
    if (store.isExcluded(path)) continue;
    // A file added by hand or exported keeps its source: upsert only replaces 'folder'.
    if (await refreshModel(store, path, store.byPath(path), 'folder', options)) changed = true;
  }
  for (const model of store.list()) {
    if (found.has(model.path)) continue;
    // A folder's file not found under the folders was deleted, or its folder left the settings.
    if (model.source === 'folder') {
      store.delete(model.id);
      changed = true;
    } else if (await refreshModel(store, model.path, model, model.source, options)) {
      changed = true;
    }
  }
  return { changed, problems };
}

/**
 * Re-reads the file's header when it changed since `known` was recorded (or always with `full`);
 * a missing file keeps its row, with an error saying so. Answers whether the row changed.
 */
async function refreshModel(
  store: ModelStore,
  path: string,
  known: ModelEntry | undefined,
  source: ModelSource,
  options: ScanOptions = {},
): Promise<boolean> {
  let size: number;
  let mtimeMs: number;
  try {
    ({ size, mtimeMs } = await stat(path));
  } catch {
    return known ? setError(store, known, `file not found: ${path}`) : false;
  }
  if (known && !options.full && known.error === null && known.bytes === size && known.mtimeMs === Math.floor(mtimeMs)) return false;
  let record;
  try {
    record = readModelFile(path, source);
  } catch {
    // Deleted between the stat and the read.
    return known ? setError(store, known, `file not found: ${path}`) : false;
  }
  const updated = store.upsert(record);
  return JSON.stringify(updated) !== JSON.stringify(known);
}

function setError(store: ModelStore, model: ModelEntry, error: string): boolean {
  if (model.error === error) return false;
  store.setError(model.id, error);
  return true;
}
