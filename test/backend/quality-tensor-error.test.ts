/**
 * The inspector's per-tensor error of an export against its source, as a background job: checked
 * against the RMSE the quantizer itself measured for each tensor it wrote.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportRecord, JobState, TensorErrorComparison } from '../../src-preload/api';
import { readModelFile } from '../../src-main/node/model-file';
import { quantizeFile } from '../../src-main/node/quantize';
import { testBackend, type TestBackend } from '../support/backend';
import { cancelMidJob } from '../support/job-gate';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

function jobEvents(b: TestBackend, id: string): JobState[] {
  return b.seen.flatMap((e) => (e.type === 'job' && e.job.id === id ? [e.job] : []));
}

describe('tensor error of an export', () => {
  it("compares an export with its source by default: per tensor the quantizer's RMSE, pooled by layer and role", async () => {
    const b = testBackend();
    const sourceId = addModel(b, STORIES_260K);
    const exported = (await b.context.jobs.wait(await b.api.startExport({ modelId: sourceId, fileType: 'Q4_0' })))
      .result as ExportRecord;
    // The quantizer's own measurement of the same file, written again.
    const quantized = await quantizeFile(STORIES_260K, join(tempDir(), 'again.gguf'), 'Q4_0');

    const jobId = await b.api.startTensorError(exported.outputModelId!);
    const job = await b.context.jobs.wait(jobId);
    expect(job, job.error ?? '').toMatchObject({
      kind: 'tensor-error',
      status: 'done',
      unit: 'tensors',
      modelId: exported.outputModelId,
      done: 48,
      total: 48,
    });
    const r = job.result as TensorErrorComparison;
    expect(r).toMatchObject({
      modelId: exported.outputModelId,
      sourceModelId: sourceId,
      sourceName: b.context.models.get(sourceId)!.name,
    });
    expect(r.tensors.map((t) => t.name).sort()).toEqual(quantized.tensors.map((t) => t.name).sort());
    for (const t of r.tensors) {
      const q = quantized.tensors.find((x) => x.name === t.name)!;
      expect([t.sourceType, t.exportType], t.name).toEqual([q.from, q.to]);
      expect(t.rmse, t.name).toBeCloseTo(q.rmse!, 12);
      if (q.from === q.to) expect(t).toMatchObject({ rmse: 0, relativeError: 0, snrDb: null });
      else expect(t.snrDb!, t.name).toBeGreaterThan(10);
    }
    expect(r.tensors.find((t) => t.name === 'blk.3.ffn_up.weight')).toMatchObject({ layer: 3, role: 'ffn_up' });
    expect(r.byLayer.map((g) => g.layer)).toEqual([0, 1, 2, 3, 4, null]);
    expect(r.byRole.map((g) => g.role)).toEqual(
      expect.arrayContaining(['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down']),
    );
    // Pooled figures weigh each tensor by its elements.
    const layer0 = r.tensors.filter((t) => t.layer === 0);
    const noise = layer0.reduce((sum, t) => sum + t.rmse ** 2 * t.elements, 0);
    const elements = layer0.reduce((sum, t) => sum + t.elements, 0);
    expect(r.byLayer[0]).toMatchObject({ layer: 0, elements });
    expect(r.byLayer[0]!.rmse).toBeCloseTo(Math.sqrt(noise / elements), 12);
    expect(r.total.elements).toBe(292_800);
    // Progress goes tensor by tensor, naming each (the first at once; later ones throttled).
    expect(jobEvents(b, jobId).find((j) => j.detail !== null)).toMatchObject({
      status: 'running',
      done: 0,
      total: 48,
      detail: r.tensors[0]!.name,
    });

    // Against a model named explicitly: the export itself, as source of the source.
    const back = (await b.context.jobs.wait(await b.api.startTensorError(sourceId, exported.outputModelId!)))
      .result as TensorErrorComparison;
    expect(back.sourceModelId).toBe(exported.outputModelId);
    expect(back.total.rmse).toBeCloseTo(r.total.rmse, 12);
  });

  it('cancels between chunks, and says why models cannot be compared', async () => {
    const dir = tempDir();
    const big = join(dir, 'big.gguf');
    await writeRandomModel(big, { nLayer: 1, nEmbd: 256, nFf: 512, nHead: 4 });
    const bigQ8 = join(dir, 'big-q8.gguf');
    await quantizeFile(big, bigQ8, 'Q8_0');
    const b = testBackend({ progressEveryMs: 0 });
    const [source, quant, stories, tiny] = [big, bigQ8, STORIES_260K, TINY_RANDOM_LLAMA].map((p) => addModel(b, p));

    // Cancelled while held at the boundary after its first tensor: the rest is never compared.
    const held = cancelMidJob(b, 'tensor-error');
    const jobId = await b.api.startTensorError(quant!, source);
    expect(await held).toMatchObject({ id: jobId, done: 1 });
    const cancelled = await b.context.jobs.wait(jobId);
    expect(cancelled).toMatchObject({ status: 'cancelled', result: null, done: 1 });
    expect(cancelled.total).toBeGreaterThan(1);
    expect(jobEvents(b, jobId).some((j) => j.result !== null)).toBe(false);

    await expect(b.api.startTensorError(stories!)).rejects.toThrow(
      /was made from \(the app.s exports and gufo quantize.s with GUFO_HOME are recorded\), or its source left the library: choose the model to compare it with$/,
    );
    await expect(b.api.startTensorError(stories!, stories)).rejects.toThrow('not with itself');
    await expect(b.api.startTensorError(stories!, 999)).rejects.toThrow('no model with id 999 in the library');
    const mismatch = await b.context.jobs.wait(await b.api.startTensorError(tiny!, stories));
    expect(mismatch).toMatchObject({ status: 'failed' });
    expect(mismatch.error).toMatch(
      new RegExp(
        `^${TINY_RANDOM_LLAMA}: tensor "token_embd.weight" has shape \\[\\d+, 32000\\], in ${STORIES_260K} it has \\[64, 512\\]$`,
      ),
    );
  });
});
