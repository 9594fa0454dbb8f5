import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnginePool } from '../../src-main/backend/engine-pool';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

async function randomModel(): Promise<string> {
  const path = join(tempDir(), 'random.gguf');
  await writeRandomModel(path, { nLayer: 1, nEmbd: 32, nFf: 64, nHead: 2 });
  return path;
}

describe('EnginePool (real engine processes on the GPU)', () => {
  it('runs calls for one model one at a time, in order, on one loaded engine', async () => {
    const pool = new EnginePool();
    try {
      const spans: [number, number][] = [];
      let loads = 0;
      const kernels: [number, number][] = [];
      const call = (i: number) =>
        pool.withModel(
          {
            path: STORIES_260K,
            ctx: 64,
            onProgress: (done, total) => done === total && loads++,
            onKernels: (done, total) => kernels.push([done, total]),
          },
          async ({ host, info }) => {
            const start = performance.now();
            expect(info.model?.path).toBe(STORIES_260K);
            await host.generate({ prompt: [1, 400 + i], maxTokens: 2 });
            spans.push([start, performance.now()]);
            return i;
          },
        );
      expect(await Promise.all([call(0), call(1), call(2)])).toEqual([0, 1, 2]);
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
      expect(loads).toBe(1);
      // After the weights, the one load ran each kernel once (engine/gpu/kernel-warm-up.ts), counted 1 of M … M of M.
      const total = kernels[0]![1];
      expect(total).toBeGreaterThan(5);
      expect(kernels).toEqual(Array.from({ length: total }, (_, i) => [i + 1, total]));
    } finally {
      await pool.close();
    }
  });

  it('with one engine, switches models in the same process; a bigger context reloads', async () => {
    const other = await randomModel();
    const pool = new EnginePool({ cap: 1 });
    try {
      const first = await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host, info }) => ({
        pid: host.pid,
        ctx: info.model!.ctx,
      }));
      const second = await pool.withModel({ path: other, ctx: 32 }, ({ host, info }) => ({
        pid: host.pid,
        path: info.model!.path,
      }));
      expect(second).toEqual({ pid: first.pid, path: other });
      const bigger = await pool.withModel({ path: other, ctx: 96 }, ({ info }) => info.model!.ctx);
      expect(bigger).toBe(96);
      // A smaller request is served by the loaded, bigger context.
      expect(await pool.withModel({ path: other, ctx: 16 }, ({ info }) => info.model!.ctx)).toBe(96);
    } finally {
      await pool.close();
    }
  });

  it('with two engines, keeps both models loaded in separate processes', async () => {
    const other = await randomModel();
    const pool = new EnginePool({ cap: 2 });
    try {
      const a = await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host }) => host.pid);
      const b = await pool.withModel({ path: other, ctx: 32 }, ({ host }) => host.pid);
      expect(a).not.toBe(b);
      expect(await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host }) => host.pid)).toBe(a);
    } finally {
      await pool.close();
    }
  });

  it('sends calls made while a model is still loading to the engine loading it', async () => {
    const pool = new EnginePool({ cap: 2 });
    try {
      const pids = await Promise.all(
        [0, 1, 2].map(() => pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host }) => host.pid)),
      );
      expect(new Set(pids).size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('loads again after the engine process dies', async () => {
    const pool = new EnginePool();
    try {
      const pid = await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host }) => host.pid!);
      const exited = pool.withModel(
        { path: STORIES_260K, ctx: 32 },
        ({ host }) => new Promise<void>((resolve) => host.onCrash(() => resolve())),
      );
      process.kill(pid, 'SIGKILL');
      await exited;
      const result = await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host, info }) => ({
        pid: host.pid,
        path: info.model?.path,
      }));
      expect(result.pid).not.toBe(pid);
      expect(result.path).toBe(STORIES_260K);
    } finally {
      await pool.close();
    }
  });
  it('lists a loaded model with its GPU memory, frees it after the work queued on it, and loads it again for the next call', async () => {
    const pool = new EnginePool();
    try {
      const changes: string[][] = [];
      pool.onChange(() => changes.push(pool.loaded().map((m) => m.path)));
      const host = await pool.withModel({ path: STORIES_260K, ctx: 32 }, ({ host }) => host);
      const [loaded] = pool.loaded();
      expect(loaded).toMatchObject({ path: STORIES_260K, ctx: 32 });
      expect(loaded!.memory.residentWeightBytes).toBeGreaterThan(0);
      expect(loaded!.memory.kvBytes).toBeGreaterThan(0);
      expect(loaded!.memory).toEqual((await host.info()).memory);

      // An unload asked while a call runs frees the model once that call ends.
      const order: string[] = [];
      const running = pool.withModel({ path: STORIES_260K, ctx: 32 }, async ({ host }) => {
        await host.generate({ prompt: [1, 400], maxTokens: 2 });
        order.push('generated');
      });
      await pool.unload(STORIES_260K).then(() => order.push('unloaded'));
      await running;
      expect(order).toEqual(['generated', 'unloaded']);
      expect(pool.loaded()).toEqual([]);
      expect((await host.info()).model).toBeNull();
      await pool.unload(STORIES_260K); // nothing loaded: no-op

      let started = 0;
      let uploaded = 0;
      const spec = {
        path: STORIES_260K,
        ctx: 32,
        onLoadStart: () => started++,
        onProgress: (done: number, total: number) => (uploaded = done / total),
      };
      expect(await pool.withModel(spec, ({ info }) => info.model?.path)).toBe(STORIES_260K);
      expect([started, uploaded]).toEqual([1, 1]);
      expect(changes).toEqual([[STORIES_260K], [], [STORIES_260K]]);
    } finally {
      await pool.close();
    }
  });
});
