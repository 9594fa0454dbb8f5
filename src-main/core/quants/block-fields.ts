/**
 * What one block of a tensor holds, field by field: its scales (d, dmin, sub-block scales and
 * mins unpacked from their 4- and 6-bit fields), its extra bit planes (Q5's fifth bits, Q3_K's
 * hmask, Q6_K's high bits) and one code per element, with the formula that turns them into
 * values. The values themselves come from the bit-exact decoders (decoders.ts); this module only
 * names what the decoders read, so the inspector can show why a value is what it is.
 * Platform-free.
 *
 * Element counts come from the type table; byte offsets inside a block are each format's layout
 * (ggml-common.h), the same the decoders read.
 */
import type { GgmlType } from '../ggml-types';
import { e8m0ToF32Half, f16ToF32, ue4m3ToF32 } from './half';
import { IQ4NL_VALUES } from './iq-tables';
import { kMin, kScale, q3kScale } from './k-quants';

export interface BlockField {
  readonly name: string;
  /** Consecutive elements each value applies to: the whole block for d, 16 or 32 for a sub-block scale, 1 for a per-element bit. */
  readonly span: number;
  readonly values: number[];
}

export interface BlockFields {
  readonly fields: BlockField[];
  /** One quantized code per element, or null where the format's codes are not broken out. */
  readonly codes: number[] | null;
  /** How each value follows from the fields and codes. */
  readonly formula: string;
  /** False where only some fields are shown (the lattice-coded IQ types, TQ1_0): values still come from the decoder. */
  readonly complete: boolean;
}

type Describe = (b: Uint8Array, type: GgmlType) => BlockFields;

const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
const u32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const f16 = (b: Uint8Array, o: number): number => f16ToF32(u16(b, o));
const i8 = (x: number): number => (x << 24) >> 24;
const each = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const field = (name: string, span: number, values: number[]): BlockField => ({ name, span, values });
/** A block scale: one value for the whole block. */
const scalar = (type: GgmlType, name: string, value: number): BlockField => field(name, type.blockSize, [value]);

/** The 32-value nibble layout (Q4_0, Q4_1, Q5_*, IQ4_NL, MXFP4): byte j holds element j (low) and j + 16 (high). */
const nibble32 = (b: Uint8Array, qs: number, v: number): number => (v < 16 ? b[qs + v]! & 15 : b[qs + v - 16]! >> 4);
/** Bit v of the little-endian u32 at `o` (Q5_0/Q5_1's fifth bits). */
const bit32 = (b: Uint8Array, o: number, v: number): number => (u32(b, o) >>> v) & 1;

/** E2M1 values, sign in bit 3: half of FP4_DOUBLED, as written in the formulas. */
const E2M1 = '±{0, 0.5, 1, 1.5, 2, 3, 4, 6} (bit 3 of q is the sign)';
const IQ4_TABLE = `T = [${Array.from(IQ4NL_VALUES).join(', ')}]`;

function legacy(offsets: { min?: number; qh?: number; qs: number }, formula: string): Describe {
  return (b, t) => {
    const fields = [scalar(t, 'd', f16(b, 0))];
    if (offsets.min !== undefined) fields.push(scalar(t, 'm', f16(b, offsets.min)));
    const qh = offsets.qh;
    if (qh !== undefined) fields.push(field('qh (fifth bit)', 1, each(t.blockSize, (v) => bit32(b, qh, v))));
    const codes = each(t.blockSize, (v) => nibble32(b, offsets.qs, v) | (qh === undefined ? 0 : bit32(b, qh, v) << 4));
    return { fields, codes, formula, complete: true };
  };
}

