/**
 * Quality reports in the app: after an export, and on demand for past exports or any two models,
 * on the built-in text or the user's chats; run on the GPU (SwiftShader) by the engine pool and
 * stored in SQLite.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportRecord, QualityReport } from '../../src-preload/api';
import { planTextWindows } from '../../src-main/backend/quality/divergence';
import { BUILTIN_TEXT } from '../../src-main/core/quality/builtin-text';
import { openGguf } from '../../src-main/node/gguf-io';
import { readModelFile } from '../../src-main/node/model-file';
import { quantizeFile } from '../../src-main/node/quantize';
import { ChatStore } from '../../src-main/node/store/chats';
import { testBackend, type TestBackend } from '../support/backend';
import { atProgress } from '../support/job-gate';
import { REPO_ROOT, STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';

const { version } = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { version: string };
const GPU_TIMEOUT = 600_000;

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function addModel(b: TestBackend, path: string): number {
  return b.context.models.upsert(readModelFile(path, 'added')).id;
}

/** The positions a window plan of `text` scores on stories260K, and its tokens: laid out by the planner the CLI uses too. */
function storiesPlan(text: string) {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    return planTextWindows(gguf, { text, label: 'test' }, 512);
  } finally {
    file.close();
  }
}

/** A chat about `modelId` whose active branch holds `contents` (user, assistant, …). */
async function chat(b: TestBackend, modelId: number, contents: string[]): Promise<void> {
  const { chat: summary } = await b.api.createChat({ modelId });
  const store = new ChatStore(b.context.db);
  let parentId: number | null = null;
  for (const [i, content] of contents.entries()) {
    parentId = store.addMessage({
      chatId: summary.id,
      parentId,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content,
      status: 'done',
    }).id;
  }
  store.setActiveLeaf(summary.id, parentId);
  store.touch(summary.id);
}

