/**
 * The child process of gpu-shapes-lavapipe.test.ts (run with `node --import tsx`): opens the
 * adapter its environment names (lavapipe, GUFO_KERNEL_SHAPE=gpu, LP_NATIVE_VECTOR_WIDTH,
 * GUFO_SUBGROUPS) and checks the GPU-shaped weight kernels for every GPU type, decode mat-vec
 * (n = 1) and prefill mat-mat (n = 33: a full tile of 32 tokens and one more), against the
 * bit-exact CPU decoders:
 *
 * - one-hot x (token t has a single 1 at column c_t): y[t][i] is the decoded weight w[i][c_t]
 *   summed with zeros, so it must equal the decoder's f32 bit for bit;
 * - random x: |y − ref| ≤ 1e-5 · Σ|w||x| against the f64 product, as matmul.test.ts;
 * - the same on copies whose every block's f16 scales (d, dmin, m) are f16 subnormals, which a
 *   GPU that flushes f16 subnormals would turn into zeros (and F16 weights holding subnormals).
 *
 * Prints one JSON line: { info, failures, checks }.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { openGpu } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import { uploadWeights } from '../../../src-main/engine/gpu/weights';
import {
  GPU_TYPE_NAMES,
  makeTensor,
  maxRelativeError,
  q8_1Values,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  writeTensors,
  type MadeTensor,
} from './fixtures';

const ROWS = 67; // a 64-row prefill tile and 3 more; not a multiple of the decode kernel's 4 rows
const COLS = 256; // one k-quant super-block
const TOKENS = [1, 33];
/** GUFO_TEST_TYPES=Q4_K,Q8_0 checks only those types (default: every GPU type). */
const TYPES = process.env.GUFO_TEST_TYPES ? process.env.GUFO_TEST_TYPES.split(',') : GPU_TYPE_NAMES;
const TOLERANCE = 1e-5;
/**
 * The integer mat-vec's types checked here (GUFO_TEST_INT_TYPES, of TYPES): by default one of each
 * step's structure (the K-quant pair step, Q6_K's, the unit step), to spare lavapipe's compile
 * time; matvec-int-dot.test.ts checks every INT_DOT_TYPES on SwiftShader.
 */
const INT_CHECKED = new Set((process.env.GUFO_TEST_INT_TYPES ?? 'Q4_K,Q6_K,Q8_0').split(',').filter(Boolean));
/** f16 subnormals (positive and negative, smallest to largest) put in the blocks' scales. */
const SUBNORMALS = [0x0001, 0x03ff, 0x8155, 0x0200, 0x8001, 0x0033];

/** The tensor with every f16 scale of every block replaced by a subnormal (F16: every third value). */
function withSubnormalScales(t: MadeTensor): MadeTensor | undefined {
  const bytes = t.bytes.slice();
  const type = t.ggmlType;
  if (type.name === 'F16') {
    const halves = new Uint16Array(bytes.buffer);
    for (let i = 0; i < halves.length; i += 3) halves[i] = SUBNORMALS[(i / 3) % SUBNORMALS.length]!;
  } else {
    const fields = type.layout.filter((f) => f.kind === 'f16' && f.bytes === 2);
    if (!type.quantized || fields.length === 0) return undefined;
    const blocks = bytes.length / type.typeSize;
    for (let b = 0; b < blocks; b++) {
      fields.forEach((f, k) => {
        const h = SUBNORMALS[(b + k) % SUBNORMALS.length]!;
        bytes[b * type.typeSize + f.offset] = h & 0xff;
        bytes[b * type.typeSize + f.offset + 1] = h >> 8;
      });
    }
  }
  const values = new Float32Array(t.rows * t.cols);
  decoderFor(type)(bytes, values, (t.rows * t.cols) / type.blockSize);
  return { ...t, name: `subnormal.${type.name}`, bytes, values };
}

