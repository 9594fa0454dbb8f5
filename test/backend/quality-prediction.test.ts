/**
 * Each file type's predicted quality as a background job, cached per file SHA-256 in SQLite, with
 * the mean KL of an export of the source to that type beside it once a report was measured.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportRecord, QualityPrediction } from '../../src-preload/api';
import { openGguf } from '../../src-main/node/gguf-io';
import { readModelFile } from '../../src-main/node/model-file';
import { quantizePlan } from '../../src-main/node/quant-plan';
import { QualityReportStore } from '../../src-main/node/store/quality-reports';
import { testBackend, type TestBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

async function predict(b: TestBackend, modelId: number): Promise<QualityPrediction> {
  const job = await b.context.jobs.wait(await b.api.startQualityPrediction(modelId));
  expect(job, job.error ?? '').toMatchObject({ kind: 'quality-prediction', status: 'done', modelId });
  return job.result as QualityPrediction;
}

describe('predicted quality per file type', () => {
  it("computes the CLI plan's predictions once per file SHA-256 and serves a copy of the file from the cache", async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    expect(await b.api.qualityPrediction(modelId)).toBeNull();

    const first = await predict(b, modelId);
    const { gguf, file } = openGguf(STORIES_260K);
    const cli = await quantizePlan(gguf).finally(() => file.close());
    expect(first).toMatchObject({ modelId, cached: false, sha256: b.context.models.get(modelId)!.sha256 });
    expect(first.types).toEqual(cli.map((r) => ({ fileType: r.type, predicted: r.predicted, measured: null })));

    // The same bytes at another path: the cache answers, and at once.
    const copy = join(tempDir(), 'copy.gguf');
    copyFileSync(STORIES_260K, copy);
    const copyId = addModel(b, copy);
    const second = await predict(b, copyId);
    expect(second).toMatchObject({
      modelId: copyId,
      cached: true,
      sha256: first.sha256,
      computedAt: first.computedAt,
      types: first.types,
    });
    expect(b.context.db.prepare('SELECT count(*) AS n FROM quality_predictions').get()).toEqual({ n: 1 });
    expect(await b.api.qualityPrediction(modelId)).toEqual({ ...first, cached: true });
  }, 120_000);

  it("shows the newest KL report of an export of the source to a type beside that type's prediction", async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    await predict(b, modelId);
    const made = (await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'Q8_0' })))
      .result as ExportRecord;
    const source = b.context.models.get(modelId)!;
    const quant = b.context.models.get(made.outputModelId!)!;
    const reports = new QualityReportStore(b.context.db);
    const report = (meanKl: number) =>
      reports.add({
        exportId: made.id,
        baseModelId: modelId,
        baseName: source.name,
        basePath: source.path,
        baseSha256: source.sha256,
        quantModelId: quant.id,
        quantName: quant.name,
        quantPath: quant.path,
        quantSha256: null,
        textSource: 'builtin',
        textLabel: 'built-in text',
        ctx: 128,
        tokens: 300,
        positions: 200,
        meanKl,
        p99Kl: 0.1,
        maxKl: 0.2,
        top1: 0.99,
        meanDeltaP: 0,
        meanDeltaPNext: 0,
        pplBase: 10,
        pplQuant: 10.1,
        adapter: 'test',
        appVersion: '0',
      });
    report(0.002);
    const newest = report(0.001);
    const prediction = (await b.api.qualityPrediction(modelId))!;
    expect(prediction.types.find((t) => t.fileType === 'Q8_0')!.measured).toEqual({
      meanKl: 0.001,
      reportId: newest.id,
      exportId: made.id,
    });
    expect(prediction.types.filter((t) => t.measured !== null).map((t) => t.fileType)).toEqual(['Q8_0']);
  }, 120_000);

  it('runs one job per question, and an export started meanwhile waits for it, saying so', async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    const first = await b.api.startQualityPrediction(modelId);
    expect(await b.api.startQualityPrediction(modelId)).toBe(first);
    const exportId = await b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: join(tempDir(), 'q8.gguf') });
    expect(b.context.jobs.get(exportId)).toMatchObject({
      status: 'running',
      detail: 'Waiting for "Predicted quality of stories260K per type" to finish',
    });
    const [predicted, exported] = await Promise.all([b.context.jobs.wait(first), b.context.jobs.wait(exportId)]);
    expect(predicted.status).toBe('done');
    expect(exported.status).toBe('done');
    // The export began once the prediction had ended.
    expect(Date.parse(exported.endedAt!)).toBeGreaterThanOrEqual(Date.parse(predicted.endedAt!));
    // Asked again once it has ended: the cache answers in a new job.
    expect(await b.api.startQualityPrediction(modelId)).not.toBe(first);
  });
});
