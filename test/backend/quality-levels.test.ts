/**
 * Quality across quantization levels: the exports of one source joined with their latest
 * benchmark run and latest quality report against that source, from the app's own SQLite stores.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchRun, QualityReport } from '../../src-preload/api';
import { readModelFile } from '../../src-main/node/model-file';
import { quantizeFile } from '../../src-main/node/quantize';
import { BenchRunStore } from '../../src-main/node/store/bench-runs';
import { ExportStore } from '../../src-main/node/store/exports';
import { QualityReportStore } from '../../src-main/node/store/quality-reports';
import { testBackend, type TestBackend } from '../support/backend';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';

function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

/** A finished export of `sourceId` to `outputPath` (a real file), as the export job records it. */
function exported(
  b: TestBackend,
  sourceId: number,
  outputPath: string,
  fileType: string,
): { exportId: number; modelId: number } {
  const store = new ExportStore(b.context.db);
  const e = store.start({
    sourceModelId: sourceId,
    sourceName: 'stories260K',
    sourcePath: STORIES_260K,
    outputPath,
    fileType,
  });
  const modelId = addModel(b, outputPath);
  store.finish(e.id, { status: 'done', bytesOut: statSync(outputPath).size, seconds: 1, outputModelId: modelId });
  return { exportId: e.id, modelId };
}

function bench(b: TestBackend, modelId: number, decodeTokS: number): void {
  const run: Omit<BenchRun, 'id' | 'createdAt'> = {
    modelId,
    modelName: 'm',
    modelPath: 'm.gguf',
    fileSha256: null,
    adapter: 'SwiftShader',
    backend: 'vulkan',
    promptTokens: 512,
    genTokens: 128,
    prefillTokS: 1000,
    decodeTokS,
    ttftMs: 10,
    loadMs: 10,
    rooflineFraction: null,
    appVersion: '0',
  };
  new BenchRunStore(b.context.db).add(run);
}

function report(
  b: TestBackend,
  baseModelId: number,
  quantModelId: number,
  exportId: number | null,
  meanKl: number,
): QualityReport {
  return new QualityReportStore(b.context.db).add({
    exportId,
    baseModelId,
    baseName: 'base',
    basePath: 'base.gguf',
    baseSha256: null,
    quantModelId,
    quantName: 'quant',
    quantPath: 'quant.gguf',
    quantSha256: null,
    textSource: exportId === null ? 'file' : 'builtin',
    textLabel: exportId === null ? '/tmp/story.txt' : 'built-in text',
    ctx: 512,
    tokens: 700,
    positions: 255,
    meanKl,
    p99Kl: meanKl * 5,
    maxKl: meanKl * 10,
    top1: 0.97,
    meanDeltaP: 0,
    meanDeltaPNext: 0,
    pplBase: 11.6,
    pplQuant: 11.7,
    adapter: 'SwiftShader',
    appVersion: '0',
  });
}

describe('qualityAcrossLevels', () => {
  it('lists every finished export of the source, smallest first, with its latest decode speed and latest KL against the source', async () => {
    const b = testBackend();
    const dir = tempDir();
    const sourceId = addModel(b, STORIES_260K);
    const otherId = addModel(b, TINY_RANDOM_LLAMA);
    const paths = {
      Q8_0: join(dir, 's-Q8_0.gguf'),
      Q4_K_M: join(dir, 's-Q4_K_M.gguf'),
      Q2_K: join(dir, 's-Q2_K.gguf'),
    };
    for (const [type, path] of Object.entries(paths))
      await quantizeFile(STORIES_260K, path, type as keyof typeof paths);
    const q8 = exported(b, sourceId, paths.Q8_0, 'Q8_0');
    const q4 = exported(b, sourceId, paths.Q4_K_M, 'Q4_K_M');
    // Left out: a failed export, an export of another model, and one whose file left the library.
    const exports = new ExportStore(b.context.db);
    const failed = exports.start({
      sourceModelId: sourceId,
      sourceName: 's',
      sourcePath: STORIES_260K,
      outputPath: join(dir, 'x.gguf'),
      fileType: 'Q6_K',
    });
    exports.finish(failed.id, { status: 'failed', seconds: 1, error: 'disk full' });
    exported(b, otherId, paths.Q2_K, 'Q2_K');
    const gone = exported(b, sourceId, paths.Q2_K, 'Q2_K');
    b.context.models.delete(gone.modelId);

    bench(b, sourceId, 400);
    bench(b, q8.modelId, 100);
    bench(b, q8.modelId, 120); // the latest
    report(b, sourceId, q8.modelId, q8.exportId, 9e-4);
    const latestQ8 = report(b, sourceId, q8.modelId, q8.exportId, 5e-4);
    const kld = report(b, sourceId, q4.modelId, null, 1.2e-2); // gufo kld on the same two files
    report(b, otherId, q4.modelId, null, 3); // against another base: not this source's figure

    const view = await b.api.qualityAcrossLevels(sourceId);
    expect(view).toMatchObject({
      sourceModelId: sourceId,
      sourceName: 'stories260K',
      sourceBytes: statSync(STORIES_260K).size,
      sourceDecodeTokS: 400,
    });
    expect(view.levels.map((l) => l.fileType)).toEqual(['Q4_K_M', 'Q8_0']);
    const [small, large] = view.levels;
    expect(small).toEqual({
      exportId: q4.exportId,
      fileType: 'Q4_K_M',
      modelId: q4.modelId,
      path: paths.Q4_K_M,
      bytes: statSync(paths.Q4_K_M).size,
      decodeTokS: null,
      report: {
        id: kld.id,
        meanKl: 1.2e-2,
        top1: 0.97,
        pplQuant: 11.7,
        textLabel: '/tmp/story.txt',
        createdAt: kld.createdAt,
      },
    });
    expect(large).toMatchObject({
      exportId: q8.exportId,
      modelId: q8.modelId,
      bytes: statSync(paths.Q8_0).size,
      decodeTokS: 120,
      report: { id: latestQ8.id, meanKl: 5e-4 },
    });
    expect(small!.bytes).toBeLessThan(large!.bytes);

    await expect(b.api.qualityAcrossLevels(9999)).rejects.toThrow('no model with id 9999 in the library');
  });
});
