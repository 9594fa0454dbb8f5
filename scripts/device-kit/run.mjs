// The device kit's driver (run.sh sets up its environment). For each file type of KIT_TYPES
// (default Q4_K_M,Q8_0; all: below): a random model of KIT_SHAPE (default llama-3.2-1b; tiny for
// software adapters) written by Gufo's own writer and encoders, then `gufo bench --profile --json` and
// llama.cpp's Vulkan decode on that same file. One JSON line per run on stdout:
//   { engine, fileType, shape, adapter, prefillTokS, decodeTokS, rooflineFraction, ... }
// Gufo's lines also say the adapter's vendor and architecture and the kernel shapes that ran
// (`gufo bench --json`'s kernelShapes).
// llama.cpp's rooflineFraction uses Gufo's bytes per token and copy bandwidth for the same file
// and adapter. KIT_P and KIT_N set the prompt and generated tokens; each file runs from an empty
// context and again at a depth of KIT_DEPTH tokens (llama-bench's -d; default 4096, tiny 64).
// KIT_VARIANTS=GUFO_INT_DOT=0,GUFO_MATVEC_SHAPE=32x4: Gufo again from an empty context with each
// of those settings (one each; a line's `variant` names it): the float mat-vec beside the integer
// one, another decode mat-vec shape (threads × rows a workgroup) beside its vendor's.
// Progress goes to stderr.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const kit = dirname(fileURLToPath(import.meta.url));
const shape = process.env.KIT_SHAPE ?? 'llama-3.2-1b';
const tiny = shape === 'tiny';
const p = Number(process.env.KIT_P ?? (tiny ? 8 : 128));
const n = Number(process.env.KIT_N ?? (tiny ? 4 : 64));
// KIT_TYPES=all: every file type whose tensors all have GPU kernels (make-model --types), so the
// run puts every weight type's kernel beside llama.cpp's.
const types = (
  process.env.KIT_TYPES === 'all'
    ? node([join(kit, 'app/tools/make-model.mjs'), '--types'], 'listing the file types').trim()
    : (process.env.KIT_TYPES ?? 'Q4_K_M,Q8_0')
).split(',');
const depths = [0, Number(process.env.KIT_DEPTH ?? (tiny ? 64 : 4096))];
const variants = (process.env.KIT_VARIANTS ?? '').split(',').filter(Boolean);
for (const v of variants) if (!/^GUFO_\w+=\S+$/.test(v)) throw new Error(`KIT_VARIANTS: ${v} is not GUFO_NAME=VALUE`);

/** Runs the kit's node on `args` (with `env` added); stdout when it succeeds, else an Error with stderr's tail. */
function node(args, what, env = {}) {
  process.stderr.write(`${what}...\n`);
  const r = spawnSync(process.execPath, args, {
    cwd: kit,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 2 ** 20,
  });
  if (r.status !== 0)
    throw new Error(
      `${what} failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`,
    );
  return r.stdout;
}

const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');

const work = mkdtempSync(join(process.env.KIT_TMP ?? tmpdir(), 'gufo-kit-'));
let failed = false;

/**
 * `gufo bench --profile --json` on `file` at base.depth (with the setting `variant`, NAME=VALUE,
 * where given): prints its line and returns the bench's document, or prints the error and returns undefined.
 */
function runGufo(file, base, variant) {
  const { fileType, depth } = base;
  const env = variant ? Object.fromEntries([variant.split('=')]) : {};
  const bench = [
    join(kit, 'app/bin/gufo.mjs'),
    'bench',
    file,
    '-p',
    String(base.promptTokens),
    '-n',
    String(base.genTokens),
  ];
  try {
    const what = `gufo bench ${fileType} at depth ${depth}${variant ? `, ${variant}` : ''}`;
    const gufo = JSON.parse(node([...bench, '-d', String(depth), '--profile', '--json'], what, env));
    print({
      engine: 'gufo',
      ...base,
      ...(variant ? { variant } : {}),
      adapter: gufo.adapter.name,
      vendor: gufo.adapter.vendor,
      architecture: gufo.adapter.architecture,
      kernelShapes: gufo.kernelShapes,
      prefillTokS: gufo.prefillTokS,
      decodeTokS: gufo.decodeTokS,
      rooflineFraction: gufo.rooflineFraction,
      bytesPerToken: gufo.bytesPerToken,
      copyBytesPerSecond: gufo.copyBytesPerSecond,
      dispatchesPerToken: gufo.dispatchesPerToken,
      hostMsPerToken: gufo.hostMsPerToken,
      gpuMsPerToken: gufo.profile?.gpuMsPerToken,
      kernels: gufo.profile?.kernels
        .slice(0, 8)
        .map((k) => ({ kernel: k.kernel, gpuMsPerToken: k.gpuMsPerToken, rooflineFraction: k.rooflineFraction })),
    });
    return gufo;
  } catch (err) {
    failed = true;
    print({ engine: 'gufo', ...base, ...(variant ? { variant } : {}), error: err.message });
    return undefined;
  }
}

try {
  for (const fileType of types) {
    const file = join(work, `${shape}-${fileType}.gguf`);
    node([join(kit, 'app/tools/make-model.mjs'), fileType, file, shape], `writing a random ${shape} ${fileType}`);
    for (const depth of depths) {
      const base = { fileType, shape, depth, promptTokens: p, genTokens: n };
      const gufo = runGufo(file, base);
      for (const variant of depth === 0 ? variants : []) runGufo(file, base, variant);
      try {
        const llama = JSON.parse(
          node(
            [join(kit, 'llama/llama-decode.mjs'), file, String(p), String(n), `--depth=${depth}`],
            `llama.cpp (Vulkan) ${fileType} at depth ${depth}`,
          ),
        );
        const rooflineFraction = gufo ? (gufo.bytesPerToken * llama.decodeTokS) / gufo.copyBytesPerSecond : null;
        print({ engine: 'llama.cpp-vulkan', ...base, ...llama, rooflineFraction });
      } catch (err) {
        failed = true;
        print({ engine: 'llama.cpp-vulkan', ...base, error: err.message });
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
