/** What the library records of a GGUF file: its size and time, and a summary of its metadata. */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { ModelSource } from '../../src-preload/api';
import { summarizeModel } from '../core/model-summary';
import { openGguf } from './gguf-io';
import type { ModelFileRecord } from './store/models';

/**
 * Reads the file's header (not its tensors). A file that is not a readable GGUF still gives a
 * record, with `error` saying what is wrong, so the library can show it instead of hiding it.
 * Throws only when the file cannot be stat'ed (missing).
 */
export function readModelFile(path: string, source: ModelSource): ModelFileRecord {
  const stat = statSync(path);
  const fallbackName = basename(path).replace(/\.gguf$/i, '');
  const record = { path, source, bytes: stat.size, mtimeMs: Math.floor(stat.mtimeMs) };
  try {
    const { gguf, file } = openGguf(path);
    try {
      const s = summarizeModel(gguf);
      return {
        ...record,
        name: s.name?.trim() || fallbackName,
        error: null,
        summary: {
          name: s.name,
          architecture: s.architecture,
          parameters: s.parameters,
          fileType: s.fileType,
          typeMix: s.typeMix.map((t) => ({ ...t })),
          contextLength: s.contextLength,
        },
      };
    } finally {
      file.close();
    }
  } catch (err) {
    return { ...record, name: fallbackName, summary: null, error: err instanceof Error ? err.message : String(err) };
  }
}
