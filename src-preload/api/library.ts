/** The model library: GGUF files Gufo knows about, wherever they live. */

/** Where a library entry came from. */
export type ModelSource = 'folder' | 'added' | 'exported' | 'downloaded';

export interface TypeShareView {
  /** ggml type name ("Q4_K"). */
  type: string;
  tensors: number;
  parameters: number;
  bytes: number;
}

export interface ModelEntry {
  id: number;
  /** Display name: general.name, else the file name without .gguf. */
  name: string;
  path: string;
  fileName: string;
  source: ModelSource;
  bytes: number;
  mtimeMs: number;
  /** Null until computed in the background. */
  sha256: string | null;
  architecture: string | null;
  parameters: number | null;
  /** llama.cpp's name for general.file_type ("Q4_K_M"), null when the file does not say. */
  fileType: string | null;
  /** Tensor types by share of bytes, largest first. */
  typeMix: TypeShareView[];
  contextLength: number | null;
  /** Set when the file is missing or not a readable GGUF: what is wrong, naming the file. */
  error: string | null;
  addedAt: string;
}

export interface AddModelsResult {
  added: ModelEntry[];
  /** Paths that were not added, and why ("not a GGUF file: …", "already in the library"). */
  skipped: { path: string; reason: string }[];
}

/** A folder the library scans for .gguf files (recursively). */
export interface LibraryFolder {
  path: string;
  /** 'data': the data dir's models/ (exports land there); 'env': GUFO_MODELS_DIRS; 'settings': Settings › model folders. */
  origin: 'data' | 'env' | 'settings';
  /** Why it cannot be scanned now ("not found"), null when it can. */
  problem: string | null;
}

export interface LibraryApi {
  /** Every model in the library, after a quick check of the configured folders. */
  listModels(): Promise<ModelEntry[]>;
  getModel(id: number): Promise<ModelEntry>;
  /** Adds files, or every .gguf under folders (recursively). */
  addModels(paths: string[]): Promise<AddModelsResult>;
  /**
   * Forgets a model; with `deleteFile` also deletes the file from disk (the UI confirms first).
   * A removed file stays out of the library when folders are scanned again, until added by hand.
   */
  removeModel(id: number, options: { deleteFile: boolean }): Promise<void>;
  /** Scans the configured folders again, reading every file's header anew. */
  rescanLibrary(): Promise<ModelEntry[]>;
  /** The folders scanned, in order, each once. */
  libraryFolders(): Promise<LibraryFolder[]>;
}

export const LIBRARY_METHODS = ['listModels', 'getModel', 'addModels', 'removeModel', 'rescanLibrary', 'libraryFolders'] as const satisfies readonly (keyof LibraryApi)[];
