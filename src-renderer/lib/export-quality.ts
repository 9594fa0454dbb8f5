/**
 * The Export screen's comparison of each export with its source: size and latest decode speed of
 * both files, and the export's latest quality report (run by the app for that export, or by
 * `gufo kld` on the same two files).
 */
import type { BenchRun, ExportRecord, ModelEntry, QualityReport } from '../../src-preload/api';

/** The most recent exports compared (the history table lists them all). */
export const COMPARED_EXPORTS = 10;

export interface FileFigures {
  modelId: number;
  name: string;
  path: string;
  bytes: number | null;
  /** Of the model's latest benchmark run. */
  decodeTokS: number | null;
}

export interface QualityRow {
  exportId: number;
  fileType: string;
  source: FileFigures;
  output: FileFigures;
  report: QualityReport | null;
}

/**
 * One row per finished export whose files are both in the library, newest first; `reports` and
 * `benches` newest first, as the back end lists them.
 */
export function qualityRows(
  exports: readonly ExportRecord[],
  reports: readonly QualityReport[],
  benches: readonly BenchRun[],
  models: readonly ModelEntry[],
): QualityRow[] {
  const latestBench = new Map<number, BenchRun>();
  for (const run of benches)
    if (run.modelId !== null && !latestBench.has(run.modelId)) latestBench.set(run.modelId, run);
  const figures = (modelId: number, bytes: number | null, fallback: { name: string; path: string }): FileFigures => {
    const model = models.find((m) => m.id === modelId);
    return {
      modelId,
      name: model?.name ?? fallback.name,
      path: model?.path ?? fallback.path,
      bytes: bytes ?? model?.bytes ?? null,
      decodeTokS: latestBench.get(modelId)?.decodeTokS ?? null,
    };
  };
  const rows: QualityRow[] = [];
  for (const e of exports) {
    if (rows.length === COMPARED_EXPORTS) break;
    const { sourceModelId: sourceId, outputModelId: outputId } = e;
    if (e.status !== 'done' || sourceId === null || outputId === null) continue;
    rows.push({
      exportId: e.id,
      fileType: e.fileType,
      source: figures(sourceId, null, { name: e.sourceName, path: e.sourcePath }),
      output: figures(outputId, e.bytesOut, { name: e.outputPath, path: e.outputPath }),
      report:
        reports.find((r) => r.exportId === e.id || (r.baseModelId === sourceId && r.quantModelId === outputId)) ?? null,
    });
  }
  return rows;
}

/** The last part of a path, for a table cell. */
export function fileNameOf(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
