/** Export: a model re-quantized to another file type, written as a new GGUF that joins the library. */

export interface ExportTypeOption {
  /** llama.cpp's file type name ("Q4_K_M"). */
  fileType: string;
  /** Predicted output size in bytes (tensor data + metadata), from the recipe alone. */
  predictedBytes: number;
  bitsPerWeight: number;
  /** Why it cannot be chosen for this model (e.g. needs an importance matrix), null when it can. */
  unavailable: string | null;
}

export interface ExportPlanView {
  modelId: number;
  sourceBytes: number;
  options: ExportTypeOption[];
  /** Where the file goes by default. */
  defaultOutputDir: string;
}

export interface ExportRequest {
  modelId: number;
  fileType: string;
  /** Default: `<exportDir>/<source name>-<fileType>.gguf`. */
  outputPath?: string;
}

export type ExportStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface ExportRecord {
  id: number;
  sourceModelId: number | null;
  sourceName: string;
  sourcePath: string;
  outputPath: string;
  fileType: string;
  status: ExportStatus;
  bytesOut: number | null;
  seconds: number | null;
  error: string | null;
  /** The library entry of the written file. */
  outputModelId: number | null;
  jobId: string | null;
  startedAt: string;
  endedAt: string | null;
}

export interface ExportApi {
  exportPlan(modelId: number): Promise<ExportPlanView>;
  /** Starts an 'export' job; its result is the finished ExportRecord. Cancel removes the partial file. */
  startExport(request: ExportRequest): Promise<string>;
  listExports(): Promise<ExportRecord[]>;
}

export const EXPORT_METHODS = ['exportPlan', 'startExport', 'listExports'] as const satisfies readonly (keyof ExportApi)[];
