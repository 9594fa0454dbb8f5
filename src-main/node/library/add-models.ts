/**
 * Adding models by hand: files, or every .gguf file under folders. Readable GGUF files join as
 * models (source 'added', or what Gufo made them as: 'downloaded', 'exported'; a file found under a
 * folder added by hand is 'folder', since the folder becomes a model folder: backend/library.ts),
 * taken out of the excluded paths if the user had removed them before; a part of a split set brings
 * its whole set. A file that is no readable GGUF is listed all the same, with its error, whether it
 * was added alone or found in a folder (one rule, as a scan lists it), but not counted as added.
 * Every path not added is reported with the reason, naming it.
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { AddModelsResult, ModelSource } from '../../../src-preload/api';
import { groupSplitSets, splitName, splitPartName, type GroupedFile } from '../discovery/split-sets';
import { readModelFile } from '../model-file';
import type { ModelStore } from '../store/models';
import { findGgufFiles, reasonOf } from './find-gguf-files';

/** What Gufo already knows of a file it made (a download's SHA-256, computed as it arrived). */
export interface KnownFile {
  sha256?: string;
}

export async function addModelFiles(
  store: ModelStore,
  paths: readonly string[],
  source: ModelSource = 'added',
  known: KnownFile = {},
): Promise<AddModelsResult> {
  const result: AddModelsResult = { added: [], skipped: [], folders: [] };
  for (const input of paths) {
    const path = resolve(input);
    const found = await filesToAdd(path, result.skipped);
    const sourceOfFound: ModelSource = found.inFolder && source === 'added' ? 'folder' : source;
    for (const { file, parts } of found.files) {
      const existing = store.byPath(file.path);
      let record;
      try {
        record = readModelFile(file.path, sourceOfFound, {
          parts,
          fileName: basename(file.foundAt),
          sha256: known.sha256,
        });
      } catch (err) {
        result.skipped.push({ path: file.path, reason: `cannot read ${file.path}: ${reasonOf(err)}` });
        continue;
      }
      if (
        existing &&
        existing.error === null &&
        existing.bytes === record.bytes &&
        existing.mtimeMs === record.mtimeMs &&
        (existing.source === sourceOfFound || source === 'added')
      ) {
        result.skipped.push({ path: file.path, reason: `already in the library: ${file.path}` });
      } else if (record.error !== null) {
        // Listed, as a scan of a folder lists it, marked as a file that cannot run.
        store.unexclude(file.path);
        store.upsert(record);
        // The skipped list names the file; an error about another part of a set names that part already.
        const named = parts.some((part) => record.error!.startsWith(`${part}: `));
        result.skipped.push({ path: file.path, reason: named ? record.error : `${file.path}: ${record.error}` });
      } else {
        store.unexclude(file.path);
        result.added.push(store.upsert(record));
      }
    }
  }
  return result;
}

/** The models `path` stands for, and whether it is a folder; what cannot be used goes to `skipped`. */
async function filesToAdd(
  path: string,
  skipped: AddModelsResult['skipped'],
): Promise<{ files: GroupedFile[]; inFolder: boolean }> {
  const none = { files: [], inFolder: false };
  try {
    const info = await stat(path);
    if (info.isFile()) return { files: [await setOf(path)], inFolder: false };
    if (!info.isDirectory()) {
      skipped.push({ path, reason: `not a file or folder: ${path}` });
      return none;
    }
  } catch (err) {
    skipped.push({ path, reason: `cannot read ${path}: ${reasonOf(err)}` });
    return none;
  }
  const { files, problems } = await findGgufFiles([path]);
  const { grouped, problems: setProblems } = groupSplitSets(files);
  skipped.push(...problems, ...setProblems);
  if (files.length === 0 && problems.length === 0) skipped.push({ path, reason: `no .gguf files in ${path}` });
  return { files: grouped, inFolder: true };
}

/** A file, or the split set it is a part of (read from its first part, which the reading checks). */
async function setOf(path: string): Promise<GroupedFile> {
  const split = splitName(basename(path));
  if (!split) return { file: { path: await realpath(path), foundAt: path }, parts: [await realpath(path)] };
  const partPaths = Array.from({ length: split.count }, (_, i) =>
    join(dirname(path), splitPartName(split.prefix, i + 1, split.count)),
  );
  const parts = await Promise.all(partPaths.map((p) => realpath(p).catch(() => p)));
  return { file: { path: parts[0]!, foundAt: partPaths[0]! }, parts };
}