/** Q2_K/Q3_K's 2-bit layout: element v is bits 2·((v ÷ 32) mod 4) of qs[32·(v ÷ 128) + v mod 32]. */
const twoBits = (b: Uint8Array, qs: number, v: number): number => (b[qs + 32 * (v >> 7) + (v & 31)]! >> (2 * ((v >> 5) & 3))) & 3;
/** Q4_K/Q5_K's nibble layout: per 64 elements 32 bytes, low nibbles first. */
const kNibble = (b: Uint8Array, qs: number, v: number): number => {
  const x = b[qs + 32 * (v >> 6) + (v & 31)]!;
  return v & 32 ? x >> 4 : x & 15;
};
/** Q5_K's fifth bit of element v: bit 2·(v ÷ 64) + (v ÷ 32 mod 2) of qh[v mod 32]. */
const q5kHigh = (b: Uint8Array, v: number): number => (b[16 + (v & 31)]! >> (2 * (v >> 6) + ((v >> 5) & 1))) & 1;
/** Q3_K's hmask bit of element v: bit 4·(v ÷ 128) + (v ÷ 32 mod 4) of hmask[v mod 32]. */
const q3kHigh = (b: Uint8Array, v: number): number => (b[v & 31]! >> (4 * (v >> 7) + ((v >> 5) & 3))) & 1;
/** Q6_K's element v: low 4 bits from ql, high 2 bits from qh (see decodeQ6_K). */
const q6kLow = (b: Uint8Array, v: number): number => {
  const quarter = (v >> 5) & 3;
  const x = b[64 * (v >> 7) + (v & 31) + 32 * (quarter & 1)]!;
  return quarter >= 2 ? x >> 4 : x & 15;
};
const q6kHigh = (b: Uint8Array, v: number): number => (b[128 + 32 * (v >> 7) + (v & 31)]! >> (2 * ((v >> 5) & 3))) & 3;

/** Sub-block scale fields of the IQ types: `s` codes, each for `span` elements. */
function iqScales(t: GgmlType, name: string, span: number, s: (i: number) => number): BlockField {
  return field(name, span, each(t.blockSize / span, s));
}

/** The IQ types whose values come from lattice codebooks: d and sub-block scales only. */
function lattice(extra: (b: Uint8Array, t: GgmlType) => BlockField[], formula: string, d: (b: Uint8Array) => number = (b) => f16(b, 0)): Describe {
  return (b, t) => ({
    fields: [scalar(t, 'd', d(b)), ...extra(b, t)],
    codes: null,
    formula: `${formula}; grid indices and signs are not broken out here`,
    complete: false,
  });
}

