/** What discovery finds: a model's file (or split set) in a folder or another app's store. */
import type { ModelSource } from '../../../src-preload/api';
import type { ScanProblem } from '../library/find-gguf-files';

export interface FoundModel {
  /** The real path of the file (the first part of a split set). */
  path: string;
  /** Every part in order; just `path` for a single file. */
  parts: string[];
  source: ModelSource;
  /** What the app keeping it calls it (Ollama "name:tag", "org/repo/file.gguf"); null for plain folders. */
  label: string | null;
  /** The file's name as the user knows it (not a blob's hash). */
  fileName: string;
  /** The SHA-256 a content-addressed store names the file by (checked by the app that wrote it). */
  sha256: string | null;
}

export interface Discovery {
  models: FoundModel[];
  problems: ScanProblem[];
  /** Real paths of the folders read (Linux watches each; fs.watch is not recursive there). */
  folders: string[];
}
