/**
 * Hand-off to Ollama: a library model (re-quantized if asked) written as `<name>.gguf` with a
 * Modelfile, and created in the Ollama server on OLLAMA_HOST when one answers (Ollama's REST API
 * as of 0.5.5: /api/blobs/:digest and /api/create with `files`).
 */

export interface OllamaServerView {
  /** Base URL from OLLAMA_HOST (default http://127.0.0.1:11434). */
  host: string;
  /** The server's version, null when none answers. */
  version: string | null;
  /** Why it cannot be used (not running, too old), null when it can. */
  problem: string | null;
}

export interface OllamaExportRequest {
  modelId: number;
  /** Ollama model name, `[namespace/]name[:tag]`. */
  name: string;
  /** llama.cpp file type to re-quantize to ("Q4_K_M"); absent: the file as it is. */
  fileType?: string;
  /** Folder for `<name>.gguf` and `Modelfile` (default: `<export folder>/ollama/<name>`). */
  outputDir?: string;
  /** SYSTEM prompt for the Modelfile. */
  system?: string;
  /** PARAMETER num_ctx (default: ollamaDefaultContext of the model's trained context). */
  contextSize?: number;
  /** Re-quantize with this importance matrix file (as ExportRequest's; it makes the IQ types possible). */
  imatrix?: string;
  /** Upload to the Ollama server when one answers (default true). */
  upload?: boolean;
}

export interface OllamaExportResult {
  name: string;
  /** The GGUF file written (it joins the library as 'exported'). */
  outputPath: string;
  outputModelId: number | null;
  modelfilePath: string;
  modelfile: string;
  sha256: string;
  /** Whether the model was created in the Ollama server. */
  created: boolean;
  /** The server's version when it was used. */
  ollamaVersion: string | null;
  /** The command that creates the model by hand (`ollama create <name> -f <Modelfile>`). */
  command: string;
  /** Things the user should know (a chat template Ollama may not recognize). */
  notes: string[];
}

/** num_ctx when none is asked for: the model's trained context, at most what most machines can hold. */
const OLLAMA_MAX_DEFAULT_CONTEXT = 8192;

/** The num_ctx a Modelfile gets by default for a model trained on `trained` tokens (null: unknown). */
export function ollamaDefaultContext(trained: number | null): number {
  return Math.min(trained ?? OLLAMA_MAX_DEFAULT_CONTEXT, OLLAMA_MAX_DEFAULT_CONTEXT);
}

export interface OllamaApi {
  /** Whether an Ollama server answers on OLLAMA_HOST, and its version. */
  ollamaServer(): Promise<OllamaServerView>;
  /** Starts an 'ollama-export' job whose result is an OllamaExportResult; cancel leaves no partial file. */
  startOllamaExport(request: OllamaExportRequest): Promise<string>;
}

export const OLLAMA_METHODS = ['ollamaServer', 'startOllamaExport'] as const satisfies readonly (keyof OllamaApi)[];
