/**
 * Block fields are checked by recomputing every value from them: value = f(fields, codes), with
 * each format's formula written out here independently, must equal llama.cpp's dequantize_row_*
 * bit for bit, on blocks made by llama.cpp's quantizer and on random blocks (every code pattern).
 */
import { describe, expect, it } from 'vitest';
import { blockFields, type BlockField } from '../../src-main/core/quants/block-fields';
import {
  IQ1_DELTA,
  IQ1S_GRID,
  IQ2S_GRID,
  IQ2XS_GRID,
  IQ2XXS_GRID,
  IQ3S_GRID,
  IQ3XXS_GRID,
  IQ4NL_VALUES,
} from '../../src-main/core/quants/iq-tables';
import { f16ToF32 } from '../../src-main/core/quants/half';
import { firstMismatch, randomBlocks, typeOf, type ScaleField } from '../support/decoder-check';
import { ggml, llamaDequantize, llamaQuantize } from '../support/ggml-oracle';
import { mulberry32 } from '../support/random';

/** Looks up field `name` for element v through its span. */
function reader(fields: readonly BlockField[]) {
  return (name: string, v: number): number => {
    const f = fields.find((x) => x.name === name);
    if (!f) throw new Error(`no field "${name}" in ${fields.map((x) => x.name).join(', ')}`);
    return f.values[Math.floor(v / f.span)]!;
  };
}

type Recompute = (field: (name: string, v: number) => number, q: number, v: number) => number;

/** E2M1 as ggml's table has it (code 8 is +0, not −0). */
const E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6];

const f16At = (at: number): ScaleField => ({ at, kind: 'f16' });

const COMPLETE: { name: string; scales: ScaleField[]; value: Recompute }[] = [
  { name: 'Q4_0', scales: [f16At(0)], value: (f, q, v) => (q - 8) * f('d', v) },
  { name: 'Q4_1', scales: [f16At(0), f16At(2)], value: (f, q, v) => q * f('d', v) + f('m', v) },
  { name: 'Q5_0', scales: [f16At(0)], value: (f, q, v) => (q - 16) * f('d', v) },
  { name: 'Q5_1', scales: [f16At(0), f16At(2)], value: (f, q, v) => q * f('d', v) + f('m', v) },
  { name: 'Q8_0', scales: [f16At(0)], value: (f, q, v) => q * f('d', v) },
  {
    name: 'Q2_K',
    scales: [f16At(80), f16At(82)],
    value: (f, q, v) => f('d', v) * f('scales', v) * q - f('dmin', v) * f('mins', v),
  },
  { name: 'Q3_K', scales: [f16At(108)], value: (f, q, v) => f('d', v) * f('scales', v) * (q - 4) },
  {
    name: 'Q4_K',
    scales: [f16At(0), f16At(2)],
    value: (f, q, v) => f('d', v) * f('scales', v) * q - f('dmin', v) * f('mins', v),
  },
  {
    name: 'Q5_K',
    scales: [f16At(0), f16At(2)],
    value: (f, q, v) => f('d', v) * f('scales', v) * q - f('dmin', v) * f('mins', v),
  },
  { name: 'Q6_K', scales: [f16At(208)], value: (f, q, v) => f('d', v) * f('scales', v) * (q - 32) },
  { name: 'Q8_K', scales: [{ at: 0, kind: 'f32' }], value: (f, q, v) => f('d', v) * q },
  { name: 'IQ4_NL', scales: [f16At(0)], value: (f, q, v) => f('d', v) * IQ4NL_VALUES[q]! },
  { name: 'IQ4_XS', scales: [f16At(0)], value: (f, q, v) => f('d', v) * f('scales', v) * IQ4NL_VALUES[q]! },
  { name: 'MXFP4', scales: [], value: (f, q, v) => f('scale', v) * E2M1[q]! },
  { name: 'NVFP4', scales: [], value: (f, q, v) => f('scales (UE4M3)', v) * E2M1[q]! },
  { name: 'Q1_0', scales: [f16At(0)], value: (f, q, v) => (q ? 1 : -1) * f('d', v) },
  { name: 'Q2_0', scales: [f16At(0)], value: (f, q, v) => (q - 1) * f('d', v) },
  { name: 'TQ2_0', scales: [f16At(64)], value: (f, q, v) => (q - 1) * f('d', v) },
];

