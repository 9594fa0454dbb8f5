/** Export: a model re-quantized to another file type, written as a new GGUF that joins the library. */

export interface ExportTypeOption {
  /** llama.cpp's file type name ("Q4_K_M"). */
  fileType: string;
  /**
   * Size of the file the export writes, in bytes, exactly: the recipe's per-tensor types laid out
   * with the metadata as the GGUF writer writes them. Null when the recipe cannot plan this type.
   */
  predictedBytes: number | null;
  /** Tensor bytes × 8 / weights, over every tensor; null with predictedBytes. */
  bitsPerWeight: number | null;
  /** Tensors already quantized that this type converts again (through f32, losing some quality). */
  requantizes: number;
  /** Why it cannot be chosen for this model (no codec, or re-quantizing not allowed), null when it can. */
  unavailable: string | null;
  /** Where the file goes unless another path is given: a free name in the export folder. */
  defaultOutputPath: string;
}

export interface ExportPlanOptions {
  /** Allow types that convert already-quantized tensors again (default false, as llama-quantize). */
  allowRequantize?: boolean;
}

export interface ExportPlanView {
  modelId: number;
  sourceBytes: number;
  options: ExportTypeOption[];
  /** Where files go by default (settings' export folder, else the data dir's models/). */
  defaultOutputDir: string;
}

export interface ExportRequest {
  modelId: number;
  fileType: string;
  /**
   * A .gguf path that does not exist yet. Default: `<exportDir>/<source name>-<fileType>.gguf`,
   * with "-2", "-3", … added when that name is taken.
   */
  outputPath?: string;
  /** See ExportPlanOptions. */
  allowRequantize?: boolean;
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
  /** Every file type Gufo can write, with its predicted size and whether this model can take it. */
  exportPlan(modelId: number, options?: ExportPlanOptions): Promise<ExportPlanView>;
  /**
   * Starts an 'export' job (progress in bytes of the predicted size); its result is the finished
   * ExportRecord, whose file has joined the library. Cancel or failure leaves no partial file.
   */
  startExport(request: ExportRequest): Promise<string>;
  /** Newest first. */
  listExports(): Promise<ExportRecord[]>;
}

export const EXPORT_METHODS = ['exportPlan', 'startExport', 'listExports'] as const satisfies readonly (keyof ExportApi)[];
