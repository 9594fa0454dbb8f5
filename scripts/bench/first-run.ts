/**
 * `tsx scripts/bench.ts first-run [--json]` (`npm run bench -- first-run`): what a first answer
 * waits for. A random 4-layer, 512-wide llama is written as F16 and quantized to Q4_K_M; the
 * engine loads it (weights uploaded, then each kernel run once: kernel-warm-up.ts) and generates
 * twice. Printed: load time split into weights and kernels, the kernel count, and the first and
 * second generate's time and time to first token side by side (their ratio near 1: the first
 * answer pays no compilation). Set MESA_SHADER_CACHE_DISABLE=true for lavapipe's empty-cache case.
 * Without GUFO_ADAPTER or VK_ICD_FILENAMES, the engine runs on SwiftShader where it is installed.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { quantizeFile } from '../../src-main/node/quantize';
import { WIDE_LLAMA, writeRandomModel } from '../../test/support/test-models';

const PROMPT = [1, 403, 407, 261, 1078, 300, 301, 302];

export async function benchFirstRun({ json }: { json: boolean }): Promise<void> {
  if (!process.env.GUFO_ADAPTER && !process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD))
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  // After the adapter is chosen: Dawn reads VK_ICD_FILENAMES when the engine opens it.
  const { Engine } = await import('../../src-main/engine/engine');
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-first-run-'));
  const engine = await Engine.open();
  try {
    const f16 = join(dir, 'f16.gguf');
    const model = join(dir, 'q4_k_m.gguf');
    await writeRandomModel(f16, {
      ...WIDE_LLAMA,
      nLayer: 4,
      nEmbd: 512,
      nFf: 1024,
      nHead: 8,
      nHeadKv: 2,
      weightType: 'F16',
    });
    await quantizeFile(f16, model, 'Q4_K_M');
    const started = performance.now();
    let weightsAt = started;
    let kernels = 0;
    await engine.load(model, {
      ctx: 512,
      onProgress: () => (weightsAt = performance.now()),
      onKernels: (done, total) => {
        kernels = total;
        process.stderr.write(`\rkernels ${done} of ${total}`);
      },
    });
    const loadMs = performance.now() - started;
    process.stderr.write('\n');
    const generate = async () => {
      const t = performance.now();
      const r = await engine.generate(PROMPT, { maxTokens: 4, stop: [] });
      engine.resetCache();
      return { ms: performance.now() - t, ttftMs: r.timings.ttftMs };
    };
    const first = await generate();
    const second = await generate();
    const result = {
      adapter: engine.gpu.info.name,
      kernels,
      loadMs,
      weightsMs: weightsAt - started,
      kernelsMs: started + loadMs - weightsAt,
      first,
      second,
      firstOverSecond: first.ms / second.ms,
    };
    if (json) {
      console.log(JSON.stringify(result, null, 2));
      return;
    }
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    console.log(`${result.adapter}: Q4_K_M llama, 4 layers × 512, ${kernels} kernels`);
    console.log(`load ${ms(loadMs)} (weights ${ms(result.weightsMs)}, kernels ${ms(result.kernelsMs)})`);
    console.log(`first generate  ${ms(first.ms)}, time to first token ${ms(first.ttftMs)}`);
    console.log(`second generate ${ms(second.ms)}, time to first token ${ms(second.ttftMs)}`);
    console.log(`first / second: ${result.firstOverSecond.toFixed(2)}×`);
  } finally {
    engine.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
