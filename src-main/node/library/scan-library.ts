/**
 * Brings the library up to date with the disk: every model found in the folders and the other
 * apps' stores joins it, known files are checked by size and time only (their header is read
 * again when either changed, or when the model has an error that may have gone), found copies
 * that are gone leave, files added by hand (or exported, downloaded) that are gone stay with an
 * error, and copies of the same bytes become one model.
 */
import { stat } from 'node:fs/promises';
import type { ModelLocation } from '../../../src-preload/api';
import { discoverModels, type ScanSource } from '../discovery/index';
import type { FoundModel } from '../discovery/found-model';
import { partsOf } from '../discovery/split-sets';
import { readModelFile } from '../model-file';
import { isScannedSource, type ModelStore } from '../store/models';
import type { ScanProblem } from './find-gguf-files';

export interface ScanOptions {
  /** Read every header again, changed or not (an explicit rescan). */
  full?: boolean;
}

export interface ScanResult {
  /** Whether any model or location was added, changed or removed. */
  changed: boolean;
  problems: ScanProblem[];
  /** Real paths of the folders read. */
  folders: string[];
}

export async function scanLibrary(
  store: ModelStore,
  sources: readonly ScanSource[],
  options: ScanOptions = {},
): Promise<ScanResult> {
  const { models, problems, folders } = await discoverModels(sources);
  const found = new Set(models.map((m) => m.path));
  let changed = false;
  for (const model of models) {
    if (store.isExcluded(model.path)) continue;
    if (await refreshLocation(store, model, options)) changed = true;
  }
  for (const location of store.locations()) {
    if (found.has(location.path)) continue;
    if (isScannedSource(location.source)) {
      // Deleted, or its folder or store left the library's sources.
      store.removeLocation(location.path);
      changed = true;
    } else if (
      await refreshLocation(
        store,
        { ...location, parts: partsOf(location.path, location.fileName, store.get(location.modelId)?.parts ?? 1) },
        options,
      )
    ) {
      changed = true;
    }
  }
  if (store.mergeCopies().length > 0) changed = true;
  return { changed, problems, folders };
}

type Refreshed = Pick<FoundModel, 'path' | 'parts' | 'source' | 'label' | 'fileName'> &
  Partial<Pick<FoundModel, 'sha256'>>;

/**
 * Re-reads the file's header when it changed since it was recorded (or always with `full`); a
 * missing file that was the model's only copy keeps the model, with an error saying so, and one
 * with other copies leaves. Answers whether the library changed.
 */
async function refreshLocation(store: ModelStore, found: Refreshed, options: ScanOptions = {}): Promise<boolean> {
  const known = store.location(found.path);
  const model = known && store.get(known.modelId);
  let size: number;
  let mtimeMs: number;
  try {
    ({ mtimeMs } = await stat(found.path));
    size = await totalSize(found.parts);
  } catch {
    return model ? lose(store, found.path, model.locations.length, model.error, model.id) : false;
  }
  const current = model !== undefined && (model.path !== found.path || model.error === null);
  if (
    known &&
    !options.full &&
    current &&
    known.bytes === size &&
    known.mtimeMs === Math.floor(mtimeMs) &&
    sameLocation(known, found)
  )
    return false;
  let record;
  try {
    record = readModelFile(found.path, found.source, found);
  } catch {
    // Deleted between the stat and the read.
    return model ? lose(store, found.path, model.locations.length, model.error, model.id) : false;
  }
  const updated = store.upsert(record);
  return JSON.stringify(updated) !== JSON.stringify(model);
}

/** Sizes of every part; a missing part counts as a change (reading the set then says which). */
async function totalSize(parts: readonly string[]): Promise<number> {
  let total = 0;
  for (const part of parts)
    total += await stat(part).then(
      (s) => s.size,
      () => Number.NaN,
    );
  return total;
}

/** Whether the store already says what the scan says of the location (a kept source says more than a scan's). */
function sameLocation(known: ModelLocation, found: Refreshed): boolean {
  return (known.source === found.source || !isScannedSource(known.source)) && known.label === found.label;
}

function lose(store: ModelStore, path: string, copies: number, error: string | null, id: number): boolean {
  if (copies > 1) {
    store.removeLocation(path);
    return true;
  }
  const missing = `file not found: ${path}`;
  if (error === missing) return false;
  store.setError(id, missing);
  return true;
}
