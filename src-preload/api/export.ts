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
  /**
   * Tensors whose rows cannot hold the mixture's type (e.g. 64-wide rows and 256-wide K-quant
   * blocks), grouped by that type (`from`) and the type written instead (`to`).
   */
  fallbacks: { from: string; to: string; tensors: number }[];
  /** Tensors already quantized that this type converts again (through f32, losing some quality). */
  requantizes: number;
  /** Why it cannot be chosen for this model (no codec, or re-quantizing not allowed), null when it can. */
  unavailable: string | null;
  /** Where the file goes unless another path is given: a free name in the export folder. */
  defaultOutputPath: string;
  /** Whether this type can be written only with an importance matrix (and none was given). */
  needsImatrix: boolean;
  /**
   * Predicted quality with the plan's recipe and importance matrix, pooled from the cached
   * per-tensor measurements of the prediction job (the same figures `gufo quantize --plan` gives
   * with the same overrides); null when none is cached yet, or a tensor takes a type not measured.
   */
  predicted: PredictedQuality | null;
}

/**
 * A custom recipe on top of the file type's mixture, as llama-quantize's options (gufo quantize
 * --tensor-type, --output-tensor-type, --token-embedding-type, --pure). Types are ggml type names
 * ("Q8_0", any case). The written file records it in its metadata (gufo.quantize.recipe).
 */
export interface ExportRecipe {
  /** In order: the first pattern (a regular expression searched in tensor names) that matches sets the type; rows too short for it fall back. */
  tensorTypes?: { pattern: string; type: string }[];
  outputTensorType?: string;
  tokenEmbeddingType?: string;
  pure?: boolean;
}

export interface ExportPlanOptions {
  /** Allow types that convert already-quantized tensors again (default false, as llama-quantize). */
  allowRequantize?: boolean;
  /** Predict the sizes with these overrides (bad patterns or types are refused with an error naming them). */
  recipe?: ExportRecipe;
  /** An importance matrix file (see startImatrix): types that need one become available, predictions use it. */
  imatrix?: string;
}

export interface ExportPlanView {
  modelId: number;
  sourceBytes: number;
  options: ExportTypeOption[];
  /** Where files go by default (settings' export folder, else the data dir's models/). */
  defaultOutputDir: string;
  /** The types the recipe editor offers the layers' matrices and the two tensors outside them. */
  recipeTypes: Record<'layer' | 'output' | 'token_embd', RecipeTypes>;
}

