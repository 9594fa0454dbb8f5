/**
 * `tsx scripts/bench.ts exactness [--types Q4_K,Q8_0] [--json]` (`npm run bench -- exactness`): the
 * figures test/engine/exactness.test.ts used to print without asserting them. The engine on the
 * random llama of that test (test/engine/exactness-shapes.ts) in each weight type (default: every
 * GPU type), teacher-forced over its 64 positions, against llama.cpp (node-llama-cpp, CPU) both on
 * the exact F32 copy (what the test asserts: top-1 >= 99%, mean KL <= 1e-3) and on the quantized
 * file itself, where llama.cpp rounds activations to 8 bits, so the figures are not exact; then
 * llama-2-tiny-random.gguf against llama.cpp on its F16 file. Top-1 agreement, mean and max
 * KL(llama.cpp ‖ Gufo) per row.
 * Without GUFO_ADAPTER or VK_ICD_FILENAMES, the engine runs on SwiftShader where it is installed,
 * as the tests do.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GGML_TYPES } from '../../src-main/core/ggml-types';
import { SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { supportsGpuType } from '../../src-main/engine/gpu/weights';
import { EXACTNESS_SHAPES, forcedIds } from '../../test/engine/exactness-shapes';
import {
  compareDistributions,
  llamaTeacherForced,
  logSoftmax,
  type Agreement,
} from '../../test/engine/llama-reference';
import { writeDecodedCopy, writeQuantizedCopies } from '../../test/engine/quantized-models';
import { TINY_RANDOM_LLAMA } from '../../test/support/paths';
import { mulberry32 } from '../../test/support/random';
import { TEST_VOCAB, writeRandomModel } from '../../test/support/test-models';

/** Every weight type the engine runs on a GPU (weights.ts's table). */
const ALL_TYPES: readonly string[] = GGML_TYPES.filter(supportsGpuType).map((t) => t.name);

interface Row {
  model: string;
  type: string;
  vsExact: Agreement;
  /** Against llama.cpp on the quantized file (absent for F32, whose file is its exact copy). */
  vsFile?: Agreement;
}

const fmt = (a: Agreement) =>
  `top-1 ${(a.top1 * 100).toFixed(1)}%, mean KL ${a.meanKl.toExponential(2)}, max KL ${a.maxKl.toExponential(2)}`;

export async function benchExactness({ json, args }: { json: boolean; args: readonly string[] }): Promise<void> {
  const at = args.indexOf('--types');
  const types = at === -1 ? ALL_TYPES : (args[at + 1] ?? '').split(',').filter(Boolean);
  const unknown = types.filter((t) => !ALL_TYPES.includes(t));
  if (unknown.length) throw new Error(`--types: unknown ${unknown.join(', ')} (types: ${ALL_TYPES.join(', ')})`);
  if (!process.env.GUFO_ADAPTER && !process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD))
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  // After the adapter is chosen: Dawn reads VK_ICD_FILENAMES when the engine opens it.
  const { Engine } = await import('../../src-main/engine/engine');
  const engine = await Engine.open();
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-exactness-'));
  const rows: Row[] = [];
  const ourForced = async (path: string, ids: readonly number[]): Promise<Float64Array[]> => {
    await engine.load(path, { ctx: 128 });
    const out: Float64Array[] = [];
    await engine.logits(ids, (logits) => out.push(logSoftmax(logits)));
    return out;
  };
  try {
    const shape = EXACTNESS_SHAPES.llama!;
    const f32 = join(dir, 'llama-f32.gguf');
    await writeRandomModel(f32, shape);
    const ids = forcedIds(shape.seed!);
    for (const type of types) {
      process.stderr.write(`random llama ${type}\n`);
      const typeDir = mkdtempSync(join(dir, `llama-${type}-`));
      const copies = await writeQuantizedCopies(f32, type, typeDir);
      const ours = await ourForced(copies.quantized, ids);
      const vsExact = compareDistributions(await llamaTeacherForced(copies.exact, ids, TEST_VOCAB), ours);
      const vsFile =
        copies.quantized === copies.exact
          ? undefined
          : compareDistributions(await llamaTeacherForced(copies.quantized, ids, TEST_VOCAB), ours);
      rows.push({ model: 'random llama', type, vsExact, ...(vsFile ? { vsFile } : {}) });
      rmSync(typeDir, { recursive: true, force: true });
    }

    process.stderr.write('llama-2-tiny-random.gguf\n');
    const exact = join(dir, 'tiny-random-f32.gguf');
    await writeDecodedCopy(TINY_RANDOM_LLAMA, exact);
    // The sequence of exactness.test.ts's llama-2-tiny-random case.
    const rng = mulberry32(21);
    const tinyIds = [1, ...Array.from({ length: 47 }, () => 3 + rng.int(31997))];
    const ours = await ourForced(TINY_RANDOM_LLAMA, tinyIds);
    rows.push({
      model: 'llama-2-tiny-random',
      type: 'F16',
      vsExact: compareDistributions(await llamaTeacherForced(exact, tinyIds, 32000), ours),
      vsFile: compareDistributions(await llamaTeacherForced(TINY_RANDOM_LLAMA, tinyIds, 32000), ours),
    });

    if (json) {
      console.log(JSON.stringify({ suite: 'exactness', adapter: engine.gpu.info.name, rows }, null, 2));
      return;
    }
    console.log(`exactness against llama.cpp (adapter: ${engine.gpu.info.name})`);
    for (const r of rows) {
      console.log(
        `${r.model} ${r.type.padEnd(6)} vs exact reference: ${fmt(r.vsExact)}` +
          (r.vsFile ? ` | vs llama.cpp on the ${r.type} file: ${fmt(r.vsFile)}` : ''),
      );
    }
  } finally {
    engine.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
