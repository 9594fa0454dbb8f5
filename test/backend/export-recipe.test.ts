/**
 * Exports with a custom recipe through the real back end: the plan predicts the size with the
 * overrides, the export writes them and records the recipe, the inspector of the result shows
 * it, and bad patterns or types are refused with an error naming them.
 */
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ExportRecord } from '../../src-preload/api';
import { RECIPE_KEY } from '../../src-main/core/recipe-overrides';
import { openGguf } from '../../src-main/node/gguf-io';
import { readModelFile } from '../../src-main/node/model-file';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';

const recipe = {
  tensorTypes: [
    { pattern: 'blk\\.[0-2]\\.attn_v', type: 'f16' },
    { pattern: 'ffn_up', type: 'Q4_0' },
  ],
};

describe('export with a custom recipe', () => {
  it('predicts the size with the overrides, writes them, and the inspector shows the recipe', async () => {
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(STORIES_260K, 'added')).id;
    const plain = (await b.api.exportPlan(modelId)).options.find((o) => o.fileType === 'Q8_0')!;
    const custom = (await b.api.exportPlan(modelId, { recipe })).options.find((o) => o.fileType === 'Q8_0')!;
    // attn_v of 3 layers to F16 outweighs ffn_up to Q4_0 on this model: the size changes either way.
    expect(custom.predictedBytes).not.toBe(plain.predictedBytes);
    // Named after its recipe, not taken for the mixture's file.
    expect(plain.defaultOutputPath).toMatch(/stories260K-Q8_0\.gguf$/);
    expect(custom.defaultOutputPath).toMatch(/stories260K-Q8_0-custom-F16-Q4_0\.gguf$/);

    const job = await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'Q8_0', recipe }));
    expect(job.status, job.error ?? '').toBe('done');
    const record = job.result as ExportRecord;
    expect(record.outputPath).toBe(custom.defaultOutputPath);
    expect(statSync(record.outputPath).size).toBe(custom.predictedBytes);
    const { gguf, file } = openGguf(record.outputPath);
    try {
      expect(gguf.tensor('blk.2.attn_v.weight')!.type.name).toBe('F16');
      expect(gguf.tensor('blk.3.attn_v.weight')!.type.name).toBe('Q8_0');
      expect(gguf.tensor('blk.0.ffn_up.weight')!.type.name).toBe('Q4_0');
      expect(JSON.parse(gguf.getString(RECIPE_KEY)!)).toEqual({
        fileType: 'Q8_0',
        tensorTypes: [
          { pattern: 'blk\\.[0-2]\\.attn_v', type: 'F16' },
          { pattern: 'ffn_up', type: 'Q4_0' },
        ],
      });
    } finally {
      file.close();
    }
    const overview = await b.api.modelOverview(record.outputModelId!);
    expect(overview.recipe).toBe('Q8_0; blk\\.[0-2]\\.attn_v=F16, ffn_up=Q4_0');
    expect((await b.api.modelOverview(modelId)).recipe).toBeNull();
  });

  it('refuses bad patterns and types, naming them', async () => {
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(STORIES_260K, 'added')).id;
    await expect(
      b.api.exportPlan(modelId, { recipe: { tensorTypes: [{ pattern: 'blk.(', type: 'q8_0' }] } }),
    ).rejects.toThrow(/^recipe: tensor type pattern "blk\.\(" is not a valid regular expression/);
    await expect(
      b.api.startExport({ modelId, fileType: 'Q8_0', recipe: { tensorTypes: [{ pattern: 'attn_v', type: 'Q7_X' }] } }),
    ).rejects.toThrow('recipe: tensor type pattern "attn_v": unknown ggml type "Q7_X"');
    await expect(
      b.api.startExport({ modelId, fileType: 'Q8_0', recipe: { outputTensorType: 'nope' } }),
    ).rejects.toThrow('recipe: output tensor type: unknown ggml type "nope"');
    expect(await b.api.listExports()).toEqual([]);
  });
});