describe('quality reports', () => {
  it(
    "follow an export on the built-in text: KL of the Q8_0 export < 1e-3, stored with both files' hashes",
    { timeout: GPU_TIMEOUT },
    async () => {
      const b = testBackend();
      const sourceId = addModel(b, STORIES_260K);
      const exportJob = await b.context.jobs.wait(
        await b.api.startExport({ modelId: sourceId, fileType: 'Q8_0', qualityReport: 'builtin' }),
      );
      const exported = exportJob.result as ExportRecord;
      const [quality] = b.context.jobs.list().filter((j) => j.kind === 'quality');
      const name = (id: number) => b.context.models.get(id)!.name;
      expect(quality).toMatchObject({
        status: 'running',
        unit: 'steps',
        modelId: exported.outputModelId,
        title: `Quality report: ${name(exported.outputModelId!)} against ${name(sourceId)}`,
      });
      const job = await b.context.jobs.wait(quality!.id);
      expect(job, job.error ?? '').toMatchObject({ status: 'done', done: 3, total: 3 });
      const report = job.result as QualityReport;
      console.log(`stories260K vs its Q8_0 export on the built-in text: ${JSON.stringify(report)}`);

      const plan = storiesPlan(BUILTIN_TEXT);
      expect(report).toMatchObject({
        exportId: exported.id,
        baseModelId: sourceId,
        basePath: STORIES_260K,
        baseSha256: sha256(STORIES_260K),
        quantModelId: exported.outputModelId,
        quantPath: exported.outputPath,
        quantSha256: sha256(exported.outputPath),
        textSource: 'builtin',
        textLabel: 'built-in text v1',
        ctx: 512,
        tokens: plan.tokens,
        positions: plan.scored,
        appVersion: version,
      });
      expect(plan.tokens).toBeGreaterThan(512); // one window of 512, its second half scored
      expect(report.meanKl).toBeGreaterThan(0);
      expect(report.meanKl).toBeLessThan(1e-3);
      expect(report.p99Kl).toBeGreaterThanOrEqual(report.meanKl);
      expect(report.maxKl).toBeGreaterThanOrEqual(report.p99Kl);
      expect(report.top1).toBeGreaterThanOrEqual(0.9);
      expect(Math.abs(report.pplQuant / report.pplBase - 1)).toBeLessThan(0.01);
      if (process.env.VK_ICD_FILENAMES?.includes('swiftshader')) expect(report.adapter).toMatch(/SwiftShader/);

      // Stored: listed for the export and for either model, and the hashes went to the library.
      expect(await b.api.listQualityReports()).toEqual([report]);
      expect(await b.api.listQualityReports({ exportId: exported.id })).toEqual([report]);
      expect(await b.api.listQualityReports({ modelId: sourceId })).toEqual([report]);
      expect(await b.api.listQualityReports({ modelId: sourceId + 100 })).toEqual([]);
      expect(b.context.models.get(sourceId)!.sha256).toBe(report.baseSha256);
    },
  );

  it('replay the recent chats as text, and cancel at once', { timeout: GPU_TIMEOUT }, async () => {
    // Every progress report as it is made: the cancel below lands on the base model's first window.
    const b = testBackend({ progressEveryMs: 0 });
    const dir = tempDir();
    const q4 = join(dir, 'stories-q4_0.gguf');
    await quantizeFile(STORIES_260K, q4, 'Q4_0');
    const baseModelId = addModel(b, STORIES_260K);
    const quantModelId = addModel(b, q4);
    await expect(b.api.startQualityReport({ baseModelId, quantModelId, text: 'chats' })).rejects.toThrow(
      'there are no chats to replay yet: chat with a model first, or use the built-in text',
    );
    await chat(b, baseModelId, ['Tell me a story.', 'Once upon a time, there was a little dog named Max.']);
    await chat(b, baseModelId, ['What happened next?', 'Max found a big red ball in the park and played all day.']);

    const jobId = await b.api.startQualityReport({ baseModelId, quantModelId, text: 'chats' });
    const job = await b.context.jobs.wait(jobId);
    expect(job, job.error ?? '').toMatchObject({ kind: 'quality', status: 'done' });
    const report = job.result as QualityReport;
    // The newest chat first, each chat's messages in order.
    const replayed = [
      'What happened next?',
      'Max found a big red ball in the park and played all day.',
      'Tell me a story.',
      'Once upon a time, there was a little dog named Max.',
    ].join('\n\n');
    const plan = storiesPlan(replayed);
    expect(report).toMatchObject({
      exportId: null,
      textSource: 'chats',
      textLabel: '2 recent chats',
      tokens: plan.tokens,
      positions: plan.scored,
      ctx: plan.ctx,
    });
    expect(plan.windows).toHaveLength(1); // short enough to be scored whole
    // Q4_0 costs more than Q8_0 does.
    expect(report.meanKl).toBeGreaterThan(1e-3);
    expect(report.top1).toBeGreaterThan(0.5);

    // Cancelled while the base model is evaluated: the job ends at once and nothing is stored.
    const held = atProgress(
      b,
      'quality',
      (j) => (j.detail ?? '').includes('window'),
      (j) => void b.api.cancelJob(j.id),
    );
    const cancelId = await b.api.startQualityReport({ baseModelId, quantModelId });
    expect(await held).toMatchObject({
      id: cancelId,
      detail: expect.stringContaining('(base): window 1 of') as string,
    });
    // At once: before the engine has finished the window it was sent (a call queued behind it waits for that).
    const order: string[] = [];
    const ended = b.context.jobs.wait(cancelId).then((job) => (order.push('job ended'), job));
    const engineFree = b.context.engines.withModel(
      { path: STORIES_260K, ctx: 1 },
      () => void order.push('engine free'),
    );
    expect(await ended).toMatchObject({ status: 'cancelled', error: null, result: null });
    await engineFree;
    expect(order).toEqual(['job ended', 'engine free']);
    expect((await b.api.listQualityReports()).map((r) => r.id)).toEqual([report.id]);
  });

  it('refuse what cannot be compared, saying why', async () => {
    const b = testBackend();
    const stories = addModel(b, STORIES_260K);
    const tiny = addModel(b, TINY_RANDOM_LLAMA);
    await expect(b.api.startQualityReport({ exportId: 7 })).rejects.toThrow('no export with id 7');
    await expect(b.api.startQualityReport({ baseModelId: stories, quantModelId: stories })).rejects.toThrow(
      `a quality report compares two models; both ids are ${stories}`,
    );
    await expect(b.api.startQualityReport({ baseModelId: stories, quantModelId: 999 })).rejects.toThrow(
      'no model with id 999 in the library',
    );
    await expect(b.api.startQualityReport({ baseModelId: stories, quantModelId: tiny })).rejects.toThrow(
      `${TINY_RANDOM_LLAMA}: its vocabulary has 32000 tokens, not 512 (the base ${STORIES_260K} differs); KL divergence needs the same vocabulary`,
    );
    await expect(
      b.api.startQualityReport({ baseModelId: stories, quantModelId: tiny, text: 'web' as never }),
    ).rejects.toThrow('unknown text "web": a quality report scores builtin or chats');
    await expect(
      b.api.startExport({ modelId: stories, fileType: 'Q8_0', qualityReport: 'web' as never }),
    ).rejects.toThrow('unknown quality report text "web"');
    // Nothing was started.
    expect(b.context.jobs.list()).toEqual([]);

    // An export that failed has no file to compare.
    const failed = b.context.db
      .prepare(
        "INSERT INTO exports (source_model_id, source_name, source_path, output_path, file_type, status) VALUES (?, 's', ?, '/gone.gguf', 'Q8_0', 'failed') RETURNING id",
      )
      .pluck()
      .get(stories, STORIES_260K) as number;
    await expect(b.api.startQualityReport({ exportId: failed })).rejects.toThrow(
      `export ${failed} (/gone.gguf) is failed: only a finished export has a file to compare`,
    );
  });
});
