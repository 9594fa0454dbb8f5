import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ExportRecord, JobState } from '../../src-preload/api';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import { QUANT_FILE_TYPES } from '../../src-main/core/quant-recipes';
import { openGguf } from '../../src-main/node/gguf-io';
import { readModelFile } from '../../src-main/node/model-file';
import { quantizeFile } from '../../src-main/node/quantize';
import { ExportStore } from '../../src-main/node/store/exports';
import { testBackend, type TestBackend } from '../support/backend';
import { atProgress, cancelMidJob } from '../support/job-gate';
import { llamaModelQuantize } from '../support/llama-quantize';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

/** A model in the library, as the library feature adds one. */
function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every tensor's name, type and bytes. */
function tensorsOf(path: string): [string, string, string][] {
  const { gguf, file } = openGguf(path);
  try {
    return gguf.tensors.map((t) => [
      t.name,
      t.type.name,
      createHash('sha256').update(gguf.tensorData(t)).digest('hex'),
    ]);
  } finally {
    file.close();
  }
}

function jobEvents(b: TestBackend, id: string): JobState[] {
  return b.seen.flatMap((e) => (e.type === 'job' && e.job.id === id ? [e.job] : []));
}

describe('export', () => {
  it('plans every file type with its exact size; Q8_0 joins the library with the tensors llama-quantize writes', async () => {
    const b = testBackend();
    const modelId = addModel(b, STORIES_260K);
    const plan = await b.api.exportPlan(modelId);
    expect(plan).toMatchObject({
      modelId,
      sourceBytes: statSync(STORIES_260K).size,
      defaultOutputDir: b.context.modelsDir,
    });
    expect(plan.options.map((o) => o.fileType)).toEqual([...QUANT_FILE_TYPES]);
    for (const o of plan.options) {
      expect(o.unavailable, o.fileType).toBeNull(); // an F32 source can take every type
      expect(o.requantizes).toBe(0);
      expect(o.defaultOutputPath).toBe(join(b.context.modelsDir, `stories260K-${o.fileType}.gguf`));
    }
    const q8 = plan.options.find((o) => o.fileType === 'Q8_0')!;
    const f16 = plan.options.find((o) => o.fileType === 'F16')!;
    expect(q8.bitsPerWeight).toBeGreaterThan(8);
    expect(q8.bitsPerWeight).toBeLessThan(f16.bitsPerWeight!);

    const jobId = await b.api.startExport({ modelId, fileType: 'Q8_0' });
    const job = await b.context.jobs.wait(jobId);
    expect(job, job.error ?? '').toMatchObject({ kind: 'export', status: 'done', unit: 'bytes', modelId });
    const record = job.result as ExportRecord;
    const out = join(b.context.modelsDir, 'stories260K-Q8_0.gguf');
    expect(record).toMatchObject({
      status: 'done',
      outputPath: out,
      fileType: 'Q8_0',
      sourceModelId: modelId,
      sourcePath: STORIES_260K,
      jobId,
      error: null,
    });
    expect(readdirSync(b.context.modelsDir)).toEqual(['stories260K-Q8_0.gguf']);
    expect(statSync(out).size).toBe(q8.predictedBytes);
    expect(record.bytesOut).toBe(q8.predictedBytes);
    expect(record.seconds).toBeGreaterThan(0);

    // Progress in bytes of the predicted size, ending at the whole file.
    const events = jobEvents(b, jobId);
    expect(events.at(-1)).toMatchObject({ status: 'done', done: q8.predictedBytes, total: q8.predictedBytes });

    // The same tensors as `gufo quantize` (quantizeFile) and llama.cpp's llama-quantize write.
    const dir = tempDir();
    await quantizeFile(STORIES_260K, join(dir, 'gufo.gguf'), 'Q8_0');
    expect(llamaModelQuantize(STORIES_260K, join(dir, 'llama.gguf'), llamaFileTypeId('Q8_0')!).ok).toBe(true);
    expect(tensorsOf(out)).toEqual(tensorsOf(join(dir, 'gufo.gguf')));
    expect(tensorsOf(out)).toEqual(tensorsOf(join(dir, 'llama.gguf')));

    // In the library, as an export, and the UI was told.
    const entry = b.context.models.get(record.outputModelId!)!;
    expect(entry).toMatchObject({
      path: out,
      source: 'exported',
      fileType: 'Q8_0',
      bytes: q8.predictedBytes,
      error: null,
    });
    expect(b.seen.some((e) => e.type === 'library-changed')).toBe(true);
    expect(await b.api.listExports()).toEqual([record]);

    // The same export again: a free name, never over the first.
    const again = await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'Q8_0' }));
    expect((again.result as ExportRecord).outputPath).toBe(join(b.context.modelsDir, 'stories260K-Q8_0-2.gguf'));
    expect(sha256(out)).toBe(sha256(join(b.context.modelsDir, 'stories260K-Q8_0-2.gguf')));
    expect((await b.api.exportPlan(modelId)).options.find((o) => o.fileType === 'Q8_0')!.defaultOutputPath).toBe(
      join(b.context.modelsDir, 'stories260K-Q8_0-3.gguf'),
    );
    expect((await b.api.listExports()).map((e) => e.id)).toEqual([(again.result as ExportRecord).id, record.id]);
  });

  it('cancel stops the write, leaves no file and records the export as cancelled', async () => {
    const dir = tempDir();
    const source = join(dir, 'big.gguf');
    await writeRandomModel(source, { nLayer: 1, nEmbd: 256, nFf: 512, nHead: 4 });
    const before = sha256(source);
    const b = testBackend({ progressEveryMs: 0 });
    const modelId = addModel(b, source);
    // Cancelled once the first tensor's bytes are written.
    const held = cancelMidJob(b, 'export');
    const jobId = await b.api.startExport({ modelId, fileType: 'Q4_K_M' });
    expect((await held).id).toBe(jobId);
    const job = await b.context.jobs.wait(jobId);
    expect(job).toMatchObject({ status: 'cancelled', error: null });
    expect(job.done).toBeLessThan(job.total!);
    const [record] = await b.api.listExports();
    expect(record).toMatchObject({ status: 'cancelled', error: null, bytesOut: null, outputModelId: null });
    expect(record!.endedAt).not.toBeNull();
    // No output and no temporary file; the source is as it was.
    expect(readdirSync(b.context.modelsDir)).toEqual([]);
    expect(sha256(source)).toBe(before);
    expect(b.context.models.list().map((m) => m.path)).toEqual([source]);
  });

  it('offers types that convert quantized tensors again only when allowed', async () => {
    const dir = tempDir();
    const q8 = join(dir, 'q8.gguf');
    await quantizeFile(STORIES_260K, q8, 'Q8_0');
    const b = testBackend();
    const modelId = addModel(b, q8);
    const strict = await b.api.exportPlan(modelId);
    const q4 = strict.options.find((o) => o.fileType === 'Q4_0')!;
    expect(q4.requantizes).toBeGreaterThan(0);
    expect(q4.unavailable).toBe(
      `re-quantizes ${q4.requantizes} already-quantized tensors (e.g. "token_embd.weight" Q8_0 → Q4_0), losing some quality; allow re-quantizing to choose it`,
    );
    expect(strict.options.find((o) => o.fileType === 'Q8_0')!.unavailable).toBeNull();
    await expect(b.api.startExport({ modelId, fileType: 'Q4_0' })).rejects.toThrow(
      `${q8}: cannot export to Q4_0: re-quantizes`,
    );
    expect(await b.api.listExports()).toEqual([]);

    const allowed = await b.api.exportPlan(modelId, { allowRequantize: true });
    expect(allowed.options.find((o) => o.fileType === 'Q4_0')!.unavailable).toBeNull();
    const job = await b.context.jobs.wait(
      await b.api.startExport({ modelId, fileType: 'Q4_0', allowRequantize: true }),
    );
    expect(job.status, job.error ?? '').toBe('done');
    expect(statSync((job.result as ExportRecord).outputPath).size).toBe(q4.predictedBytes);
  });

  it('writes where asked, never over an existing file, and into the export folder setting', async () => {
    const b = testBackend();
    const dir = tempDir();
    const source = join(dir, 'stories.gguf');
    copyFileSync(STORIES_260K, source);
    const modelId = addModel(b, source);
    await expect(b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: source })).rejects.toThrow(
      `${source} already exists`,
    );
    writeFileSync(join(dir, 'taken.gguf'), 'mine');
    await expect(b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: join(dir, 'taken.gguf') })).rejects.toThrow(
      /taken\.gguf already exists/,
    );
    expect(readFileSync(join(dir, 'taken.gguf'), 'utf8')).toBe('mine');
    await expect(b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: join(dir, 'out.bin') })).rejects.toThrow(
      /out\.bin: the output must be a \.gguf file/,
    );
    await expect(
      b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: join(dir, 'nope', 'x.gguf') }),
    ).rejects.toThrow(/nope: no such folder/);
    await expect(b.api.startExport({ modelId, fileType: 'Q9_9' })).rejects.toThrow(
      /unknown file type "Q9_9"; Gufo writes F16, BF16, Q8_0/,
    );
    await expect(b.api.startExport({ modelId: 999, fileType: 'Q8_0' })).rejects.toThrow(/no model with id 999/);

    const chosen = join(dir, 'chosen.gguf');
    const job = await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: chosen }));
    expect((job.result as ExportRecord).outputPath).toBe(chosen);
    expect(b.context.models.byPath(chosen)?.source).toBe('exported');

    const exportDir = join(dir, 'exports');
    mkdirSync(exportDir);
    await b.api.updateSettings({ exportDir });
    expect((await b.api.exportPlan(modelId)).defaultOutputDir).toBe(exportDir);
    const inFolder = await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'F16' }));
    expect((inFolder.result as ExportRecord).outputPath).toBe(join(exportDir, 'stories-F16.gguf'));
    expect(existsSync(join(exportDir, 'stories-F16.gguf'))).toBe(true);
  });

  it('never replaces a file that appears at the output path while the export runs', async () => {
    const dir = tempDir();
    const source = join(dir, 'big.gguf');
    await writeRandomModel(source, { nLayer: 1, nEmbd: 256, nFf: 512, nHead: 4 });
    const b = testBackend({ progressEveryMs: 0 });
    const modelId = addModel(b, source);
    const out = join(dir, 'out.gguf');
    // The user saves a file of their own there once the first tensor's bytes are written.
    const held = atProgress(
      b,
      'export',
      (job) => job.done > 0,
      () => writeFileSync(out, 'mine'),
    );
    const jobId = await b.api.startExport({ modelId, fileType: 'Q8_0', outputPath: out });
    expect((await held).id).toBe(jobId);
    const job = await b.context.jobs.wait(jobId);
    expect(job).toMatchObject({ status: 'failed', error: `${out} appeared while exporting; not overwritten` });
    expect(readFileSync(out, 'utf8')).toBe('mine');
    expect(readdirSync(dir).sort()).toEqual(['big.gguf', 'out.gguf']);
    const [record] = await b.api.listExports();
    expect(record).toMatchObject({ status: 'failed', error: job.error, outputModelId: null });
    expect(b.context.models.byPath(out)).toBeUndefined();
  });

  it('an export left running by a killed app is failed as interrupted at the next start', async () => {
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    const modelId = addModel(first, STORIES_260K);
    const outputPath = join(dataDir, 'x', 'stories-Q8_0.gguf');
    const row = new ExportStore(first.context.db).start({
      sourceModelId: modelId,
      sourceName: 'stories',
      sourcePath: STORIES_260K,
      outputPath,
      fileType: 'Q8_0',
    });
    await first.close();
    // What the killed writer left: its temporary file (named with its pid, gone now), beside an unrelated one that must stay.
    mkdirSync(join(dataDir, 'x'));
    const leftover = join(
      dataDir,
      'x',
      `.stories-Q8_0.gguf.${spawnSync(process.execPath, ['-e', '']).pid}.0123456789ab.tmp`,
    );
    const unrelated = join(dataDir, 'x', '.other.gguf.0123456789ab.tmp');
    writeFileSync(leftover, 'partial');
    writeFileSync(unrelated, 'partial');
    const second = testBackend({ dataDir });
    const [record] = await second.api.listExports();
    expect(record).toMatchObject({
      id: row.id,
      status: 'failed',
      error: expect.stringMatching(/^interrupted: .*\/x\/stories-Q8_0\.gguf was not written$/) as string,
    });
    await vi.waitFor(() => expect(existsSync(leftover)).toBe(false));
    expect(existsSync(unrelated)).toBe(true);
  });
});