const DESCRIBE: Readonly<Record<string, Describe>> = {
  Q4_0: legacy({ qs: 2 }, 'value = (q − 8) · d'),
  Q4_1: legacy({ min: 2, qs: 4 }, 'value = q · d + m'),
  Q5_0: legacy({ qh: 2, qs: 6 }, 'value = (q − 16) · d, q = nibble | fifth bit << 4'),
  Q5_1: legacy({ min: 2, qh: 4, qs: 8 }, 'value = q · d + m, q = nibble | fifth bit << 4'),
  Q8_0: (b, t) => ({ fields: [scalar(t, 'd', f16(b, 0))], codes: each(t.blockSize, (v) => i8(b[2 + v]!)), formula: 'value = q · d', complete: true }),
  Q2_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, 80)),
      scalar(t, 'dmin', f16(b, 82)),
      field('scales', 16, each(16, (i) => b[i]! & 15)),
      field('mins', 16, each(16, (i) => b[i]! >> 4)),
    ],
    codes: each(t.blockSize, (v) => twoBits(b, 16, v)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 16',
    complete: true,
  }),
  Q3_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, 108)),
      field('scales', 16, each(16, (k) => q3kScale(b, 96, k))),
      field('hmask (third bit)', 1, each(t.blockSize, (v) => q3kHigh(b, v))),
    ],
    codes: each(t.blockSize, (v) => twoBits(b, 32, v) | (q3kHigh(b, v) << 2)),
    formula: 'value = d · scales[s] · (q − 4), s = element ÷ 16, q = low 2 bits | hmask bit << 2',
    complete: true,
  }),
  Q4_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, 0)),
      scalar(t, 'dmin', f16(b, 2)),
      field('scales', 32, each(8, (i) => kScale(b, 4, i))),
      field('mins', 32, each(8, (i) => kMin(b, 4, i))),
    ],
    codes: each(t.blockSize, (v) => kNibble(b, 16, v)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 32',
    complete: true,
  }),
  Q5_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, 0)),
      scalar(t, 'dmin', f16(b, 2)),
      field('scales', 32, each(8, (i) => kScale(b, 4, i))),
      field('mins', 32, each(8, (i) => kMin(b, 4, i))),
      field('qh (fifth bit)', 1, each(t.blockSize, (v) => q5kHigh(b, v))),
    ],
    codes: each(t.blockSize, (v) => kNibble(b, 48, v) | (q5kHigh(b, v) << 4)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 32, q = nibble | fifth bit << 4',
    complete: true,
  }),
  Q6_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, 208)),
      field('scales', 16, each(16, (i) => i8(b[192 + i]!))),
      field('qh (high 2 bits)', 1, each(t.blockSize, (v) => q6kHigh(b, v))),
    ],
    codes: each(t.blockSize, (v) => q6kLow(b, v) | (q6kHigh(b, v) << 4)),
    formula: 'value = d · scales[s] · (q − 32), s = element ÷ 16, q = low 4 bits | high 2 bits << 4',
    complete: true,
  }),
  Q8_K: (b, t) => {
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return {
      fields: [scalar(t, 'd', view.getFloat32(0, true)), field('bsums', 16, each(16, (i) => view.getInt16(4 + t.blockSize + 2 * i, true)))],
      codes: each(t.blockSize, (v) => i8(b[4 + v]!)),
      formula: 'value = d · q (d is an f32; bsums, the sums of each 16 codes, serve dot products, not decoding)',
      complete: true,
    };
  },
  IQ4_NL: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, 0))],
    codes: each(t.blockSize, (v) => nibble32(b, 2, v)),
    formula: `value = d · T[q], ${IQ4_TABLE}`,
    complete: true,
  }),
  IQ4_XS: (b, t) => {
    const high = u16(b, 2);
    return {
      fields: [
        scalar(t, 'd', f16(b, 0)),
        field('scales', 32, each(8, (i) => (((b[4 + (i >> 1)]! >> (4 * (i & 1))) & 15) | (((high >> (2 * i)) & 3) << 4)) - 32)),
      ],
      codes: each(t.blockSize, (v) => nibble32(b, 8 + 16 * (v >> 5), v & 31)),
      formula: `value = d · scales[s] · T[q], s = element ÷ 32, ${IQ4_TABLE}`,
      complete: true,
    };
  },
  MXFP4: (b, t) => ({
    fields: [scalar(t, 'e (E8M0)', b[0]!), scalar(t, 'scale', 2 * e8m0ToF32Half(b[0]!))],
    codes: each(t.blockSize, (v) => nibble32(b, 1, v)),
    formula: `value = scale · E2M1[q], scale = 2^(e − 127), E2M1 = ${E2M1}`,
    complete: true,
  }),
  NVFP4: (b, t) => ({
    fields: [field('scales (UE4M3)', 16, each(4, (s) => ue4m3ToF32(b[s]!)))],
    codes: each(t.blockSize, (v) => {
      const x = b[4 + 8 * (v >> 4) + (v & 7)]!;
      return v & 8 ? x >> 4 : x & 15;
    }),
    formula: `value = scales[s] · E2M1[q], s = element ÷ 16, E2M1 = ${E2M1}`,
    complete: true,
  }),
  Q1_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, 0))],
    codes: each(t.blockSize, (v) => (b[2 + (v >> 3)]! >> (v & 7)) & 1),
    formula: 'value = +d where q = 1, −d where q = 0',
    complete: true,
  }),
  Q2_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, 0))],
    codes: each(t.blockSize, (v) => (b[2 + (v >> 2)]! >> (2 * (v & 3))) & 3),
    formula: 'value = (q − 1) · d',
    complete: true,
  }),
  TQ2_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, 64))],
    codes: each(t.blockSize, (v) => (b[32 * (v >> 7) + (v & 31)]! >> (2 * ((v >> 5) & 3))) & 3),
    formula: 'value = (q − 1) · d',
    complete: true,
  }),
  TQ1_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, 52))],
    codes: null,
    formula: 'value = (trit − 1) · d; the trits, packed five to a byte in base 3, are not broken out here',
    complete: false,
  }),
  IQ2_XXS: lattice((b, t) => [iqScales(t, 's', 32, (i) => u32(b, 2 + 8 * i + 4) >>> 28)], 'value = d · (0.5 + s) / 4 · signed grid value'),
  IQ2_XS: lattice((b, t) => [iqScales(t, 's', 16, (i) => (b[66 + (i >> 1)]! >> (4 * (i & 1))) & 15)], 'value = d · (0.5 + s) / 4 · signed grid value'),
  IQ2_S: lattice((b, t) => [iqScales(t, 's', 16, (i) => (b[74 + (i >> 1)]! >> (4 * (i & 1))) & 15)], 'value = d · (0.5 + s) / 4 · signed grid value'),
  IQ3_XXS: lattice((b, t) => [iqScales(t, 's', 32, (i) => u32(b, 66 + 4 * i) >>> 28)], 'value = d · (0.5 + s) / 2 · signed grid value'),
  IQ3_S: lattice((b, t) => [iqScales(t, 's', 32, (i) => (b[106 + (i >> 1)]! >> (4 * (i & 1))) & 15)], 'value = d · (1 + 2s) · signed grid value'),
  IQ1_S: lattice(
    (b, t) => [
      iqScales(t, 's', 32, (i) => (u16(b, 34 + 2 * i) >> 12) & 7),
      iqScales(t, 'delta sign', 32, (i) => u16(b, 34 + 2 * i) >> 15),
    ],
    'value = d · (2s + 1) · (grid value ± delta)',
  ),
  IQ1_M: lattice(
    (b, t) => [iqScales(t, 's', 16, (i) => (u16(b, 48 + 2 * (i >> 2)) >> (3 * (i & 3))) & 7)],
    'value = d · (2s + 1) · (grid value ± delta)',
    // d is split into the top nibbles of the four scale words.
    (b) => f16ToF32((b[49]! >> 4) | ((b[51]! >> 4) << 4) | ((b[53]! >> 4) << 8) | ((b[55]! >> 4) << 12)),
  ),
};

