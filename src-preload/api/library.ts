/** The model library: GGUF files Gufo knows about, wherever they live. */

/**
 * Where a library entry came from: another app's model store (read in place, never copied), a
 * scanned folder, or Gufo itself (added by hand, exported, downloaded).
 */
export type ModelSource =
  'ollama' | 'lmstudio' | 'huggingface' | 'jan' | 'gpt4all' | 'folder' | 'added' | 'exported' | 'downloaded';

/** One place the model's file is found (the same bytes, by SHA-256, may be in several). */
export interface ModelLocation {
  /** The real path (links resolved); the first part of a split set. */
  path: string;
  source: ModelSource;
  /**
   * What the app that keeps the file calls it: Ollama's "name:tag", Hugging Face's and LM Studio's
   * "org/repo/file.gguf"; null for plain folders.
   */
  label: string | null;
}

export interface TypeShareView {
  /** ggml type name ("Q4_K"). */
  type: string;
  tensors: number;
  parameters: number;
  bytes: number;
}

export interface ModelEntry {
  id: number;
  /**
   * The model's name, from where it is (as LM Studio names models): what the app keeping the file
   * calls it (Ollama's "name:tag", the Hugging Face cache's "org/repo/file"), else the file name;
   * without ".gguf" and a split set's "-00001-of-0000N". The API's model id is it, lower-cased.
   */
  name: string;
  /** general.name, shown under `name` (often just the architecture: "llama"); null when the file has none. */
  generalName: string | null;
  /** Where it is read from: the first of `locations`. */
  path: string;
  /** The file's name as the user knows it (for Hugging Face's hashed blobs, the name in the repo). */
  fileName: string;
  /** The source of `path`. */
  source: ModelSource;
  /** Every place the file is found, `path` first. */
  locations: ModelLocation[];
  /** Files in the set: 1, or N for a split GGUF (`name-00001-of-0000N.gguf`; `path` is the first). */
  parts: number;
  /** All parts together. */
  bytes: number;
  mtimeMs: number;
  /**
   * Null until computed in the background (Ollama's blobs are named by it already). Of the first
   * part for a split set.
   */
  sha256: string | null;
  architecture: string | null;
  parameters: number | null;
  /** llama.cpp's name for general.file_type ("Q4_K_M"), null when the file does not say. */
  fileType: string | null;
  /** Tensor types by share of bytes, largest first. */
  typeMix: TypeShareView[];
  contextLength: number | null;
  /** Set when the file is missing or not a readable GGUF: what is wrong (shown beside `path`, which it does not repeat). */
  error: string | null;
  /**
   * Why Gufo cannot run it (`error`, a vocabulary-only file, an architecture the engine lacks);
   * null when it can. Only such models are offered to chat, benchmarks, export and the API.
   */
  notRunnable: string | null;
  /** Why it cannot generate text though it runs (an embedding model); null when it can. Such models are offered to export and embeddings only. */
  noGeneration: string | null;
  addedAt: string;
}

/** A path left out, and why ("not a GGUF file: …", "already in the library"). */
export interface SkippedPath {
  path: string;
  reason: string;
}

export interface AddModelsResult {
  added: ModelEntry[];
  skipped: SkippedPath[];
  /**
   * Folders of the add that became model folders (listed in Settings › Model folders, watched and
   * rescanned from now on); a folder that already was one, or lies inside one, is not listed again.
   */
  folders: string[];
}

/** The answer of the background SHA-256 job. */
export interface HashResult {
  hashed: number;
  /** Files that could not be hashed now. */
  skipped: SkippedPath[];
}

/** A folder the library scans for .gguf files (recursively), or another app's model store. */
export interface LibraryFolder {
  path: string;
  /**
   * 'data': the data dir's models/ (exports and downloads land there); 'env': GUFO_MODELS_DIRS;
   * 'settings': Settings › model folders; else the app whose default model store it is.
   */
  origin: 'data' | 'env' | 'settings' | 'ollama' | 'lmstudio' | 'huggingface' | 'jan' | 'gpt4all';
  /** Why it cannot be scanned now ("not found"), null when it can. */
  problem: string | null;
}

export interface LibraryApi {
  /** Every model in the library, after a quick check of the configured folders. */
  listModels(): Promise<ModelEntry[]>;
  getModel(id: number): Promise<ModelEntry>;
  /**
   * Adds files, or every .gguf under folders (recursively); a folder becomes a model folder
   * (Settings' `modelDirs`), so models copied into it later join the library too.
   */
  addModels(paths: string[]): Promise<AddModelsResult>;
  /**
   * Forgets a model (every location); with `deleteFile` also deletes its files from disk (the UI
   * confirms first), never those of another app's store (Ollama, LM Studio, ...: remove them there).
   * A removed file stays out of the library when folders are scanned again, until added by hand.
   */
  removeModel(id: number, options: { deleteFile: boolean }): Promise<void>;
  /** Scans the folders and the other apps' stores again, reading every file's header anew. */
  rescanLibrary(): Promise<ModelEntry[]>;
  /** The folders and app stores scanned, in order, each once (app stores that do not exist say so in `problem`). */
  libraryFolders(): Promise<LibraryFolder[]>;
}

export const LIBRARY_METHODS = [
  'listModels',
  'getModel',
  'addModels',
  'removeModel',
  'rescanLibrary',
  'libraryFolders',
] as const satisfies readonly (keyof LibraryApi)[];
