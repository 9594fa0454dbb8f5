/**
 * What `gufo bench` says about one decode step: dispatches, submissions and host time always;
 * with --profile, GPU time per kernel and the bytes weight kernels read (on SwiftShader here).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { openGguf } from '../../src-main/node/gguf-io';
import { gufo, type BenchJson } from '../support/cli';
import { STORIES_260K } from '../support/paths';

const engine = await Engine.open();
afterAll(() => engine.destroy());

/** Bytes of every matrix a decoded token multiplies by: all 2-D tensors, the embedding table only when it is also the output. */
function matrixBytes(path: string): number {
  const { gguf, file } = openGguf(path);
  try {
    const tied = !gguf.tensors.some((t) => t.name === 'output.weight');
    return gguf.tensors
      .filter((t) => t.ne.length >= 2 && (tied || t.name !== 'token_embd.weight'))
      .reduce((sum, t) => sum + t.bytes, 0);
  } finally {
    file.close();
  }
}

describe('Engine.bench', () => {
  it('counts the dispatches, submissions and host time of each decode step', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const r = await engine.bench(8, 8);
    // stories260K: 5 layers of normed QKV, attention (storing K and V), output, normed gate|up, down with
    // the GLU; then the output norm, the head and the sampler (fused-projections.test.ts has the exact count).
    expect(r.dispatchesPerToken).toBeGreaterThan(5 * 5);
    expect(Number.isInteger(r.dispatchesPerToken)).toBe(true);
    expect(r.submitsPerToken).toBe(1);
    expect(r.hostMsPerToken).toBeGreaterThan(0);
    expect(r.profile).toBeUndefined();
  });

  it('warms the prefill and decode kernels up before timing (lavapipe compiles a pipeline at its first dispatch)', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const generate = vi.spyOn(engine, 'generate');
    try {
      await engine.bench(8, 8);
      expect(generate).toHaveBeenCalledTimes(2);
      const [warmUpPrompt, warmUp] = generate.mock.calls[0]!;
      // Two prompt tokens run the prefill kernels, a second token the decode kernels.
      expect(warmUpPrompt.length).toBe(2);
      expect(warmUp.maxTokens).toBe(2);
      expect(generate.mock.calls[1]![1].maxTokens).toBe(8);
    } finally {
      generate.mockRestore();
    }
  });

  it('profile: GPU time of every kernel per token, and the weight kernels read every matrix once', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const before = await engine.generate([1, 403, 407], { maxTokens: 6, stop: [] });
    const r = await engine.bench(8, 8, { profile: true });
    const profile = r.profile!;
    expect(profile.tokens).toBe(4);
    // Two independent counts of the same step: the meter's and the profiler's.
    expect(profile.kernels.reduce((s, k) => s + k.dispatchesPerToken, 0)).toBe(r.dispatchesPerToken);
    for (const k of profile.kernels) expect(k.gpuMsPerToken, k.kernel).toBeGreaterThan(0);
    expect(profile.gpuMsPerToken).toBeCloseTo(
      profile.kernels.reduce((s, k) => s + k.gpuMsPerToken, 0),
      9,
    );

    const weightKernels = profile.kernels.filter((k) => k.bytesPerToken !== null && k.kernel.startsWith('matvec'));
    expect(weightKernels.reduce((s, k) => s + k.bytesPerToken!, 0)).toBe(matrixBytes(STORIES_260K));
    // Decode attention reads the K and V rows of every position the token sees: steps at
    // positions 8 to 11 see 9 to 12 keys, 10.5 on average (the cache holds 64 positions).
    const [attention, ...others] = profile.kernels.filter(
      (k) => k.bytesPerToken !== null && !k.kernel.startsWith('matvec'),
    );
    expect(others).toEqual([]);
    expect(attention!.kernel).toMatch(/^attention-decode\.wgsl:attend_split/);
    expect(attention!.bytesPerToken).toBeCloseTo((engine.info.memory!.kvBytes / 64) * 10.5, 6);
    for (const k of weightKernels) {
      expect(k.bytesPerSecond).toBeCloseTo(k.bytesPerToken! / (k.gpuMsPerToken / 1000), 0);
      expect(k.rooflineFraction).toBeCloseTo(k.bytesPerSecond! / r.copyBytesPerSecond, 9);
    }
    // Dawn's default rounds timestamps to 64 µs; the profile must see finer times than that.
    const ns = profile.kernels.map((k) => Math.round(k.gpuMsPerToken * profile.tokens * 1e6));
    expect(ns.some((t) => t % 65536 !== 0)).toBe(true);

    // The profiled steps overwrote the KV cache: the next generation must not trust it.
    const after = await engine.generate([1, 403, 407], { maxTokens: 6, stop: [] });
    expect(after.ids).toEqual(before.ids);
  });

  it('at a depth (-d): the context filled first, untimed, then the prompt and decode measured after it', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const shallow = await engine.bench(8, 8);
    const generate = vi.spyOn(engine, 'generate');
    try {
      const r = await engine.bench(8, 8, { depth: 40, profile: true });
      expect(r).toMatchObject({ depth: 40, promptTokens: 8, genTokens: 8 });
      // The warm-up, the depth's 40 tokens, then the timed run over all 48, of which only the last 8 are evaluated.
      expect(generate.mock.calls.map(([ids, o]) => [ids.length, o.maxTokens])).toEqual([
        [2, 2],
        [40, 1],
        [48, 8],
      ]);
      const timed = generate.mock.results[2]!.value as ReturnType<typeof engine.generate>;
      expect((await timed).timings.promptTokens).toBe(8);
      const bytesPerPosition = engine.info.memory!.kvBytes / 64;
      expect(r.bytesPerToken - shallow.bytesPerToken).toBeCloseTo(40 * bytesPerPosition, 6);
      // Profiled steps at positions 48 to 51 see 49 to 52 keys.
      const attention = r.profile!.kernels.find((k) => k.kernel.startsWith('attention-decode.wgsl:attend_split'))!;
      expect(attention.bytesPerToken).toBeCloseTo(50.5 * bytesPerPosition, 6);
    } finally {
      generate.mockRestore();
    }
    await expect(engine.bench(8, 8, { depth: 49 })).rejects.toThrow(
      'bench needs a context of 65 tokens; the model was loaded with 64',
    );
  });

  it('profile after a run that decodes nothing (-n 1): one profiled decode step, every dispatch timed', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const full = await engine.bench(8, 2);
    const r = await engine.bench(8, 1, { profile: true });
    expect(r.dispatchesPerToken).toBe(0);
    expect(r.profile!.tokens).toBe(1);
    expect(r.profile!.kernels.reduce((s, k) => s + k.dispatchesPerToken, 0)).toBe(full.dispatchesPerToken);
  });
});

