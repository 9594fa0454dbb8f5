import { describe, expect, it } from 'vitest';
import type { BenchRun, ExportRecord, ModelEntry, QualityReport } from '../../src-preload/api';
import { COMPARED_EXPORTS, fileNameOf, qualityRows } from '../../src-renderer/lib/export-quality';

function exported(
  id: number,
  sourceModelId: number | null,
  outputModelId: number | null,
  status: ExportRecord['status'] = 'done',
): ExportRecord {
  return {
    id,
    sourceModelId,
    sourceName: 'stories',
    sourcePath: '/m/stories.gguf',
    outputPath: `/m/stories-${id}.gguf`,
    fileType: 'Q8_0',
    status,
    bytesOut: 300_000 + id,
    seconds: 1,
    error: null,
    outputModelId,
    jobId: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: null,
  };
}

const model = (id: number, bytes: number) => ({ id, name: `model ${id}`, path: `/m/${id}.gguf`, bytes }) as ModelEntry;
const bench = (id: number, modelId: number, decodeTokS: number) => ({ id, modelId, decodeTokS }) as BenchRun;
const report = (id: number, exportId: number | null, baseModelId: number, quantModelId: number) =>
  ({ id, exportId, baseModelId, quantModelId, meanKl: id }) as QualityReport;

describe('the Export screen comparison', () => {
  it("pairs each finished export with both files' latest benchmark and its latest report", () => {
    const rows = qualityRows(
      [exported(3, 1, 4), exported(2, 1, null), exported(1, 1, 2), exported(0, 1, 9, 'failed')],
      // Newest first: the app's report for export 1, then an older one from gufo kld on the same files.
      [report(8, 1, 1, 2), report(7, null, 1, 2), report(6, null, 2, 1)],
      [bench(5, 2, 11.5), bench(4, 1, 13.2), bench(3, 2, 9.9)],
      [model(1, 1_130_000), model(2, 300_001)],
    );
    expect(rows).toEqual([
      {
        exportId: 3,
        fileType: 'Q8_0',
        source: { modelId: 1, name: 'model 1', path: '/m/1.gguf', bytes: 1_130_000, decodeTokS: 13.2 },
        // Not in the models list (yet): what the export recorded.
        output: { modelId: 4, name: '/m/stories-3.gguf', path: '/m/stories-3.gguf', bytes: 300_003, decodeTokS: null },
        report: null,
      },
      {
        exportId: 1,
        fileType: 'Q8_0',
        source: { modelId: 1, name: 'model 1', path: '/m/1.gguf', bytes: 1_130_000, decodeTokS: 13.2 },
        output: { modelId: 2, name: 'model 2', path: '/m/2.gguf', bytes: 300_001, decodeTokS: 11.5 },
        report: report(8, 1, 1, 2),
      },
    ]);
    // A report of the same two files by gufo kld counts too, the other way round does not.
    expect(qualityRows([exported(1, 1, 2)], [report(7, null, 1, 2)], [], [])[0]!.report!.id).toBe(7);
    expect(qualityRows([exported(1, 1, 2)], [report(6, null, 2, 1)], [], [])[0]!.report).toBeNull();
  });

  it('keeps the most recent exports only', () => {
    const many = Array.from({ length: COMPARED_EXPORTS + 5 }, (_, i) => exported(100 - i, 1, 200 + i));
    expect(qualityRows(many, [], [], []).map((r) => r.exportId)).toEqual(
      many.slice(0, COMPARED_EXPORTS).map((e) => e.id),
    );
  });

  it('names files by the last part of their path', () => {
    expect(fileNameOf('/a/b/c.gguf')).toBe('c.gguf');
    expect(fileNameOf('C:\\models\\d.gguf')).toBe('d.gguf');
  });
});
