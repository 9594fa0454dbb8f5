/**
 * What one block of a tensor holds, field by field: its scales (d, dmin, sub-block scales and
 * mins unpacked from their 4- and 6-bit fields), its extra bit planes (Q5's fifth bits, Q3_K's
 * hmask, Q6_K's high bits) and one code per element, with the formula that turns them into
 * values. The values themselves come from the bit-exact decoders (decoders.ts); this module only
 * names what the decoders read, so the inspector can show why a value is what it is.
 * Platform-free.
 *
 * Element counts and the byte offsets of fields inside a block come from the type table's block
 * layouts (ggml-types.ts), the same the decoders read.
 */
import { blockOffsets, type GgmlType, type GgmlTypeName } from '../ggml-types';
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
const u32 = (b: Uint8Array, o: number): number =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const f16 = (b: Uint8Array, o: number): number => f16ToF32(u16(b, o));
const i8 = (x: number): number => (x << 24) >> 24;
const each = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const field = (name: string, span: number, values: number[]): BlockField => ({ name, span, values });
/** The f16 field `name` of a block of type t, where t's layout puts it. */
const fieldF16 =
  (name: string) =>
  (b: Uint8Array, t: GgmlType): number =>
    f16(b, t.layout.find((f) => f.name === name)!.offset);
/** A block scale: one value for the whole block. */
const scalar = (type: GgmlType, name: string, value: number): BlockField => field(name, type.blockSize, [value]);

/** The 32-value nibble layout (Q4_0, Q4_1, Q5_*, IQ4_NL, MXFP4): byte j holds element j (low) and j + 16 (high). */
const nibble32 = (b: Uint8Array, qs: number, v: number): number => (v < 16 ? b[qs + v]! & 15 : b[qs + v - 16]! >> 4);
/** Bit v of the little-endian u32 at `o` (Q5_0/Q5_1's fifth bits). */
const bit32 = (b: Uint8Array, o: number, v: number): number => (u32(b, o) >>> v) & 1;

/** E2M1 values, sign in bit 3: half of FP4_DOUBLED, as written in the formulas. */
const E2M1 = '±{0, 0.5, 1, 1.5, 2, 3, 4, 6} (bit 3 of q is the sign)';
const IQ4_TABLE = `T = [${Array.from(IQ4NL_VALUES).join(', ')}]`;

function legacy(offsets: { d: number; m?: number; qh?: number; qs: number }, formula: string): Describe {
  return (b, t) => {
    const fields = [scalar(t, 'd', f16(b, offsets.d))];
    if (offsets.m !== undefined) fields.push(scalar(t, 'm', f16(b, offsets.m)));
    const qh = offsets.qh;
    if (qh !== undefined)
      fields.push(
        field(
          'qh (fifth bit)',
          1,
          each(t.blockSize, (v) => bit32(b, qh, v)),
        ),
      );
    const codes = each(t.blockSize, (v) => nibble32(b, offsets.qs, v) | (qh === undefined ? 0 : bit32(b, qh, v) << 4));
    return { fields, codes, formula, complete: true };
  };
}

/** Q2_K/Q3_K's 2-bit layout: element v is bits 2·((v ÷ 32) mod 4) of qs[32·(v ÷ 128) + v mod 32]. */
const twoBits = (b: Uint8Array, qs: number, v: number): number =>
  (b[qs + 32 * (v >> 7) + (v & 31)]! >> (2 * ((v >> 5) & 3))) & 3;
/** Q4_K/Q5_K's nibble layout: per 64 elements 32 bytes, low nibbles first. */
const kNibble = (b: Uint8Array, qs: number, v: number): number => {
  const x = b[qs + 32 * (v >> 6) + (v & 31)]!;
  return v & 32 ? x >> 4 : x & 15;
};
const Q2K = blockOffsets('Q2_K');
const Q3K = blockOffsets('Q3_K');
const Q4K = blockOffsets('Q4_K');
const Q5K = blockOffsets('Q5_K');
const Q6K = blockOffsets('Q6_K');
const Q8K = blockOffsets('Q8_K');
/** Q5_K's fifth bit of element v: bit 2·(v ÷ 64) + (v ÷ 32 mod 2) of qh[v mod 32]. */
const q5kHigh = (b: Uint8Array, v: number): number => (b[Q5K.qh + (v & 31)]! >> (2 * (v >> 6) + ((v >> 5) & 1))) & 1;
/** Q3_K's hmask bit of element v: bit 4·(v ÷ 128) + (v ÷ 32 mod 4) of hmask[v mod 32]. */
const q3kHigh = (b: Uint8Array, v: number): number => (b[Q3K.hmask + (v & 31)]! >> (4 * (v >> 7) + ((v >> 5) & 3))) & 1;
/** Q6_K's element v: low 4 bits from ql, high 2 bits from qh (see decodeQ6_K). */
const q6kLow = (b: Uint8Array, v: number): number => {
  const quarter = (v >> 5) & 3;
  const x = b[Q6K.ql + 64 * (v >> 7) + (v & 31) + 32 * (quarter & 1)]!;
  return quarter >= 2 ? x >> 4 : x & 15;
};
const q6kHigh = (b: Uint8Array, v: number): number =>
  (b[Q6K.qh + 32 * (v >> 7) + (v & 31)]! >> (2 * ((v >> 5) & 3))) & 3;