describe('gufo bench --profile --json', () => {
  it('carries the step counts and the per-kernel profile; --help lists them', () => {
    const r = gufo(['bench', STORIES_260K, '-p', '8', '-n', '4', '-d', '16', '--profile', '--json'], {}, 120_000);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as BenchJson;
    expect(doc).toMatchObject({ depth: 16, promptTokens: 8, genTokens: 4 });
    for (const key of ['dispatchesPerToken', 'submitsPerToken', 'hostMsPerToken'] as const)
      expect(doc[key], key).toBeGreaterThan(0);
    expect(doc.profile?.kernels.length).toBeGreaterThan(3);
    expect(doc.profile?.kernels[0]).toHaveProperty('rooflineFraction');

    const help = gufo(['bench', '--help']);
    for (const key of [
      '--profile',
      '-d N',
      'dispatchesPerToken',
      'submitsPerToken',
      'hostMsPerToken',
      'gpuMsPerToken',
      'kernelShapes',
    ])
      expect(help.stdout, key).toContain(key);
  }, 180_000);

  it("says which kernel shapes ran: the CPU adapters' here, a GPU's where GUFO_KERNEL_SHAPE=gpu asks", () => {
    const shapes = (env: NodeJS.ProcessEnv) => {
      const r = gufo(['bench', STORIES_260K, '-p', '2', '-n', '2', '--json'], env, 120_000);
      expect(r.status, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as BenchJson).kernelShapes;
    };
    // SwiftShader: a thread owns its rows, a workgroup is one subgroup of 4 lanes, no shader-f16.
    const cpu = shapes({});
    expect(cpu).toMatchObject({ family: 'cpu', prefill: 'tiled', foldsNorm: false, f16: false });
    expect(cpu.matvec.workgroup).toBe(4);
    expect(cpu.matvec.threadRows).toBeGreaterThan(0);
    // A GPU's, with the mat-vec's threads and rows as the device kit would try another setting.
    const gpu = shapes({ GUFO_KERNEL_SHAPE: 'gpu', GUFO_MATVEC_SHAPE: '32x4' });
    expect(gpu).toMatchObject({ family: 'gpu', prefill: 'wgtiled', foldsNorm: true, batchTokens: 0 });
    expect(gpu.matvec).toEqual({ workgroup: 32, rows: 4, threadRows: 0, xStaged: true, tunedFor: 'GUFO_MATVEC_SHAPE' });
  }, 240_000);
});