/** ggml_quantize_chunk refuses Q8_K (an activation format): its reference quantizer makes the blocks. */
function quantize(typeName: string, data: Float32Array, rows: number, rowLength: number): Uint8Array {
  const t = typeOf(typeName);
  if (typeName !== 'Q8_K') return llamaQuantize(t.id, data, rows, rowLength, new Float32Array(rowLength).fill(1));
  const out = new Uint8Array((data.length / t.blockSize) * t.typeSize);
  ggml.fn('void quantize_row_q8_K_ref(const float *x, void *y, int64_t k)')(data, out, data.length);
  return out;
}

/** Recomputes every value of `bytes` from its fields and codes and expects llama.cpp's values, bit for bit. */
function expectFieldsRebuildValues(typeName: string, bytes: Uint8Array, value: Recompute, label: string): void {
  const t = typeOf(typeName);
  const blocks = bytes.length / t.typeSize;
  const theirs = llamaDequantize(t.id, bytes.slice(), blocks * t.blockSize);
  const ours = new Float32Array(theirs.length);
  for (let b = 0; b < blocks; b++) {
    const described = blockFields(t, bytes.subarray(b * t.typeSize, (b + 1) * t.typeSize));
    expect(described.complete).toBe(true);
    const codes = described.codes!;
    expect(codes).toHaveLength(t.blockSize);
    for (const f of described.fields) expect(f.values.length * f.span, `${typeName} field ${f.name}`).toBe(t.blockSize);
    const field = reader(described.fields);
    for (let v = 0; v < t.blockSize; v++) ours[b * t.blockSize + v] = value(field, codes[v]!, v);
  }
  const m = firstMismatch(ours, theirs);
  expect(m, `${typeName} (${label}): value rebuilt from fields ≠ llama.cpp's at ${JSON.stringify(m)}`).toBeNull();
}

describe('block fields rebuild llama.cpp’s values', () => {
  for (const c of COMPLETE) {
    it(`${c.name}: on blocks from llama.cpp's quantizer and on random blocks`, () => {
      const rng = mulberry32(7);
      const rows = 4;
      const rowLength = 512;
      const data = Float32Array.from({ length: rows * rowLength }, () => rng.studentT(4) * 0.05);
      expectFieldsRebuildValues(c.name, quantize(c.name, data, rows, rowLength), c.value, 'quantized');
      expectFieldsRebuildValues(c.name, randomBlocks(rng, c.name, 64, c.scales), c.value, 'random');
    });
  }

  it('the extra bit planes agree with the codes (Q5 fifth bits, Q3_K hmask, Q6_K high bits)', () => {
    const rng = mulberry32(3);
    for (const [name, plane, shift] of [
      ['Q5_0', 'qh (fifth bit)', 4],
      ['Q5_1', 'qh (fifth bit)', 4],
      ['Q5_K', 'qh (fifth bit)', 4],
      ['Q3_K', 'hmask (third bit)', 2],
      ['Q6_K', 'qh (high 2 bits)', 4],
    ] as const) {
      const t = typeOf(name);
      const d = blockFields(t, rng.bytes(t.typeSize));
      const bits = d.fields.find((f) => f.name === plane)!.values;
      expect(
        bits.map((_, v) => d.codes![v]! >> shift),
        name,
      ).toEqual(bits);
      expect(new Set(bits).size, `${name}: random bytes give every bit pattern`).toBe(name === 'Q6_K' ? 4 : 2);
    }
  });
});

describe('plain floats: sign, exponent and mantissa rebuild the value', () => {
  for (const [name, e, m] of [
    ['F32', 8, 23],
    ['F16', 5, 10],
    ['BF16', 8, 7],
  ] as const) {
    it(name, () => {
      const t = typeOf(name);
      const bytes = mulberry32(11).bytes(4096 * t.typeSize);
      const n = bytes.length / t.typeSize;
      const theirs = name === 'F32' ? new Float32Array(bytes.slice().buffer) : llamaDequantize(t.id, bytes.slice(), n);
      const { fields, codes } = blockFields(t, bytes);
      const f = reader(fields);
      const bias = 2 ** (e - 1) - 1;
      for (let i = 0; i < n; i++) {
        const [s, x, frac] = [f('sign', i), f('exponent', i), f('mantissa', i)];
        expect(codes![i]).toBe(s * 2 ** (e + m) + x * 2 ** m + frac);
        const sign = s ? -1 : 1;
        const value =
          x === 2 ** e - 1
            ? frac
              ? NaN
              : sign * Infinity
            : x === 0
              ? sign * 2 ** (1 - bias) * (frac / 2 ** m)
              : sign * 2 ** (x - bias) * (1 + frac / 2 ** m);
        expect(
          Object.is(Math.fround(value), theirs[i]!) || (Number.isNaN(value) && Number.isNaN(theirs[i]!)),
          `${name} element ${i}`,
        ).toBe(true);
      }
    });
  }
});

