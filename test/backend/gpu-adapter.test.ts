/**
 * gpuAdapter(): the GPU adapter the engines use, asked of a real engine process (WebGPU on
 * SwiftShader here) once; the engine started to ask it then serves the first model. Without an
 * adapter, the engine's reason.
 */
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkLauncher, type EngineLauncher } from '../../src-main/engine-wire/host';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

/** forkLauncher, counting the engine processes it starts. */
function countingLauncher(env: NodeJS.ProcessEnv = process.env): { launcher: EngineLauncher; launches: () => number } {
  const fork = forkLauncher({ env });
  let launches = 0;
  return {
    launcher: (events) => {
      launches++;
      return fork(events);
    },
    launches: () => launches,
  };
}

describe('gpuAdapter (real engine)', { timeout: 300_000 }, () => {
  it('says which adapter the engine opened, asks once, and the engine it started serves the first model', async () => {
    const { launcher, launches } = countingLauncher();
    const backend = testBackend({ engineLauncher: launcher });
    const first = await backend.api.gpuAdapter();
    // The tests run on SwiftShader (vitest.config.ts): a software Vulkan adapter with subgroups of 4 and no shader-f16,
    // computing in the machine's RAM.
    expect(first).toEqual({
      status: 'ready',
      adapter: {
        name: expect.stringMatching(/SwiftShader/) as string,
        vendor: 'google',
        backend: 'vulkan',
        software: true,
        shaderF16: false,
        subgroups: { min: 4, max: 4 },
        memoryBytes: totalmem(),
      },
    });
    expect(await backend.api.gpuAdapter()).toEqual(first);
    const info = await backend.context.engines.withModel({ path: STORIES_260K, ctx: 32 }, ({ info }) => info);
    expect(info.adapter.name).toBe(first.status === 'ready' && first.adapter.name);
    expect(launches()).toBe(1);
  });

  it("without an adapter, answers 'none' with the engine's reason, and asks again next time", async () => {
    const { launcher, launches } = countingLauncher({
      ...process.env,
      VK_ICD_FILENAMES: join(tempDir(), 'missing_icd.json'),
    });
    const backend = testBackend({ engineLauncher: launcher });
    const none = await backend.api.gpuAdapter();
    expect(none).toEqual({
      status: 'none',
      reason: expect.stringMatching(/^no WebGPU adapter found: install your GPU's Vulkan/) as string,
    });
    expect(await backend.api.gpuAdapter()).toEqual(none);
    // The same engine process tries again (a driver may have been installed meanwhile).
    expect(launches()).toBe(1);
  });
});