/** Sub-block scale fields of the IQ types: `s` codes, each for `span` elements. */
function iqScales(t: GgmlType, name: string, span: number, s: (i: number) => number): BlockField {
  return field(name, span, each(t.blockSize / span, s));
}

const IQ2XXS = blockOffsets('IQ2_XXS');
const IQ2XS = blockOffsets('IQ2_XS');
const IQ2S = blockOffsets('IQ2_S');
const IQ3XXS = blockOffsets('IQ3_XXS');
const IQ3S = blockOffsets('IQ3_S');
const IQ1S = blockOffsets('IQ1_S');
const IQ1M = blockOffsets('IQ1_M');
const IQ4NL = blockOffsets('IQ4_NL');
const IQ4XS = blockOffsets('IQ4_XS');
const MXFP4 = blockOffsets('MXFP4');
const NVFP4 = blockOffsets('NVFP4');
const Q1 = blockOffsets('Q1_0');
const Q2 = blockOffsets('Q2_0');
const TQ1 = blockOffsets('TQ1_0');
const TQ2 = blockOffsets('TQ2_0');

/** The IQ types whose values come from lattice codebooks: d and sub-block scales only. */
function lattice(
  extra: (b: Uint8Array, t: GgmlType) => BlockField[],
  formula: string,
  d: (b: Uint8Array, t: GgmlType) => number = fieldF16('d'),
): Describe {
  return (b, t) => ({
    fields: [scalar(t, 'd', d(b, t)), ...extra(b, t)],
    codes: null,
    formula: `${formula}; grid indices and signs are not broken out here`,
    complete: false,
  });
}

/** Types whose blocks are not broken into fields: plain floats (FLOATS below), integers, Q8_1. */
type Undescribed = 'F32' | 'F16' | 'BF16' | 'F64' | 'I8' | 'I16' | 'I32' | 'I64' | 'Q8_1';

const Q8_0 = blockOffsets('Q8_0');