const dir = mkdtempSync(join(tmpdir(), 'gufo-gpu-shapes-'));
const ctx = await openGpu();
const failures: string[] = [];
let checks = 0;
try {
  // The float steps (bit for bit on one-hot x); the integer ones (INT_DOT_TYPES) apart, below.
  const kernels = new MatmulKernels(ctx, { intDot: false });
  const ints = new MatmulKernels(ctx, { intDot: true });
  const tensors: MadeTensor[] = [];
  TYPES.forEach((type, i) => {
    const t = makeTensor({ name: `w.${type}`, type, rows: ROWS, cols: COLS, seed: 3000 + i });
    tensors.push(t);
    const sub = withSubnormalScales(t);
    if (sub) tensors.push(sub);
  });
  const file = await writeTensors(dir, tensors);
  const weights = await uploadWeights(
    ctx,
    file.gguf,
    tensors.map((t) => t.name),
  );
  for (const t of tensors) {
    process.stderr.write(`${t.name} `);
    const w = weights.get(t.name)!;
    for (const n of TOKENS) {
      // One-hot x: token k reads column (37k + 5) mod COLS alone.
      const oneHot = new Float32Array(n * COLS);
      for (let k = 0; k < n; k++) oneHot[k * COLS + ((37 * k + 5) % COLS)] = 1;
      for (const [x, exact] of [
        [oneHot, true],
        [randomInput(n, COLS, 17 + n), false],
      ] as const) {
        checks++;
        const xb = storageBuffer(ctx.device, new Float32Array(x));
        const yb = storageBuffer(ctx.device, n * ROWS * 4);
        try {
          await run(ctx.device, [kernels.matmul(w, xb, yb, n)]);
          const y = new Float32Array(await readBack(ctx.device, yb), 0, n * ROWS);
          const what = `${t.name}, ${n === 1 ? 'mat-vec' : `mat-mat n=${n}`}, ${exact ? 'one-hot x' : 'random x'}`;
          if (exact) {
            const wrong: string[] = [];
            for (let k = 0; k < n; k++) {
              const c = (37 * k + 5) % COLS;
              for (let r = 0; r < ROWS; r++) {
                const want = t.values[r * COLS + c]! + 0;
                const got = y[k * ROWS + r]! + 0;
                if (!Object.is(got, want) && wrong.length < 3) wrong.push(`token ${k} row ${r}: ${got} ≠ ${want}`);
              }
            }
            if (wrong.length) failures.push(`${what}: ${wrong.join('; ')}`);
          } else {
            const ref = referenceMatmul(t.values, ROWS, COLS, x, n);
            const err = maxRelativeError(y, ref.y, ref.scale);
            if (!(err <= TOLERANCE)) failures.push(`${what}: relative error ${err}`);
          }
        } catch (e) {
          failures.push(`${t.name}, n=${n}: ${(e as Error).message}`);
        } finally {
          xb.destroy();
          yb.destroy();
        }
      }
    }
    // The integer mat-vec: its codes dotted with x's q8_1 (llama.cpp's), against the f64 product.
    if (ints.intDot && INT_CHECKED.has(t.ggmlType.name)) {
      checks++;
      const x = randomInput(1, COLS, 23);
      const xb = storageBuffer(ctx.device, x);
      const yb = storageBuffer(ctx.device, ROWS * 4);
      try {
        await run(ctx.device, [ints.matmul(w, xb, yb, 1)]);
        const y = new Float32Array(await readBack(ctx.device, yb), 0, ROWS);
        const ref = referenceMatmul(t.values, ROWS, COLS, q8_1Values(x), 1);
        const err = maxRelativeError(y, ref.y, ref.scale);
        if (!(err <= TOLERANCE)) failures.push(`${t.name}, integer mat-vec: relative error ${err}`);
      } catch (e) {
        failures.push(`${t.name}, integer mat-vec: ${(e as Error).message}`);
      } finally {
        xb.destroy();
        yb.destroy();
      }
    }
  }
  for (const w of weights.values()) w.destroy();
  file.file.close();
  const i = ctx.info;
  const info = {
    name: i.name,
    cpuShapes: i.cpuShapes,
    hasF16: ctx.hasF16,
    subgroups: kernels.subgroups,
    subgroupMinSize: i.subgroupMinSize,
    subgroupMaxSize: i.subgroupMaxSize,
    matvec: kernels.matvec,
    prefill: kernels.prefill,
    intDot: ints.intDot,
  };
  console.log(JSON.stringify({ info, failures, checks }));
} finally {
  ctx.destroy();
  rmSync(dir, { recursive: true, force: true });
}
