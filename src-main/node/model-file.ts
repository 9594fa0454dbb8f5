/** What the library records of a GGUF file: its size and time, and a summary of its metadata. */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { ModelSource, TypeShareView } from '../../src-preload/api';
import { summarizeModel } from '../core/model-summary';
import { openGguf } from './gguf-io';
import { modelName } from './store/model-name';
import type { ModelFileRecord, StoredSummary } from './store/models';

export interface ModelFileOptions {
  /** Every file of a split set, in order (`path` is the first); default: just `path`. */
  parts?: readonly string[];
  /** What the app keeping the file calls it (Ollama's "name:tag"). */
  label?: string | null;
  /** The name the user knows the file by, when `path` is a hashed blob. */
  fileName?: string;
  /** The SHA-256 the file is named by in a content-addressed store. */
  sha256?: string | null;
}

/**
 * Reads the file's header (not its tensors); for a split set, every part's tensor list. A file
 * that is not a readable GGUF still gives a record, with `error` saying what is wrong, so the
 * library can show it instead of hiding it. Throws only when the file cannot be stat'ed (missing).
 */
export function readModelFile(path: string, source: ModelSource, options: ModelFileOptions = {}): ModelFileRecord {
  const parts = options.parts ?? [path];
  const stat = statSync(path);
  const fileName = options.fileName ?? basename(path);
  const label = options.label ?? null;
  const name = modelName({ label, file_name: fileName });
  const record = {
    path,
    source,
    mtimeMs: Math.floor(stat.mtimeMs),
    fileName,
    label,
    parts: parts.length,
    sha256: options.sha256 ?? null,
  };
  let bytes = stat.size;
  try {
    bytes = parts.reduce((sum, part, i) => sum + partSize(part, i, parts.length), 0);
    const summary = summarizeParts(parts);
    return { ...record, bytes, name, error: null, summary };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // The library shows the path beside the error: the reader's "<path>: " would say it twice.
    const error = message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
    return { ...record, bytes, name, summary: null, error };
  }
}

function partSize(part: string, index: number, count: number): number {
  try {
    return statSync(part).size;
  } catch {
    throw new Error(`${part}: part ${index + 1} of ${count} of a split GGUF set is missing`);
  }
}

/** The first part's metadata, with the tensors of every part. */
function summarizeParts(parts: readonly string[]): StoredSummary {
  let summary: StoredSummary | undefined;
  for (const part of parts) {
    const { gguf, file } = openGguf(part);
    try {
      const s = summarizeModel(gguf);
      summary = summary
        ? {
            ...summary,
            parameters: summary.parameters + s.parameters,
            typeMix: mergeTypeMix(summary.typeMix, s.typeMix),
          }
        : {
            name: s.name,
            architecture: s.architecture,
            parameters: s.parameters,
            fileType: s.fileType,
            typeMix: s.typeMix.map((t) => ({ ...t })),
            contextLength: s.contextLength,
          };
    } finally {
      file.close();
    }
  }
  if (!summary) throw new Error('a model needs at least one file');
  return summary;
}

/** Two type mixes as one, largest share of bytes first. */
function mergeTypeMix(a: readonly TypeShareView[], b: readonly TypeShareView[]): TypeShareView[] {
  const byType = new Map<string, TypeShareView>();
  for (const share of [...a, ...b]) {
    const known = byType.get(share.type);
    byType.set(
      share.type,
      known
        ? {
            type: share.type,
            tensors: known.tensors + share.tensors,
            parameters: known.parameters + share.parameters,
            bytes: known.bytes + share.bytes,
          }
        : { ...share },
    );
  }
  return [...byType.values()].sort((x, y) => y.bytes - x.bytes);
}
