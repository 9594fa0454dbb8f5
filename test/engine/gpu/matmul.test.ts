/**
 * Mat-vec (decode) and mat-mat (prefill) for every GPU weight type, against the product of the
 * bit-exact decoded weights (decoderFor) computed in f64, on random inputs, with weights made by
 * llama.cpp's own quantizer. Runs on SwiftShader (see vitest.config.ts).
 *
 * Tolerance: |y_gpu − y_ref| ≤ 1e-5 · Σ|w|·|x| for every output. The GPU sums in f32 in its own
 * order, so its error grows like eps_f32 · √cols relative to that scale; the measured worst
 * cases are printed (about 1e-7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MAX_GROUPS_X, MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  GPU_TYPE_NAMES,
  uploadForSuite,
  makeTensor,
  maxRelativeError,
  readBack,
  randomInput,
  referenceMatmul,
  run,
  storageBuffer,
  wgslFunction,
  type MadeTensor,
} from './fixtures';

const TOLERANCE = 1e-5;
const ROWS = 37; // not a multiple of the rows per workgroup
const COLS = 512; // two k-quant super-blocks
const PREFILL = 11; // one full token tile of 8 and a partial one
/** The decode steps' loop over a thread's rows: unrolled (to ROWS) or not (to rows: MatmulKernels.rowLoop). */
const ROW_LOOP = /for \(var r = 0u; r < (?:ROWS|rows); r\+\+\)/;

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();
const measured: Record<string, Record<string, string>> = {};

/**
 * Extra shapes: rows that end inside a 32-value unit, starting on a 16-byte quad (odd.F32,
 * tail.F16: plain-float.wgsl's decode_quads) or not (the rest: value by value), the halves' mid-word.
 */
const ODD_SHAPES = [
  { name: 'odd.F32', type: 'F32', rows: 5, cols: 100, seed: 71 },
  { name: 'odd.F16', type: 'F16', rows: 5, cols: 99, seed: 72 },
  { name: 'odd.BF16', type: 'BF16', rows: 5, cols: 45, seed: 73 },
  { name: 'midquad.F32', type: 'F32', rows: 5, cols: 99, seed: 75 },
  { name: 'tail.F16', type: 'F16', rows: 5, cols: 104, seed: 76 },
];
/**
 * More row groups (of the decode kernel's rows per workgroup on this adapter) than matmul.ts puts
 * in one dispatch dimension: the kernel wraps them into y.
 */
const tallShape = (groupRows: number) => ({
  name: 'tall.Q4_0',
  type: 'Q4_0',
  rows: MAX_GROUPS_X * groupRows + 1,
  cols: 32,
  seed: 74,
});

beforeAll(async () => {
  ctx = await openGpu();
  const tensors = [
    ...GPU_TYPE_NAMES.map((type, i) => makeTensor({ name: `w.${type}`, type, rows: ROWS, cols: COLS, seed: 1000 + i })),
    ...ODD_SHAPES.map(makeTensor),
    makeTensor(tallShape(new MatmulKernels(ctx).matvec.rows)),
  ];
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
});

afterAll(() => {
  if (Object.keys(measured).length) {
    console.log('max relative error (|y − ref| / Σ|w||x|):');
    console.table(measured);
  }
  ctx?.destroy();
});

/**
 * Runs y = W·x for n random tokens and returns the worst relative error. With `xOffset` not a
 * multiple of 4, x is read one f32 at a time instead of as vec4s.
 */