/** Every type Gufo writes, most bits per weight first, split by whether the tensor then needs an importance matrix. */
export interface RecipeTypes {
  without: string[];
  needing: string[];
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
  /** Overrides on top of the file type's mixture; see ExportRecipe. */
  recipe?: ExportRecipe;
  /** Quantize with this importance matrix file (GGUF or legacy .dat), as gufo quantize --imatrix. */
  imatrix?: string;
  /**
   * Once the file is written, start a 'quality' job comparing it with its source on this text
   * (see startQualityReport). Default: none.
   */
  qualityReport?: QualityTextSource;
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

/**
 * The text a quality report scores: Gufo's built-in English text (a few hundred tokens), or the
 * user's recent chats replayed as plain text. Reports from `gufo kld` name their --text file.
 */
export type QualityTextSource = 'builtin' | 'chats';

/** Which two models a quality report compares: an export's source and output, or any two with the same vocabulary. */
export type QualityPair = { exportId: number } | { baseModelId: number; quantModelId: number };

export type QualityReportRequest = QualityPair & {
  /** Default 'builtin'. */
  text?: QualityTextSource;
};

/**
 * How far a quantized model's next-token distributions lie from its base's over a text, as
 * `gufo kld` (llama-perplexity --kl-divergence) measures them; kept in the database.
 */
export interface QualityReport {
  id: number;
  /** The export the report was run for, if any. */
  exportId: number | null;
  baseModelId: number | null;
  baseName: string;
  basePath: string;
  baseSha256: string | null;
  quantModelId: number | null;
  quantName: string;
  quantPath: string;
  quantSha256: string | null;
  textSource: QualityTextSource | 'file';
  /** What the text was: "built-in text", "3 recent chats", the file's path. */
  textLabel: string;
  /** Window size in tokens, tokens of the text, and positions scored (see gufo kld --help). */
  ctx: number;
  tokens: number;
  positions: number;
  /** Mean, 99th percentile and maximum KL(base ‖ quantized) in nats per position. */
  meanKl: number;
  p99Kl: number;
  maxKl: number;
  /** Fraction of positions where both models rank the same token first. */
  top1: number;
  /** Mean p_quant(t) − p_base(t), t the base's most likely token; and t the text's next token. */
  meanDeltaP: number;
  meanDeltaPNext: number;
  pplBase: number;
  pplQuant: number;
  /** The GPU adapter both models ran on. */
  adapter: string;
  appVersion: string;
  createdAt: string;
}

export interface QualityReportQuery {
  /** Reports where this model is the base or the quantized one. */
  modelId?: number;
  exportId?: number;
}

/**
 * The quality an export to a type is predicted to have: a sample of rows of every tensor (evenly
 * spread, the same rows on every run) encoded to the type the recipe gives that tensor and decoded
 * back, compared with the source's values as `gufo tensor-error` compares two files, each
 * tensor's sums scaled to its element count and pooled over the model.
 */
export interface PredictedQuality {
  /** Every element of the model, and how many of them the sample measured. */
  elements: number;
  sampledElements: number;
  rmse: number;
  /** ‖export − source‖ / ‖source‖ over the model; null for an all-zero model. */
  relativeError: number | null;
  /** 10·log10(Σ source² / Σ (export − source)²) in dB; null when nothing changes (or no signal). */
  snrDb: number | null;
}

/** One file type's predicted quality, with the KL of an export of this source to that type where one was measured. */
export interface TypeQualityPrediction {
  fileType: string;
  /** Null when the type cannot be written for this model (see the plan's `unavailable`). */
  predicted: PredictedQuality | null;
  /** The newest KL report of a finished export of this source to this type. */
  measured: { meanKl: number; reportId: number; exportId: number } | null;
}

/** The result of a 'quality-prediction' job: every file type's predicted quality for one model file. */
export interface QualityPrediction {
  modelId: number;
  /** The file the prediction is for: predictions are cached per SHA-256, for any path holding those bytes. */
  sha256: string;
  /** The importance matrix file the encoders weighed with, or null; cached per its SHA-256 too. */
  imatrix: string | null;
  /** Whether it came from the cache (an earlier run over a file with these bytes). */
  cached: boolean;
  /** When it was computed. */
  computedAt: string;
  types: TypeQualityPrediction[];
}

/**
 * The text an importance matrix is computed from: Gufo's built-in text, the user's recent chats,
 * or a file: an importance matrix already (llama-imatrix's .gguf or .dat, used as it is) or a
 * UTF-8 text to compute one from.
 */
export type ImatrixSource = { kind: 'builtin' } | { kind: 'chats' } | { kind: 'file'; path: string };

/** The result of an 'imatrix' job: an importance matrix for one model file, ready for exportPlan and startExport. */
export interface ImatrixView {
  modelId: number;
  /** The importance matrix file to pass as `imatrix`. */
  path: string;
  /** What it was computed from ("built-in text v1", "3 recent chats", a file's path). */
  label: string;
  /** Weight matrices it weighs. */
  entries: number;
  /** Chunks evaluated and their size in tokens; null for a file given ready-made. */
  chunks: number | null;
  chunkSize: number | null;
  /** Whether an earlier run over the same model bytes and text answered (nothing was computed). */
  cached: boolean;
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
  /**
   * Starts a 'quality' job (progress in steps: windows of the text per model); its result is the
   * stored QualityReport. Fails at once when a model is missing or the vocabularies differ.
   */
  startQualityReport(request: QualityReportRequest): Promise<string>;
  /** Newest first. */
  listQualityReports(query?: QualityReportQuery): Promise<QualityReport[]>;
  /**
   * Starts a 'quality-prediction' job (progress in tensors): the model's file is hashed if the
   * library has no SHA-256 for it yet, then every file type's quality is predicted, unless a
   * prediction for those bytes is cached (the job ends at once). Result: QualityPrediction.
   */
  startQualityPrediction(modelId: number, options?: { imatrix?: string }): Promise<string>;
  /** The cached prediction for the model's file, with the newest KL reports beside it; null when none is cached yet. */
  qualityPrediction(modelId: number, options?: { imatrix?: string }): Promise<QualityPrediction | null>;
  /**
   * Starts an 'imatrix' job (progress in steps: chunks of the text) that computes the model's
   * importance matrix on the GPU as `gufo imatrix` does, kept in the data folder per model bytes
   * and text and reused; a ready-made matrix file is checked and used as it is. Result: ImatrixView.
   */
  startImatrix(modelId: number, source: ImatrixSource): Promise<string>;
}

export const EXPORT_METHODS = [
  'exportPlan',
  'startExport',
  'listExports',
  'startQualityReport',
  'listQualityReports',
  'startQualityPrediction',
  'qualityPrediction',
  'startImatrix',
] as const satisfies readonly (keyof ExportApi)[];
