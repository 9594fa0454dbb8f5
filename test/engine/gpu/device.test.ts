import { afterEach, expect, it } from 'vitest';
import { NoGpuError, openGpu } from '../../../src-main/engine/gpu/device';

const saved = process.env.GUFO_BACKEND;
afterEach(() => {
  if (saved === undefined) delete process.env.GUFO_BACKEND;
  else process.env.GUFO_BACKEND = saved;
});

it('reports the adapter, its backend and what it can do', async () => {
  delete process.env.GUFO_BACKEND;
  const ctx = await openGpu();
  try {
    const want = process.platform === 'darwin' ? 'metal' : process.platform === 'win32' ? 'd3d12' : 'vulkan';
    expect(ctx.info.backend).toBe(want);
    expect(ctx.info.name).not.toBe('');
    expect(ctx.info.maxStorageBufferBindingSize).toBeGreaterThan(0);
    expect(ctx.hasSubgroups).toBe(ctx.info.features.includes('subgroups'));
    if (ctx.hasSubgroups) expect(ctx.info.subgroupMinSize).toBeGreaterThanOrEqual(4);
    if (ctx.info.name.startsWith('SwiftShader')) expect(ctx.info.isFallbackAdapter).toBe(true);
  } finally {
    ctx.destroy();
  }
});

it('GUFO_BACKEND picks the backend and is checked', async () => {
  process.env.GUFO_BACKEND = 'vulkan-ish';
  await expect(openGpu()).rejects.toThrow(NoGpuError);
  if (process.platform === 'linux') {
    process.env.GUFO_BACKEND = 'Vulkan';
    const ctx = await openGpu();
    expect(ctx.info.backend).toBe('vulkan');
    ctx.destroy();
  }
});

it('GUFO_KERNEL_SHAPE overrides the kernel shapes, GUFO_SUBGROUPS=0 drops subgroups; both are checked', async () => {
  const saved = { shape: process.env.GUFO_KERNEL_SHAPE, subgroups: process.env.GUFO_SUBGROUPS };
  try {
    delete process.env.GUFO_SUBGROUPS;
    for (const shape of [undefined, 'gpu', 'CPU'] as const) {
      if (shape === undefined) delete process.env.GUFO_KERNEL_SHAPE;
      else process.env.GUFO_KERNEL_SHAPE = shape;
      const ctx = await openGpu();
      expect(ctx.info.cpuShapes, String(shape)).toBe(
        shape === undefined ? ctx.info.isFallbackAdapter : shape === 'CPU',
      );
      ctx.destroy();
    }
    delete process.env.GUFO_KERNEL_SHAPE;
    process.env.GUFO_SUBGROUPS = '0';
    const ctx = await openGpu();
    expect(ctx.hasSubgroups).toBe(false);
    expect(ctx.info.features).not.toContain('subgroups');
    ctx.destroy();
    process.env.GUFO_KERNEL_SHAPE = 'tpu';
    await expect(openGpu()).rejects.toThrow(NoGpuError);
    delete process.env.GUFO_KERNEL_SHAPE;
    process.env.GUFO_SUBGROUPS = 'no';
    await expect(openGpu()).rejects.toThrow(NoGpuError);
  } finally {
    for (const [k, v] of [
      ['GUFO_KERNEL_SHAPE', saved.shape],
      ['GUFO_SUBGROUPS', saved.subgroups],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});
