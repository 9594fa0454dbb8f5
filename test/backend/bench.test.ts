import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { BenchRun, JobState } from '../../src-preload/api';
import { readModelFile } from '../../src-main/node/model-file';
import { testBackend, type TestBackend } from '../support/backend';
import { atProgress } from '../support/job-gate';
import { REPO_ROOT, STORIES_260K } from '../support/paths';

const { version } = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { version: string };
const SMALL = { promptTokens: 32, genTokens: 16 };

function jobEvents(b: TestBackend, id: string): JobState[] {
  return b.seen.flatMap((e) => (e.type === 'job' && e.job.id === id ? [e.job] : []));
}

describe('benchmarks', () => {
  it(
    'runs on the GPU, stores every field, lists newest first, cancels without recording',
    { timeout: 240_000 },
    async () => {
      // Every progress report as it is made: the cancel below lands on the measurement's first one.
      const b = testBackend({ progressEveryMs: 0 });
      const modelId = b.context.models.upsert(readModelFile(STORIES_260K, 'added')).id;
      expect(b.context.models.get(modelId)!.sha256).toBeNull();

      const jobId = await b.api.startBenchmark({ modelId, ...SMALL });
      const job = await b.context.jobs.wait(jobId);
      expect(job, job.error ?? '').toMatchObject({
        kind: 'bench',
        status: 'done',
        unit: 'steps',
        modelId,
        done: 3,
        total: 3,
      });
      const run = job.result as BenchRun;
      const sha256 = createHash('sha256').update(readFileSync(STORIES_260K)).digest('hex');
      expect(run).toMatchObject({
        modelId,
        modelName: b.context.models.get(modelId)!.name,
        modelPath: STORIES_260K,
        fileSha256: sha256,
        promptTokens: 32,
        genTokens: 16,
        appVersion: version,
      });
      if (process.env.VK_ICD_FILENAMES?.includes('swiftshader')) expect(run.adapter).toMatch(/SwiftShader/);
      expect(run.adapter).not.toBe('');
      expect(run.backend).toMatch(/^(vulkan|metal|d3d12)$/);
      for (const key of ['prefillTokS', 'decodeTokS', 'ttftMs', 'loadMs'] as const) {
        expect(Number.isFinite(run[key]) && run[key] > 0, `${key} = ${run[key]}`).toBe(true);
      }
      // TTFT is the bench's own time to its first token: the prompt's tokens at its prefill rate.
      expect(run.ttftMs).toBeCloseTo((run.promptTokens * 1000) / run.prefillTokS, 6);
      expect(run.rooflineFraction).toBeGreaterThan(0);
      expect(run.rooflineFraction).toBeLessThan(1);
      expect(Date.parse(run.createdAt)).toBeGreaterThan(Date.now() - 300_000);
      // The hash the benchmark computed is the library's too.
      expect(b.context.models.get(modelId)!.sha256).toBe(sha256);

      // Progress went load → prefill + decode → done.
      const details = jobEvents(b, jobId).map((j) => j.detail);
      expect(details.slice(0, 2)).toEqual([null, `Loading ${run.modelName}`]);
      expect(details).toContainEqual(expect.stringMatching(/^Prefill 32 tokens, then decode 16 tokens: \d+ s$/));

      // Cancelled during the measurement (as it starts, however fast it is): the job ends at once and no run is recorded.
      const held = atProgress(
        b,
        'bench',
        (j) => j.done === 1,
        (j) => void b.api.cancelJob(j.id),
      );
      const cancelId = await b.api.startBenchmark({ modelId, ...SMALL });
      expect(await held).toMatchObject({ id: cancelId, done: 1 });
      expect(await b.context.jobs.wait(cancelId)).toMatchObject({ status: 'cancelled', error: null, result: null });

      // A second run reuses the loaded model: the engine's load time of it is the one recorded.
      const second = (await b.context.jobs.wait(await b.api.startBenchmark({ modelId, ...SMALL }))).result as BenchRun;
      expect(second.loadMs).toBe(run.loadMs);
      const listed = await b.api.listBenchmarks();
      expect(listed.map((r) => r.id)).toEqual([second.id, run.id]);
      expect(listed[1]).toEqual(run);
      expect((await b.api.listBenchmarks(modelId)).map((r) => r.id)).toEqual([second.id, run.id]);
      expect(await b.api.listBenchmarks(modelId + 1)).toEqual([]);

      await b.api.deleteBenchmark(run.id);
      expect((await b.api.listBenchmarks()).map((r) => r.id)).toEqual([second.id]);
      await expect(b.api.deleteBenchmark(run.id)).rejects.toThrow(`no benchmark run with id ${run.id}`);
    },
  );

  it('refuses bad requests before starting anything', async () => {
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(STORIES_260K, 'added')).id;
    await expect(b.api.startBenchmark({ modelId, promptTokens: 0 })).rejects.toThrow(
      'promptTokens must be a whole number from 1 to 65536, got 0',
    );
    await expect(b.api.startBenchmark({ modelId, genTokens: 1.5 })).rejects.toThrow(/genTokens must be a whole number/);
    await expect(b.api.startBenchmark({ modelId: 999 })).rejects.toThrow(/no model with id 999/);
    expect(await b.api.listJobs()).toEqual([]);
  });
});
