/**
 * Quality across quantization levels: the exports of one source model joined with their files'
 * latest benchmark runs and latest quality reports against that source, smallest file first.
 */
import type { QualityLevel, QualityLevels, QualityLevelsApi, QualityReport } from '../../../src-preload/api';
import { BenchRunStore } from '../../node/store/bench-runs';
import { ExportStore } from '../../node/store/exports';
import { QualityReportStore } from '../../node/store/quality-reports';
import { requireModel, type BackendContext } from '../context';
import { promised } from '../promised';

export function createQualityLevelsApi(ctx: BackendContext): QualityLevelsApi {
  const exports = new ExportStore(ctx.db);
  const benches = new BenchRunStore(ctx.db);
  const reports = new QualityReportStore(ctx.db);

  /** Newest first, as the store lists them: the first run is the latest. */
  const latestDecode = (modelId: number): number | null => benches.list(modelId)[0]?.decodeTokS ?? null;

  return promised<QualityLevelsApi>({
    qualityAcrossLevels(sourceModelId) {
      const source = requireModel(ctx, sourceModelId);
      // Newest first: the first report of a file against the source is its latest.
      const sourceReports = reports.list({ modelId: source.id }).filter((r) => r.baseModelId === source.id);
      const levels: QualityLevel[] = [];
      for (const e of exports.list()) {
        if (e.sourceModelId !== source.id || e.status !== 'done' || e.outputModelId === null) continue;
        const output = ctx.models.get(e.outputModelId);
        if (!output || levels.some((l) => l.modelId === output.id)) continue;
        const report = sourceReports.find((r) => r.exportId === e.id || r.quantModelId === output.id);
        levels.push({
          exportId: e.id,
          fileType: e.fileType,
          modelId: output.id,
          path: output.path,
          bytes: output.bytes,
          decodeTokS: latestDecode(output.id),
          report: report ? reportFigures(report) : null,
        });
      }
      levels.sort((a, b) => a.bytes - b.bytes || a.exportId - b.exportId);
      return {
        sourceModelId: source.id,
        sourceName: source.name,
        sourceBytes: source.bytes,
        sourceDecodeTokS: latestDecode(source.id),
        levels,
      } satisfies QualityLevels;
    },
  });
}

function reportFigures(r: QualityReport): QualityLevel['report'] {
  return {
    id: r.id,
    meanKl: r.meanKl,
    top1: r.top1,
    pplQuant: r.pplQuant,
    textLabel: r.textLabel,
    createdAt: r.createdAt,
  };
}
