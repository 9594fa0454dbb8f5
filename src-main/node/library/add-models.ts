/**
 * Adding models by hand: files, or every .gguf file under folders. Only readable GGUF files join
 * (source 'added', taken out of the excluded paths if the user had removed them before); every
 * other path is reported with the reason, naming it.
 */
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AddModelsResult } from '../../../src-preload/api';
import { readModelFile } from '../model-file';
import type { ModelStore } from '../store/models';
import { findGgufFiles, reasonOf } from './find-gguf-files';

export async function addModelFiles(store: ModelStore, paths: readonly string[]): Promise<AddModelsResult> {
  const result: AddModelsResult = { added: [], skipped: [] };
  for (const input of paths) {
    const path = resolve(input);
    for (const file of await filesToAdd(path, result.skipped)) {
      const known = store.byPath(file);
      let record;
      try {
        record = readModelFile(file, 'added');
      } catch (err) {
        result.skipped.push({ path: file, reason: `cannot read ${file}: ${reasonOf(err)}` });
        continue;
      }
      if (known && known.error === null && known.bytes === record.bytes && known.mtimeMs === record.mtimeMs) {
        result.skipped.push({ path: file, reason: `already in the library: ${file}` });
      } else if (record.error !== null) {
        result.skipped.push({ path: file, reason: record.error });
      } else {
        store.unexclude(file);
        result.added.push(store.upsert(record));
      }
    }
  }
  return result;
}

/** The real paths of the files `path` stands for; what cannot be used goes to `skipped`. */
async function filesToAdd(path: string, skipped: AddModelsResult['skipped']): Promise<string[]> {
  try {
    const info = await stat(path);
    if (info.isFile()) return [await realpath(path)];
    if (!info.isDirectory()) {
      skipped.push({ path, reason: `not a file or folder: ${path}` });
      return [];
    }
  } catch (err) {
    skipped.push({ path, reason: `cannot read ${path}: ${reasonOf(err)}` });
    return [];
  }
  const { files, problems } = await findGgufFiles([path]);
  skipped.push(...problems);
  if (files.length === 0 && problems.length === 0) skipped.push({ path, reason: `no .gguf files in ${path}` });
  return files;
}