async function check(kernels: MatmulKernels, name: string, n: number, seed: number, xOffset = 0): Promise<number> {
  const t = made.get(name)!;
  const w = weights.get(name)!;
  const x = randomInput(n, t.cols, seed);
  const padded = new Float32Array(xOffset + x.length);
  padded.set(x, xOffset);
  const xb = storageBuffer(ctx.device, padded);
  const yb = storageBuffer(ctx.device, n * t.rows * 4);
  try {
    await run(ctx.device, [kernels.matmul(w, xb, yb, n, { xOffset })]);
    const y = new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
    const ref = referenceMatmul(t.values, t.rows, t.cols, x, n);
    return maxRelativeError(y, ref.y, ref.scale);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

describe.each(GPU_TYPE_NAMES)('%s', (type) => {
  it('mat-vec and mat-mat match the f32 product of the decoded weights', async () => {
    // This CPU adapter's own shapes (threads own rows) and a GPU's (threads share rows and reduce:
    // by subgroups where the adapter has them, through shared memory otherwise), each with vec4
    // and with scalar loads of x.
    const paths = [
      { cpuShapes: true, subgroups: true, xOffset: 0, label: 'CPU shapes, x vec4' },
      { cpuShapes: true, subgroups: true, xOffset: 1, label: 'CPU shapes, x f32' },
      {
        cpuShapes: false,
        subgroups: true,
        xOffset: 0,
        label: `GPU shapes, ${ctx.hasSubgroups ? 'subgroups' : 'shared'}, x vec4`,
      },
      { cpuShapes: false, subgroups: false, xOffset: 1, label: 'GPU shapes, shared, x f32' },
    ];
    for (const { cpuShapes, subgroups, xOffset, label } of paths) {
      // The float steps, against the exact x (the integer ones take x as q8_1: matvec-int-dot.test.ts).
      const kernels = new MatmulKernels(ctx, { subgroups, cpuShapes, intDot: false });
      const vec = await check(kernels, `w.${type}`, 1, 1, xOffset);
      const mat = await check(kernels, `w.${type}`, PREFILL, 2, xOffset);
      (measured[type] ??= {})[`matvec (${label})`] = vec.toExponential(1);
      measured[type][`matmat (${label})`] = mat.toExponential(1);
      expect(vec).toBeLessThanOrEqual(TOLERANCE);
      expect(mat).toBeLessThanOrEqual(TOLERANCE);
    }
  });
});

describe('shapes and options', () => {
  it.each(ODD_SHAPES.map((s) => s.name))('%s: rows that end inside a unit', async (name) => {
    for (const cpuShapes of [true, false]) {
      const kernels = new MatmulKernels(ctx, { cpuShapes });
      expect(await check(kernels, name, 1, 3)).toBeLessThanOrEqual(TOLERANCE);
      expect(await check(kernels, name, 3, 4)).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it("on a GPU: decode's threads share 4 rows, x staged side by side in workgroup memory, and reduce; prefill is matmat-tiled.wgsl's", () => {
    const kernels = new MatmulKernels(ctx, { cpuShapes: false });
    expect(kernels.matvec).toMatchObject({ rows: 4, threadRows: 0 });
    expect(kernels.prefill).toBe('wgtiled');
    const source = kernels.source({ kernel: 'matvec', vec4: true }, 'Q4_K');
    expect(source).toMatch(/stage_x\(tile_x\[0\], u0, lid\);/);
    expect(source).toMatch(
      /for \(var u = u0 \+ lid \* MV_UNITS; u < min\(u0 \+ XS_UNITS, P\.units\); u \+= WG \* MV_UNITS\)/,
    );
    expect(source).toMatch(/workgroupBarrier/);
    // The defaults follow the adapter: the CPU shapes on a CPU adapter (unless GUFO_KERNEL_SHAPE=gpu).
    expect(new MatmulKernels(ctx).prefill).toBe(ctx.info.cpuShapes ? 'tiled' : 'wgtiled');
  });

  it('more row groups than one dispatch dimension holds', async () => {
    const kernels = new MatmulKernels(ctx);
    expect(await check(kernels, 'tall.Q4_0', 1, 5)).toBeLessThanOrEqual(TOLERANCE);
  });

  it('decode: each thread owns whole rows, x read at one address for all threads, weights 16 bytes at a time', () => {
    const { subgroupMinSize, subgroupMaxSize } = ctx.info;
    const kernels = new MatmulKernels(ctx);
    const source = kernels.source({ kernel: 'matvec', vec4: true }, 'Q4_K');
    if (subgroupMinSize >= 4 && subgroupMinSize === subgroupMaxSize) expect(kernels.matvec.wg).toBe(subgroupMinSize);
    expect(kernels.matvec.rows).toBe(kernels.matvec.wg * kernels.matvec.threadRows);
    // A row's sum never leaves its thread: no reduction, no shared memory, no barrier.
    expect(source).not.toMatch(/workgroupBarrier|var<workgroup>|subgroupAdd/);
    // The unit loop runs from 0 for every thread, x's base straight from the uniform.
    expect(source).toMatch(/let xb = P\.x_offset;/);
    expect(source).toMatch(/for \(var u = 0u; u < P\.units; u \+= MV_UNITS\)/);
    expect(source).toMatch(/var<storage, read> W4: array<vec4<u32>>/);
    // The Q4_K decoder loads its codes as vec4<u32> words.
    expect(source).toMatch(/let \w+ = w_block_quad\(b, qs/);
  });

  it('decode and prefill on a CPU adapter whose decode workgroup is one subgroup: x loaded a vec4 a lane and broadcast', () => {
    const kernels = new MatmulKernels(ctx, { cpuShapes: true });
    const lanes = kernels.matvec.wg;
    expect(kernels.xLanes).toBe(ctx.hasSubgroups && ctx.info.subgroupMinSize === lanes);
    const without = new MatmulKernels(ctx, { cpuShapes: true, subgroups: false });
    expect(without.xLanes).toBe(false);
    for (const kernel of ['matvec', 'tiled'] as const) {
      const unit = wgslFunction(kernels.source({ kernel, vec4: true }, 'Q8_0'), 'x_unit');
      if (kernels.xLanes) {
        // Each vec4 of the unit from its lane: 8 broadcasts, 8 / lanes loads per lane.
        expect(unit.match(/subgroupBroadcast\(v, \du\)/g), kernel).toHaveLength(8);
        expect(unit.match(/load_x4\(/g), kernel).toHaveLength(8 / lanes);
      }
      expect(without.source({ kernel, vec4: true }, 'Q8_0')).not.toMatch(/subgroupBroadcast|enable subgroups/);
    }
  });

  it.each(['Q4_K', 'Q5_K', 'Q6_K', 'Q8_0'])(
    'decode: %s dots the integer codes with x and scales each sub-block once',
    (type) => {
      for (const cpuShapes of [true, false]) {
        const source = new MatmulKernels(ctx, { cpuShapes }).source({ kernel: 'matvec', vec4: true }, type);
        // The decoder's own step and its *_dots helpers (or, for Q8_0, its row dot in
        // quant/unit-step.wgsl's loop), not quant/unit-matvec.wgsl's per-value decode_unit.
        const step =
          type === 'Q8_0'
            ? wgslFunction(source, 'unit_row_dot')
            : [
                wgslFunction(source, 'matvec_step'),
                ...[...source.matchAll(/^fn (\w+_(?:dots?|masked))\(/gm)].map((m) => wgslFunction(source, m[1]!)),
              ].join('');
        expect(step).toMatch(/dot\(vec4<f32>\(|dot\(q\d_codes\(|masked_dot16\(/);
        expect(step).not.toMatch(/decode_unit\(/);
      }
    },
  );

  it.each(['Q4_K', 'Q5_K', 'Q6_K'])(
    "decode on a CPU adapter: %s steps over whole super-blocks, x loaded once for all the rows, each row's block head decoded once",
    (type) => {
      const source = new MatmulKernels(ctx, { cpuShapes: true }).source({ kernel: 'matvec', vec4: true }, type);
      expect(source).toMatch(/const MV_UNITS = 8u;/);
      const [beforeRows, rowBody] = wgslFunction(source, 'matvec_step').split(ROW_LOOP);
      expect(beforeRows).toMatch(/let x = x_block\(xb, 32u \* u\);/);
      expect(rowBody).not.toMatch(/x_unit\(|x_block\(|x_halves\(/);
      // d, dmin and the 8 scales and mins (Q6_K: d and the 16 scales, one quad) once per row and block.
      if (type === 'Q6_K') {
        expect(rowBody!.match(/f16_to_f32\(/g)).toHaveLength(1);
        expect(rowBody!.match(/sbytes4\(sc\.[xyzw]\)/g)).toHaveLength(4);
      } else {
        expect(rowBody!.match(/kblock_head\(/g)).toHaveLength(1);
        expect(rowBody!.match(/kscales_all\(/g)).toHaveLength(1);
      }
    },
  );

  it.each(['Q4_K', 'Q5_K', 'Q6_K'])(
    'decode on a CPU adapter: %s masks its codes in place against x put in that order and pre-scaled once per block (no shift per value)',
    (type) => {
      const source = new MatmulKernels(ctx, { cpuShapes: true }).source({ kernel: 'matvec', vec4: true }, type);
      const [beforeRows, rowBody] = wgslFunction(source, 'matvec_step').split(ROW_LOOP);
      expect(beforeRows).toMatch(/x_block_masked\(x\)/);
      // The row loop and every function it reaches (but the block head's, decoded once per row):
      // no per-lane shift of a word's bytes into place.
      const head = ['kblock_head', 'kscales_all', 'f16x2', 'f16_to_f32'];
      const reached = new Set<string>(head);
      const visit = (body: string) => {
        for (const [, name] of body.matchAll(/\b(\w+)\(/g)) {
          const fn = wgslFunction(source, name!);
          if (fn && !reached.has(name!)) {
            reached.add(name!);
            visit(fn);
          }
        }
      };
      visit(rowBody!);
      const code = [
        rowBody!,
        ...[...reached].filter((name) => !head.includes(name)).map((name) => wgslFunction(source, name)),
      ].join('');
      expect(code).not.toMatch(/nib_lo\(|nib_hi\(|crumbs4\(|bits4\(|>> \(?vec4<u32>\(0u, 8u, 16u, 24u\)/);
    },
  );

  it('decode: Q8_0 and the decode_unit types share one step loop (quant/unit-step.wgsl)', () => {
    const kernels = new MatmulKernels(ctx);
    for (const type of ['Q8_0', 'Q4_0', 'Q5_1']) {
      const source = kernels.source({ kernel: 'matvec', vec4: true }, type);
      expect(source.match(/fn matvec_step\(/g)).toHaveLength(1);
      expect(source).toMatch(
        /let w = unit_row\(row0 \+ r, u\);\s*\(\*acc\)\[r \* TT \+ 0u\] \+= unit_row_dot\(w, x0\);/,
      );
    }
  });

  it.each(['F32', 'F16', 'BF16'])(
    'decode: %s picks whole quads or value by value once per step, not once per row (quant/plain-float.wgsl)',
    (type) => {
      const step = wgslFunction(new MatmulKernels(ctx).source({ kernel: 'matvec', vec4: true }, type), 'matvec_step');
      // The branch comes before the row loops; the value-by-value loop is bounded by the rows the
      // thread has (kept a loop: unrolled ROWS times, lavapipe compiled the kernel for a minute).
      expect(step).toMatch(/if \(rows_on_quads\(\)\) \{\s*for \(var r = 0u; r < (ROWS|rows); r\+\+\)/);
      expect(step).toMatch(/\} else \{\s*for \(var r = 0u; r < rows; r\+\+\) \{\s*decode_values\(/);
    },
  );

  it('decode on a GPU: Q6_K steps over unit pairs that share their ql and qh bytes, loading each once per row', () => {
    const source = new MatmulKernels(ctx, { cpuShapes: false }).source({ kernel: 'matvec', vec4: true }, 'Q6_K');
    expect(source).toMatch(/const MV_UNITS = 2u;/);
    expect(wgslFunction(source, 'matvec_step').match(/q6_pair\(/g)).toHaveLength(1);
    expect(wgslFunction(source, 'q6_pair').match(/w_block_quad\(/g)).toHaveLength(4);
  });

  it('with shader-f16, halves are converted by the adapter in both kernels', () => {
    const kernels = new MatmulKernels({ ...ctx, hasF16: true });
    for (const kernel of ['matvec', 'matmat'] as const) {
      const source = kernels.source({ kernel, vec4: true }, 'F16');
      expect(source).toMatch(/^enable f16;/m);
      expect(source).toMatch(/bitcast<vec2<f16>>/);
    }
    // Without it (the embedding kernel, or an adapter that lacks it), by hand.
    expect(new MatmulKernels({ ...ctx, hasF16: false }).source({ kernel: 'matvec', vec4: true }, 'F16')).not.toMatch(
      /f16;|<f16>/,
    );
  });

  it('offsets, strides, and a token count changed with setTokens', async () => {
    const { device } = ctx;
    const kernels = new MatmulKernels(ctx);
    const t = made.get('w.Q4_K')!;
    const w = weights.get('w.Q4_K')!;
    const n = 5;
    const xOffset = 3;
    const xStride = COLS + 5;
    const yOffset = 7;
    const yStride = ROWS + 2;
    const dense = randomInput(n, COLS, 6);
    const x = new Float32Array(xOffset + n * xStride).fill(Number.NaN);
    for (let i = 0; i < n; i++) x.set(dense.subarray(i * COLS, (i + 1) * COLS), xOffset + i * xStride);
    const xb = storageBuffer(device, x);
    const sentinel = -12345;
    const yb = storageBuffer(device, new Float32Array(yOffset + n * yStride).fill(sentinel));
    const dispatch = kernels.matmul(w, xb, yb, 1, { xOffset, xStride, yOffset, yStride });
    const ref = referenceMatmul(t.values, ROWS, COLS, dense, n);

    for (const tokens of [1, n, 2]) {
      device.queue.writeBuffer(yb, 0, new Float32Array(yOffset + n * yStride).fill(sentinel));
      dispatch.setTokens(tokens);
      expect(dispatch.tokens).toBe(tokens);
      await run(device, [dispatch]);
      const y = new Float32Array(await readBack(device, yb));
      const got = new Float32Array(n * ROWS);
      for (let i = 0; i < y.length; i++) {
        const k = i - yOffset;
        const tok = Math.floor(k / yStride);
        const r = k - tok * yStride;
        if (k >= 0 && tok < tokens && r < ROWS) got[tok * ROWS + r] = y[i]!;
        else expect(y[i], `element ${i} is outside the outputs`).toBe(sentinel);
      }
      const want = ref.y.subarray(0, tokens * ROWS);
      expect(maxRelativeError(got.subarray(0, tokens * ROWS), want, ref.scale)).toBeLessThanOrEqual(TOLERANCE);
    }
    xb.destroy();
    yb.destroy();
  });

  it('accumulate: y += W·x', async () => {
    const { device } = ctx;
    const kernels = new MatmulKernels(ctx);
    for (const name of ['w.Q8_0', 'w.Q5_K']) {
      const t = made.get(name)!;
      for (const n of [1, 3]) {
        const x = randomInput(n, COLS, 8);
        const base = randomInput(n, ROWS, 9);
        const xb = storageBuffer(device, x);
        const yb = storageBuffer(device, base);
        await run(device, [kernels.matmul(weights.get(name)!, xb, yb, n, { accumulate: true })]);
        const y = new Float32Array(await readBack(device, yb), 0, n * ROWS);
        const ref = referenceMatmul(t.values, ROWS, COLS, x, n);
        const want = ref.y.map((v, i) => v + base[i]!);
        const scale = ref.scale.map((v, i) => v + Math.abs(base[i]!));
        expect(maxRelativeError(y, want, scale), `${name}, ${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
        xb.destroy();
        yb.destroy();
      }
    }
  });
});
