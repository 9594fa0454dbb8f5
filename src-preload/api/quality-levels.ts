/**
 * Quality across quantization levels: every export of one source model side by side, with each
 * file's size, its latest decode speed and its latest KL divergence from the source.
 */

export interface QualityLevel {
  exportId: number;
  /** llama.cpp's file type name ("Q4_K_M"). */
  fileType: string;
  /** The library entry of the written file. */
  modelId: number;
  path: string;
  bytes: number;
  /** Of the file's latest benchmark run; null when it has none. */
  decodeTokS: number | null;
  /**
   * The file's latest quality report against the source (run for this export, or by `gufo kld`
   * on the same two files); null when it has none.
   */
  report: { id: number; meanKl: number; top1: number; pplQuant: number; textLabel: string; createdAt: string } | null;
}

export interface QualityLevels {
  sourceModelId: number;
  sourceName: string;
  sourceBytes: number;
  /** Of the source's latest benchmark run; null when it has none. */
  sourceDecodeTokS: number | null;
  /** One per finished export whose file is still in the library, smallest first. */
  levels: QualityLevel[];
}

export interface QualityLevelsApi {
  /** The exports of the model with id `sourceModelId`, with size, decode speed and mean KL each. */
  qualityAcrossLevels(sourceModelId: number): Promise<QualityLevels>;
}

export const QUALITY_LEVELS_METHODS = ['qualityAcrossLevels'] as const satisfies readonly (keyof QualityLevelsApi)[];