/** Bit widths of the plain float types. */
const FLOATS: Readonly<Record<string, { exponent: number; mantissa: number }>> = {
  F32: { exponent: 8, mantissa: 23 },
  F16: { exponent: 5, mantissa: 10 },
  BF16: { exponent: 8, mantissa: 7 },
};

/** Plain floats: each element's sign, biased exponent and mantissa; its code is its bit pattern. */
function floatFields(b: Uint8Array, type: GgmlType, widths: { exponent: number; mantissa: number }): BlockFields {
  const n = b.length / type.typeSize;
  const bits = each(n, (i) => {
    let x = 0;
    for (let k = type.typeSize - 1; k >= 0; k--) x = x * 256 + b[i * type.typeSize + k]!;
    return x;
  });
  const { exponent: e, mantissa: m } = widths;
  const bias = 2 ** (e - 1) - 1;
  return {
    fields: [
      field('sign', 1, bits.map((x) => Math.floor(x / 2 ** (e + m)))),
      field('exponent', 1, bits.map((x) => Math.floor(x / 2 ** m) % 2 ** e)),
      field('mantissa', 1, bits.map((x) => x % 2 ** m)),
    ],
    codes: bits,
    formula: `value = (−1)^sign · 2^(exponent − ${bias}) · (1 + mantissa / 2^${m}); exponent 0: subnormal, all ones: infinity or NaN`,
    complete: true,
  };
}

/**
 * The fields of one block of `type` (`bytes`: exactly its typeSize bytes). Plain float types
 * (F32, F16, BF16) take any whole number of elements.
 */
export function blockFields(type: GgmlType, bytes: Uint8Array): BlockFields {
  const float = FLOATS[type.name];
  if (float) {
    if (bytes.length % type.typeSize !== 0) throw new RangeError(`${type.name}: ${bytes.length} bytes are not whole elements of ${type.typeSize}`);
    return floatFields(bytes, type, float);
  }
  if (bytes.length !== type.typeSize) throw new RangeError(`${type.name}: a block is ${type.typeSize} bytes, got ${bytes.length}`);
  const describe = DESCRIBE[type.name];
  if (describe) return describe(bytes, type);
  return { fields: [], codes: null, formula: `Gufo does not break ${type.name} blocks into fields`, complete: false };
}
