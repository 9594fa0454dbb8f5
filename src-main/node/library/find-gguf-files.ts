/**
 * Finds the .gguf files under folders, recursively, the way the library scans them: hidden
 * entries are skipped (dot-folders, and the temporary files exports are written to), symlinks are
 * followed but every path is resolved with realpath, so a file reachable twice is one entry and a
 * link back up the tree is not a loop. One unreadable entry is reported and the scan goes on.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface ScanProblem {
  path: string;
  reason: string;
}

export interface FoundFile {
  /** The real path. */
  path: string;
  /** The path it was found at (a link keeps its own name: Hugging Face's snapshots link to hashed blobs). */
  foundAt: string;
}

export interface FoundFiles {
  /** The .gguf files, each once (by real path), in the order found. */
  files: FoundFile[];
  problems: ScanProblem[];
  /** Real paths of the folders read, for watching. */
  folders: string[];
}

export function isGgufName(name: string): boolean {
  return name.toLowerCase().endsWith('.gguf');
}

export async function findGgufFiles(roots: readonly string[]): Promise<FoundFiles> {
  const files = new Map<string, FoundFile>();
  const problems: ScanProblem[] = [];
  const visited = new Set<string>();

  async function walk(dir: string): Promise<void> {
    let real: string;
    let entries: Dirent[];
    try {
      real = await realpath(dir);
      if (visited.has(real)) return;
      visited.add(real);
      entries = await readdir(real, { withFileTypes: true });
    } catch (err) {
      problems.push({ path: dir, reason: `cannot read folder ${dir}: ${reasonOf(err)}` });
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(real, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const target = await stat(path);
          isDir = target.isDirectory();
          isFile = target.isFile();
        } catch (err) {
          // A dangling link is only worth mentioning when it looks like a model.
          if (isGgufName(entry.name)) problems.push({ path, reason: `broken link ${path}: ${reasonOf(err)}` });
          continue;
        }
      }
      if (isDir) await walk(path);
      else if (isFile && isGgufName(entry.name)) {
        try {
          const real = await realpath(path);
          if (!files.has(real)) files.set(real, { path: real, foundAt: join(dir, entry.name) });
        } catch (err) {
          problems.push({ path, reason: `cannot resolve ${path}: ${reasonOf(err)}` });
        }
      }
    }
  }

  for (const root of roots) await walk(root);
  return { files: [...files.values()], problems, folders: [...visited] };
}

/** A Node file-system error without the path it repeats ("ENOENT: no such file or directory"). */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  const messages: Record<string, string> = {
    ENOENT: 'not found',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOTDIR: 'not a folder',
    ELOOP: 'too many levels of symbolic links',
  };
  return (code && messages[code]) ?? err.message;
}
