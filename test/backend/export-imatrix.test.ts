/**
 * The Export screen's importance matrix and recipe prediction, through the real back end (SQLite,
 * files, the engine on SwiftShader): an 'imatrix' job computes one from the built-in text or a text
 * file as `gufo imatrix` does, kept in the data folder and reused; a ready-made matrix file is used
 * as it is; the plan, the prediction and the export use it as `gufo quantize [--plan] --imatrix`
 * does. A custom recipe's predicted quality is pooled from the cached per-tensor measurements and
 * equals `gufo quantize --plan` with the same overrides.
 */
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportRecipe, ExportRecord, ImatrixView, QualityPrediction } from '../../src-preload/api';
import { resolveOverrides } from '../../src-main/core/recipe-overrides';
import { openGguf } from '../../src-main/node/gguf-io';
import { loadImatrix } from '../../src-main/node/imatrix-file';
import { readModelFile } from '../../src-main/node/model-file';
import { ChatStore } from '../../src-main/node/store/chats';
import { quantizePlan } from '../../src-main/node/quant-plan';
import { quantizeFile } from '../../src-main/node/quantize';
import { testBackend, type TestBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { writeUniformImatrix } from '../support/uniform-imatrix';

const GPU_TIMEOUT = 480_000;

function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

async function finished<T>(b: TestBackend, jobId: Promise<string>): Promise<T> {
  const job = await b.context.jobs.wait(await jobId);
  expect(job.status, job.error ?? '').toBe('done');
  return job.result as T;
}

async function cliPlan(options: Parameters<typeof quantizePlan>[1]) {
  const { gguf, file } = openGguf(STORIES_260K);
  return quantizePlan(gguf, options).finally(() => file.close());
}

describe('a custom recipe’s predicted quality', () => {
  it('is pooled from the cached per-tensor measurements and equals gufo quantize --plan with the same overrides', async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    const recipe: ExportRecipe = {
      tensorTypes: [
        { pattern: '^blk\\.(?:0|1)\\.ffn_down\\.weight$', type: 'Q8_0' },
        { pattern: 'attn_v', type: 'Q4_0' },
      ],
      outputTensorType: 'Q6_K',
    };
    // Nothing measured yet: no prediction.
    expect((await b.api.exportPlan(modelId, { recipe })).options.every((o) => o.predicted === null)).toBe(true);

    const prediction = await finished<QualityPrediction>(b, b.api.startQualityPrediction(modelId));
    const plain = await b.api.exportPlan(modelId);
    expect(plain.options.map((o) => o.predicted)).toEqual(prediction.types.map((t) => t.predicted));

    const custom = await b.api.exportPlan(modelId, { recipe });
    const cli = await cliPlan(resolveOverrides(recipe));
    expect(custom.options.map((o) => [o.fileType, o.predicted])).toEqual(cli.map((r) => [r.type, r.predicted]));
    // The overrides changed the figures of the types they touch.
    const q4 = (rows: { predicted: unknown }[]) =>
      rows[plain.options.findIndex((o) => o.fileType === 'Q4_K_M')]!.predicted;
    expect(q4(custom.options)).not.toEqual(q4(plain.options));
  }, 120_000);
});