describe('lattice IQ types: d and sub-block scales', () => {
  const magnitudes = (grid: Float32Array) => new Set(Array.from(grid, Math.abs));
  const iq1 = new Set(Array.from(IQ1S_GRID.values, (g) => [Math.abs(g + IQ1_DELTA), Math.abs(g - IQ1_DELTA)]).flat());
  const CASES: { name: string; scale: (d: number, s: number) => number; grid: Set<number> }[] = [
    { name: 'IQ2_XXS', scale: (d, s) => (d * (0.5 + s)) / 4, grid: magnitudes(IQ2XXS_GRID.values) },
    { name: 'IQ2_XS', scale: (d, s) => (d * (0.5 + s)) / 4, grid: magnitudes(IQ2XS_GRID.values) },
    { name: 'IQ2_S', scale: (d, s) => (d * (0.5 + s)) / 4, grid: magnitudes(IQ2S_GRID.values) },
    { name: 'IQ3_XXS', scale: (d, s) => (d * (0.5 + s)) / 2, grid: magnitudes(IQ3XXS_GRID.values) },
    { name: 'IQ3_S', scale: (d, s) => d * (1 + 2 * s), grid: magnitudes(IQ3S_GRID.values) },
    { name: 'IQ1_S', scale: (d, s) => d * (2 * s + 1), grid: iq1 },
    { name: 'IQ1_M', scale: (d, s) => d * (2 * s + 1), grid: iq1 },
  ];
  for (const c of CASES) {
    it(`${c.name}: every value is d-and-s scale × a grid magnitude`, () => {
      const t = typeOf(c.name);
      const rng = mulberry32(5);
      const bytes = randomBlocks(rng, c.name, 256, [f16At(0)]);
      const values = llamaDequantize(t.id, bytes.slice(), 256 * t.blockSize);
      let checked = 0;
      for (let b = 0; b < 256; b++) {
        const described = blockFields(t, bytes.subarray(b * t.typeSize, (b + 1) * t.typeSize));
        expect(described.complete).toBe(false);
        expect(described.codes).toBeNull();
        const d = described.fields.find((f) => f.name === 'd')!.values[0]!;
        // IQ1_M's d sits in the scale words' top nibbles: random bytes make it anything.
        if (c.name !== 'IQ1_M') expect(d).toBe(f16ToF32(bytes[b * t.typeSize]! | (bytes[b * t.typeSize + 1]! << 8)));
        if (!(Math.abs(d) > 2 ** -12 && Math.abs(d) < 2 ** 8)) continue;
        const f = reader(described.fields);
        for (let v = 0; v < t.blockSize; v++) {
          const ratio = Math.abs(values[b * t.blockSize + v]! / c.scale(d, f('s', v)));
          const near = [...c.grid].some((g) => Math.abs(ratio - g) < 1e-5 * Math.max(1, g));
          if (!near) expect.fail(`${c.name} block ${b} element ${v}: |value| / scale = ${ratio}, not a grid magnitude`);
        }
        checked++;
      }
      expect(checked).toBeGreaterThan(50);
    });
  }
});

describe('block field contract', () => {
  it('refuses a block of the wrong size and names the type', () => {
    expect(() => blockFields(typeOf('Q4_K'), new Uint8Array(143))).toThrow(/Q4_K: a block is 144 bytes, got 143/);
    expect(() => blockFields(typeOf('F16'), new Uint8Array(3))).toThrow(/F16/);
  });

  it('TQ1_0 shows its d and says its trits are not broken out', () => {
    const t = typeOf('TQ1_0');
    const bytes = new Uint8Array(t.typeSize);
    bytes[52] = 0x00;
    bytes[53] = 0x3c; // f16 1.0
    const d = blockFields(t, bytes);
    expect(d.fields).toEqual([{ name: 'd', span: 256, values: [1] }]);
    expect(d.complete).toBe(false);
    expect(d.formula).toMatch(/not broken out/);
  });
});