const DESCRIBE: Readonly<Record<Exclude<GgmlTypeName, Undescribed>, Describe>> = {
  Q4_0: legacy(blockOffsets('Q4_0'), 'value = (q − 8) · d'),
  Q4_1: legacy(blockOffsets('Q4_1'), 'value = q · d + m'),
  Q5_0: legacy(blockOffsets('Q5_0'), 'value = (q − 16) · d, q = nibble | fifth bit << 4'),
  Q5_1: legacy(blockOffsets('Q5_1'), 'value = q · d + m, q = nibble | fifth bit << 4'),
  Q8_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, Q8_0.d))],
    codes: each(t.blockSize, (v) => i8(b[Q8_0.qs + v]!)),
    formula: 'value = q · d',
    complete: true,
  }),
  Q2_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, Q2K.d)),
      scalar(t, 'dmin', f16(b, Q2K.dmin)),
      field(
        'scales',
        16,
        each(16, (i) => b[Q2K.scales + i]! & 15),
      ),
      field(
        'mins',
        16,
        each(16, (i) => b[Q2K.scales + i]! >> 4),
      ),
    ],
    codes: each(t.blockSize, (v) => twoBits(b, Q2K.qs, v)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 16',
    complete: true,
  }),
  Q3_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, Q3K.d)),
      field(
        'scales',
        16,
        each(16, (k) => q3kScale(b, Q3K.scales, k)),
      ),
      field(
        'hmask (third bit)',
        1,
        each(t.blockSize, (v) => q3kHigh(b, v)),
      ),
    ],
    codes: each(t.blockSize, (v) => twoBits(b, Q3K.qs, v) | (q3kHigh(b, v) << 2)),
    formula: 'value = d · scales[s] · (q − 4), s = element ÷ 16, q = low 2 bits | hmask bit << 2',
    complete: true,
  }),
  Q4_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, Q4K.d)),
      scalar(t, 'dmin', f16(b, Q4K.dmin)),
      field(
        'scales',
        32,
        each(8, (i) => kScale(b, Q4K.scales, i)),
      ),
      field(
        'mins',
        32,
        each(8, (i) => kMin(b, Q4K.scales, i)),
      ),
    ],
    codes: each(t.blockSize, (v) => kNibble(b, Q4K.qs, v)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 32',
    complete: true,
  }),
  Q5_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, Q5K.d)),
      scalar(t, 'dmin', f16(b, Q5K.dmin)),
      field(
        'scales',
        32,
        each(8, (i) => kScale(b, Q5K.scales, i)),
      ),
      field(
        'mins',
        32,
        each(8, (i) => kMin(b, Q5K.scales, i)),
      ),
      field(
        'qh (fifth bit)',
        1,
        each(t.blockSize, (v) => q5kHigh(b, v)),
      ),
    ],
    codes: each(t.blockSize, (v) => kNibble(b, Q5K.qs, v) | (q5kHigh(b, v) << 4)),
    formula: 'value = d · scales[s] · q − dmin · mins[s], s = element ÷ 32, q = nibble | fifth bit << 4',
    complete: true,
  }),
  Q6_K: (b, t) => ({
    fields: [
      scalar(t, 'd', f16(b, Q6K.d)),
      field(
        'scales',
        16,
        each(16, (i) => i8(b[Q6K.scales + i]!)),
      ),
      field(
        'qh (high 2 bits)',
        1,
        each(t.blockSize, (v) => q6kHigh(b, v)),
      ),
    ],
    codes: each(t.blockSize, (v) => q6kLow(b, v) | (q6kHigh(b, v) << 4)),
    formula: 'value = d · scales[s] · (q − 32), s = element ÷ 16, q = low 4 bits | high 2 bits << 4',
    complete: true,
  }),
  Q8_K: (b, t) => {
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return {
      fields: [
        scalar(t, 'd', view.getFloat32(Q8K.d, true)),
        field(
          'bsums',
          16,
          each(16, (i) => view.getInt16(Q8K.bsums + 2 * i, true)),
        ),
      ],
      codes: each(t.blockSize, (v) => i8(b[Q8K.qs + v]!)),
      formula: 'value = d · q (d is an f32; bsums, the sums of each 16 codes, serve dot products, not decoding)',
      complete: true,
    };
  },
  IQ4_NL: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, IQ4NL.d))],
    codes: each(t.blockSize, (v) => nibble32(b, IQ4NL.qs, v)),
    formula: `value = d · T[q], ${IQ4_TABLE}`,
    complete: true,
  }),
  IQ4_XS: (b, t) => {
    const high = u16(b, IQ4XS.scales_h);
    return {
      fields: [
        scalar(t, 'd', f16(b, IQ4XS.d)),
        field(
          'scales',
          32,
          each(
            8,
            (i) => (((b[IQ4XS.scales_l + (i >> 1)]! >> (4 * (i & 1))) & 15) | (((high >> (2 * i)) & 3) << 4)) - 32,
          ),
        ),
      ],
      codes: each(t.blockSize, (v) => nibble32(b, IQ4XS.qs + 16 * (v >> 5), v & 31)),
      formula: `value = d · scales[s] · T[q], s = element ÷ 32, ${IQ4_TABLE}`,
      complete: true,
    };
  },
  MXFP4: (b, t) => ({
    fields: [scalar(t, 'e (E8M0)', b[MXFP4.e]!), scalar(t, 'scale', 2 * e8m0ToF32Half(b[MXFP4.e]!))],
    codes: each(t.blockSize, (v) => nibble32(b, MXFP4.qs, v)),
    formula: `value = scale · E2M1[q], scale = 2^(e − 127), E2M1 = ${E2M1}`,
    complete: true,
  }),
  NVFP4: (b, t) => ({
    fields: [
      field(
        'scales (UE4M3)',
        16,
        each(4, (s) => ue4m3ToF32(b[NVFP4.d + s]!)),
      ),
    ],
    codes: each(t.blockSize, (v) => {
      const x = b[NVFP4.qs + 8 * (v >> 4) + (v & 7)]!;
      return v & 8 ? x >> 4 : x & 15;
    }),
    formula: `value = scales[s] · E2M1[q], s = element ÷ 16, E2M1 = ${E2M1}`,
    complete: true,
  }),
  Q1_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, Q1.d))],
    codes: each(t.blockSize, (v) => (b[Q1.qs + (v >> 3)]! >> (v & 7)) & 1),
    formula: 'value = +d where q = 1, −d where q = 0',
    complete: true,
  }),
  Q2_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, Q2.d))],
    codes: each(t.blockSize, (v) => (b[Q2.qs + (v >> 2)]! >> (2 * (v & 3))) & 3),
    formula: 'value = (q − 1) · d',
    complete: true,
  }),
  TQ2_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, TQ2.d))],
    codes: each(t.blockSize, (v) => twoBits(b, TQ2.qs, v)),
    formula: 'value = (q − 1) · d',
    complete: true,
  }),
  TQ1_0: (b, t) => ({
    fields: [scalar(t, 'd', f16(b, TQ1.d))],
    codes: null,
    formula: 'value = (trit − 1) · d; the trits, packed five to a byte in base 3, are not broken out here',
    complete: false,
  }),
  IQ2_XXS: lattice(
    (b, t) => [iqScales(t, 's', 32, (i) => u32(b, IQ2XXS.qs + 8 * i + 4) >>> 28)],
    'value = d · (0.5 + s) / 4 · signed grid value',
  ),
  IQ2_XS: lattice(
    (b, t) => [iqScales(t, 's', 16, (i) => (b[IQ2XS.scales + (i >> 1)]! >> (4 * (i & 1))) & 15)],
    'value = d · (0.5 + s) / 4 · signed grid value',
  ),
  IQ2_S: lattice(
    (b, t) => [iqScales(t, 's', 16, (i) => (b[IQ2S.scales + (i >> 1)]! >> (4 * (i & 1))) & 15)],
    'value = d · (0.5 + s) / 4 · signed grid value',
  ),
  IQ3_XXS: lattice(
    (b, t) => [iqScales(t, 's', 32, (i) => u32(b, IQ3XXS.signs_scales + 4 * i) >>> 28)],
    'value = d · (0.5 + s) / 2 · signed grid value',
  ),
  IQ3_S: lattice(
    (b, t) => [iqScales(t, 's', 32, (i) => (b[IQ3S.scales + (i >> 1)]! >> (4 * (i & 1))) & 15)],
    'value = d · (1 + 2s) · signed grid value',
  ),
  IQ1_S: lattice(
    (b, t) => [
      iqScales(t, 's', 32, (i) => (u16(b, IQ1S.qh + 2 * i) >> 12) & 7),
      iqScales(t, 'delta sign', 32, (i) => u16(b, IQ1S.qh + 2 * i) >> 15),
    ],
    'value = d · (2s + 1) · (grid value ± delta)',
  ),
  IQ1_M: lattice(
    (b, t) => [iqScales(t, 's', 16, (i) => (u16(b, IQ1M.scales + 2 * (i >> 2)) >> (3 * (i & 3))) & 7)],
    'value = d · (2s + 1) · (grid value ± delta)',
    // d is split into the top nibbles of the four scale words.
    (b) =>
      f16ToF32(each(4, (k) => u16(b, IQ1M.scales + 2 * k) >> 12).reduce((d, nibble, k) => d | (nibble << (4 * k)), 0)),
  ),
};

/** Bit widths of the plain float types. */
const FLOATS: Readonly<Partial<Record<GgmlTypeName, { exponent: number; mantissa: number }>>> = {
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
      field(
        'sign',
        1,
        bits.map((x) => Math.floor(x / 2 ** (e + m))),
      ),
      field(
        'exponent',
        1,
        bits.map((x) => Math.floor(x / 2 ** m) % 2 ** e),
      ),
      field(
        'mantissa',
        1,
        bits.map((x) => x % 2 ** m),
      ),
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
    if (bytes.length % type.typeSize !== 0)
      throw new RangeError(`${type.name}: ${bytes.length} bytes are not whole elements of ${type.typeSize}`);
    return floatFields(bytes, type, float);
  }
  if (bytes.length !== type.typeSize)
    throw new RangeError(`${type.name}: a block is ${type.typeSize} bytes, got ${bytes.length}`);
  const describe = (DESCRIBE as Readonly<Partial<Record<GgmlTypeName, Describe>>>)[type.name];
  if (describe) return describe(bytes, type);
  return { fields: [], codes: null, formula: `Gufo does not break ${type.name} blocks into fields`, complete: false };
}