describe('importance matrix on the Export screen', () => {
  it('marks the types that need one while none is chosen, and offers them with one', async () => {
    const dir = tempDir();
    // Rows of 256: the 2-bit lattice types' blocks fit (stories260K's 64-wide rows fall back).
    const model = join(dir, 'wide.gguf');
    await writeRandomModel(model, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2 });
    const imatrix = join(dir, 'wide.imatrix.gguf');
    await writeUniformImatrix(model, imatrix);

    const b = testBackend();
    const modelId = addModel(b, model);
    const option = async (fileType: string, options = {}) =>
      (await b.api.exportPlan(modelId, options)).options.find((o) => o.fileType === fileType)!;
    const without = await option('IQ2_XXS');
    expect(without.needsImatrix).toBe(true);
    expect(without.unavailable).toContain('needs an importance matrix');
    expect((await option('Q4_K_M')).needsImatrix).toBe(false);
    expect(await option('IQ2_XXS', { imatrix })).toMatchObject({ needsImatrix: false, unavailable: null });
  });

  it(
    'computes one from the built-in text, reuses it, and the prediction and the export use it as gufo quantize --imatrix does',
    async () => {
      const b = testBackend();
      const modelId = addModel(b, STORIES_260K);
      const made = await finished<ImatrixView>(b, b.api.startImatrix(modelId, { kind: 'builtin' }));
      const sha256 = b.context.models.get(modelId)!.sha256!;
      expect(made).toMatchObject({ modelId, label: 'built-in text v1', entries: 5 * 7, cached: false });
      expect(made.chunks).toBeGreaterThanOrEqual(2);
      expect(made.path.startsWith(join(b.context.dataDir, 'imatrix', `${sha256}-`))).toBe(true);
      expect(loadImatrix(made.path).size).toBe(5 * 7);

      // The same model bytes and text: the stored file answers.
      const again = await finished<ImatrixView>(b, b.api.startImatrix(modelId, { kind: 'builtin' }));
      expect(again).toEqual({ ...made, cached: true });
      expect(readdirSync(join(b.context.dataDir, 'imatrix'))).toHaveLength(1);

      // Predictions with it: `gufo quantize --plan --imatrix`'s, cached apart from those without.
      const imatrix = made.path;
      const withIt = await finished<QualityPrediction>(b, b.api.startQualityPrediction(modelId, { imatrix }));
      const cli = await cliPlan({ imatrix: loadImatrix(imatrix) });
      expect(withIt.imatrix).toBe(imatrix);
      expect(withIt.types.map((t) => t.predicted)).toEqual(cli.map((r) => r.predicted));
      expect(await b.api.qualityPrediction(modelId)).toBeNull();
      expect((await b.api.exportPlan(modelId, { imatrix })).options.map((o) => o.predicted)).toEqual(
        cli.map((r) => r.predicted),
      );

      // The export: the bytes `gufo quantize --imatrix` writes.
      const record = await finished<ExportRecord>(b, b.api.startExport({ modelId, fileType: 'Q4_K_M', imatrix }));
      const reference = join(tempDir(), 'reference.gguf');
      await quantizeFile(STORIES_260K, reference, 'Q4_K_M', { imatrix: loadImatrix(imatrix) });
      expect(readFileSync(record.outputPath).equals(readFileSync(reference))).toBe(true);
      const { gguf, file } = openGguf(record.outputPath);
      expect(gguf.getNumber('quantize.imatrix.entries_count')).toBe(5 * 7);
      file.close();
    },
    GPU_TIMEOUT,
  );

  it(
    'computes one from a text file or the chats, uses a matrix file as it is, and names what is wrong with a bad source',
    async () => {
      const b = testBackend();
      const modelId = addModel(b, STORIES_260K);
      const dir = tempDir();
      const text = join(dir, 'calibration.txt');
      writeFileSync(
        text,
        'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. '.repeat(8),
      );
      const fromText = await finished<ImatrixView>(b, b.api.startImatrix(modelId, { kind: 'file', path: text }));
      expect(fromText).toMatchObject({ label: text, entries: 35, cached: false });

      const copy = join(dir, 'mine.imatrix.gguf');
      copyFileSync(fromText.path, copy);
      expect(await finished<ImatrixView>(b, b.api.startImatrix(modelId, { kind: 'file', path: copy }))).toEqual({
        modelId,
        path: copy,
        label: copy,
        entries: 35,
        chunks: null,
        chunkSize: null,
        cached: false,
      });

      const short = join(dir, 'short.txt');
      writeFileSync(short, 'Lily.');
      await expect(b.api.startImatrix(modelId, { kind: 'file', path: short })).rejects.toThrow(
        `${short}: tokenizes to`,
      );
      await expect(b.api.startImatrix(modelId, { kind: 'file', path: join(dir, 'none.txt') })).rejects.toThrow(
        `${join(dir, 'none.txt')}: cannot read the file (no such file)`,
      );
      await expect(b.api.startImatrix(modelId, { kind: 'chats' })).rejects.toThrow('there are no chats to replay yet');
      // A chat's active branch, as the quality reports replay it.
      const { chat } = await b.api.createChat({ modelId });
      const chats = new ChatStore(b.context.db);
      const ask = chats.addMessage({
        chatId: chat.id,
        parentId: null,
        role: 'user',
        content: 'Tell me a story about Lily and her ball.',
        status: 'done',
      });
      const story =
        'Lily found a red ball in the park. She played with her friend Tom all day, and they laughed. '.repeat(6);
      chats.setActiveLeaf(
        chat.id,
        chats.addMessage({ chatId: chat.id, parentId: ask.id, role: 'assistant', content: story, status: 'done' }).id,
      );
      expect(await finished<ImatrixView>(b, b.api.startImatrix(modelId, { kind: 'chats' }))).toMatchObject({
        label: '1 recent chat',
        entries: 35,
        cached: false,
      });
      // A model file is no importance matrix: the job fails naming it.
      const wrong = await b.context.jobs.wait(await b.api.startImatrix(modelId, { kind: 'file', path: STORIES_260K }));
      expect(wrong.status).toBe('failed');
      expect(wrong.error).toContain(STORIES_260K);
      await expect(b.api.exportPlan(modelId, { imatrix: join(dir, 'gone.gguf') })).rejects.toThrow(
        `imatrix: ${join(dir, 'gone.gguf')}: no such importance matrix file`,
      );
    },
    GPU_TIMEOUT,
  );

  it('cancels a computation before anything is written', async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    const jobId = await b.api.startImatrix(modelId, { kind: 'builtin' });
    await b.api.cancelJob(jobId);
    expect((await b.context.jobs.wait(jobId)).status).toBe('cancelled');
    expect(existsSync(join(b.context.dataDir, 'imatrix'))).toBe(false);
  });
});
