/**
 * Split GGUF sets, as llama.cpp's gguf-split names them (`<prefix>-00001-of-00003.gguf`): one
 * model, read from its first part, whose tensors are spread over all of them.
 */
import { basename, dirname, join } from 'node:path';
import type { FoundFile, ScanProblem } from '../library/find-gguf-files';

const SPLIT_NAME = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

export interface SplitName {
  prefix: string;
  /** 1-based. */
  index: number;
  count: number;
}

export function splitName(fileName: string): SplitName | null {
  const match = SPLIT_NAME.exec(fileName);
  if (!match) return null;
  const [, prefix, index, count] = match as unknown as [string, string, string, string];
  return { prefix, index: Number(index), count: Number(count) };
}

/** The name of part `index` of a set (llama.cpp's llama_split_path: "%s-%05d-of-%05d.gguf"). */
export function splitPartName(prefix: string, index: number, count: number): string {
  const pad = (n: number) => String(n).padStart(5, '0');
  return `${prefix}-${pad(index)}-of-${pad(count)}.gguf`;
}

export interface GroupedFile {
  /** The single file, or the set's first part. */
  file: FoundFile;
  /** Real paths of every part in order; a missing part is where it should be (reading it then says it is missing). */
  parts: string[];
}

/**
 * Files with split sets gathered: a set is one entry for its first part, found in the same folder
 * as its other parts. A set without its first part cannot be read, and is a problem.
 */
export function groupSplitSets(files: readonly FoundFile[]): { grouped: GroupedFile[]; problems: ScanProblem[] } {
  const grouped: GroupedFile[] = [];
  const problems: ScanProblem[] = [];
  const sets = new Map<string, { split: SplitName; folder: string; parts: Map<number, FoundFile> }>();
  for (const file of files) {
    const split = splitName(basename(file.foundAt));
    if (!split || split.index < 1 || split.index > split.count) {
      grouped.push({ file, parts: [file.path] });
      continue;
    }
    const folder = dirname(file.foundAt);
    const key = join(folder, `${split.prefix}\0${split.count}`);
    const set = sets.get(key) ?? { split, folder, parts: new Map() };
    set.parts.set(split.index, file);
    sets.set(key, set);
  }
  for (const { split, folder, parts } of sets.values()) {
    const first = parts.get(1);
    if (!first) {
      const path = join(folder, splitPartName(split.prefix, 1, split.count));
      problems.push({
        path,
        reason: `${path}: the first part of a split GGUF set is missing (${parts.size} of ${split.count} parts found)`,
      });
      continue;
    }
    const paths = Array.from(
      { length: split.count },
      (_, i) => parts.get(i + 1)?.path ?? join(folder, splitPartName(split.prefix, i + 1, split.count)),
    );
    grouped.push({ file: first, parts: paths });
  }
  return { grouped, problems };
}

/** The parts of a known model: its set's files beside it when it is the first of `count`, else just it. */
export function partsOf(path: string, fileName: string, count: number): string[] {
  const split = splitName(fileName);
  if (count <= 1 || !split || split.index !== 1) return [path];
  return Array.from({ length: split.count }, (_, i) =>
    join(dirname(path), splitPartName(split.prefix, i + 1, split.count)),
  );
}
