/**
 * Decoders for the "i-quant" types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
 * IQ4_NL, IQ4_XS), bit-exact with llama.cpp's dequantize_row_* (proved element by element in
 * test/core/quants/iq-quants.test.ts). Platform-free. IQ4_NL and IQ4_XS run in WebAssembly SIMD
 * (assembly/decoders.ts: a table lookup per nibble is one i8x16.swizzle); the lattice types here.
 *
 * Exactness: in every type the f32 arithmetic llama.cpp does is exact. Scales are an f16 (11
 * significant bits) times a small odd or half-odd integer, and grid values are small integers,
 * so no product needs more than 24 significant bits. The double arithmetic here therefore
 * lands on the same values; the store into the Float32Array is the only (no-op) rounding. Signs
 * are folded into the grids (scale · (−g) is exactly −(scale · g), signed zeros included); only
 * blocks with a NaN scale need the separate fix-up in fixNanSigns to match llama.cpp's NaN bits.
 *
 * Blocks are read byte by byte (src may sit at any byteOffset), tables are typed arrays built
 * once (the signed grids on first use), and nothing is allocated per block. The small put*
 * helpers are there for the JIT to inline; module-level tables read inside them proved faster
 * than tables passed in.
 */
import { blockOffsets, ggmlTypes } from '../ggml-types';
import { checkSpan, type BlockDecoder } from './codec';
import { f16BitsTable, f16Table } from './half';
import { wasmBlockDecoder } from '../wasm/decoders';
import {
  IQ1_DELTA,
  IQ1S_GRID,
  IQ2_SIGNS,
  IQ2S_GRID,
  IQ2XS_GRID,
  IQ2XXS_GRID,
  IQ3S_GRID,
  IQ3XXS_GRID,
} from './iq-tables';

const QK = 256;
const [IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_NL, IQ4_XS] = ggmlTypes(
  'IQ2_XXS',
  'IQ2_XS',
  'IQ2_S',
  'IQ3_XXS',
  'IQ3_S',
  'IQ1_S',
  'IQ1_M',
  'IQ4_NL',
  'IQ4_XS',
);
const IQ2_XS_AT = blockOffsets('IQ2_XS');
const IQ2_S_AT = blockOffsets('IQ2_S');
const IQ3_XXS_AT = blockOffsets('IQ3_XXS');
const IQ3_S_AT = blockOffsets('IQ3_S');
const IQ1_S_AT = blockOffsets('IQ1_S');
const IQ1_M_AT = blockOffsets('IQ1_M');
const IQ2_XXS_D = blockOffsets('IQ2_XXS').d;

/**
 * A grid with its signs folded in: for every 4 consecutive grid values (a whole IQ3 entry, half
 * an IQ2 entry) all 16 sign combinations, so one 4-bit slice of a sign byte picks a row directly.
 * Row (q, n) with q the 4-value slice and n the sign nibble (bit j set: value j negated) starts at
 * (q·16 + n)·4. For an IQ2 entry e (8 values) the halves are slices 2e and 2e+1. Negating the
 * grid value instead of the product gives the same f32 (and the same signed zeros) as llama.cpp,
 * except for NaN scales, which fixNanSigns handles. Built on first use: 64 KiB to 512 KiB each.
 */
function signedGrid(grid: Float32Array): Float32Array {
  const slices = grid.length / 4;
  const out = new Float32Array(slices * 64);
  for (let q = 0; q < slices; q++) {
    for (let n = 0; n < 16; n++) {
      for (let j = 0; j < 4; j++) out[q * 64 + n * 4 + j] = (n >> j) & 1 ? -grid[q * 4 + j]! : grid[q * 4 + j]!;
    }
  }
  return out;
}

let iq2xxsSigned: Float32Array | undefined;
let iq2xsSigned: Float32Array | undefined;
let iq2sSigned: Float32Array | undefined;
let iq3xxsSigned: Float32Array | undefined;
let iq3sSigned: Float32Array | undefined;

/**
 * IQ1 grid plus delta (entries 0..2047, delta sign bit clear) then grid minus delta (entries
 * 2048..4095, sign bit set), 8 values per entry; both exact in f32, as llama.cpp's grid + delta.
 */
function plusMinusDelta(grid: Float32Array): Float32Array {
  const table = new Float32Array(2 * grid.length);
  for (let i = 0; i < grid.length; i++) {
    table[i] = grid[i]! + IQ1_DELTA;
    table[grid.length + i] = grid[i]! - IQ1_DELTA;
  }
  return table;
}
let iq1PlusMinus: Float32Array | undefined;
/** Offset of the minus-delta half of plusMinusDelta(), in entries (×8 values). */
const IQ1_MINUS = 2048;

/** dst[y..y+8) = dl · t[g..g+8), t the IQ1 grid ± delta. Small enough for the JIT to inline. */
function put8iq1(dst: Float32Array, y: number, dl: number, t: Float32Array, g: number): void {
  dst[y] = dl * t[g]!;
  dst[y + 1] = dl * t[g + 1]!;
  dst[y + 2] = dl * t[g + 2]!;
  dst[y + 3] = dl * t[g + 3]!;
  dst[y + 4] = dl * t[g + 4]!;
  dst[y + 5] = dl * t[g + 5]!;
  dst[y + 6] = dl * t[g + 6]!;
  dst[y + 7] = dl * t[g + 7]!;
}

/** dst[y..y+4) = db · t[i..i+4), dst[y+4..y+8) = db · t[j..j+4). */
function put4x2(dst: Float32Array, y: number, db: number, t: Float32Array, i: number, j: number): void {
  dst[y] = db * t[i]!;
  dst[y + 1] = db * t[i + 1]!;
  dst[y + 2] = db * t[i + 2]!;
  dst[y + 3] = db * t[i + 3]!;
  dst[y + 4] = db * t[j]!;
  dst[y + 5] = db * t[j + 1]!;
  dst[y + 6] = db * t[j + 2]!;
  dst[y + 7] = db * t[j + 3]!;
}

const nanScratchBytes = new Uint8Array(110); // the largest block that uses signs (IQ3_S)
const nanScratchValues = new Float32Array(QK);

/**
 * A block whose d is NaN decodes to NaN everywhere. In llama.cpp's build the negated values of
 * such a block come out with the NaN's sign bit flipped (as if `x * -1.f` were compiled to a sign
 * flip), where our product with a negated grid value keeps d's sign. This rewrites such a block (already decoded at dst[y..y+256)) the way
 * llama.cpp has it: d's f32 NaN bits, sign flipped where the value is negated. Which values are
 * negated is read off a second decode of the block with d = 1 (all grid values are positive).
 * Only runs for NaN scales, so its allocation (a view) never touches ordinary data.
 */
function fixNanSigns(
  decode: BlockDecoder,
  src: Uint8Array,
  o: number,
  typeSize: number,
  dAt: number,
  dhalf: number,
  dst: Float32Array,
  y: number,
): void {
  const block = nanScratchBytes.subarray(0, typeSize);
  block.set(src.subarray(o, o + typeSize));
  block[dAt] = 0x00;
  block[dAt + 1] = 0x3c;
  decode(block, nanScratchValues, 1);
  const nan = f16BitsTable()[dhalf]!;
  const bits = new Uint32Array(dst.buffer, dst.byteOffset + 4 * y, QK);
  for (let j = 0; j < QK; j++) bits[j] = (nan ^ (nanScratchValues[j]! < 0 ? 0x80000000 : 0)) >>> 0;
}

/**
 * IQ2_XXS, 66 bytes per 256 values: f16 d; per 32 values 4 grid indices (bytes, 8 values each)
 * then a u32 of four 7-bit sign indices and a 4-bit scale s (top bits): d·(0.5+s)/4.
 */
export const decodeIQ2_XXS: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ2_XXS, src, dst, blocks);
  const ts = IQ2_XXS.typeSize;
  const half = f16Table(),
    t = (iq2xxsSigned ??= signedGrid(IQ2XXS_GRID.values)),
    signs = IQ2_SIGNS;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const dh = src[o + IQ2_XXS_D]! | (src[o + IQ2_XXS_D + 1]! << 8);
    const d = half[dh]!;
    for (let q = o + IQ2_XXS_D + 2, end = o + ts; q < end; q += 8) {
      const aux = (src[q + 4]! | (src[q + 5]! << 8) | (src[q + 6]! << 16) | (src[q + 7]! << 24)) >>> 0;
      const db = d * (0.5 + (aux >>> 28)) * 0.25;
      for (let l = 0; l < 4; l++, y += 8) {
        const s = signs[(aux >>> (7 * l)) & 127]!;
        const g = src[q + l]! << 7;
        put4x2(dst, y, db, t, g | ((s & 15) << 2), g | 64 | ((s >> 4) << 2));
      }
    }
    if (d !== d) fixNanSigns(decodeIQ2_XXS, src, o, ts, IQ2_XXS_D, dh, dst, y - QK);
  }
};

/**
 * IQ2_XS, 74 bytes per 256 values: f16 d; 32 u16 (9-bit grid index, 7-bit sign index); 8 scale
 * bytes, a 4-bit scale s per 16 values: d·(0.5+s)/4.
 */
export const decodeIQ2_XS: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ2_XS, src, dst, blocks);
  const ts = IQ2_XS.typeSize;
  const half = f16Table(),
    t = (iq2xsSigned ??= signedGrid(IQ2XS_GRID.values)),
    signs = IQ2_SIGNS;
  const { d: D, qs: QS, scales: SC } = IQ2_XS_AT;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const d = half[dh]!;
    for (let ib = 0, q = o + QS; ib < 8; ib++) {
      const sc = src[o + SC + ib]!;
      const db0 = d * (0.5 + (sc & 15)) * 0.25;
      const db1 = d * (0.5 + (sc >> 4)) * 0.25;
      for (let l = 0; l < 4; l++, q += 2, y += 8) {
        const v = src[q]! | (src[q + 1]! << 8);
        const s = signs[v >> 9]!;
        const g = (v & 511) << 7;
        put4x2(dst, y, l < 2 ? db0 : db1, t, g | ((s & 15) << 2), g | 64 | ((s >> 4) << 2));
      }
    }
    if (d !== d) fixNanSigns(decodeIQ2_XS, src, o, ts, D, dh, dst, y - QK);
  }
};

/**
 * IQ2_S, 82 bytes per 256 values: f16 d; 32 low grid-index bytes; 32 sign bytes (one per 8
 * values); 8 bytes of high index bits (2 per 8 values); 8 scale bytes as IQ2_XS.
 */
export const decodeIQ2_S: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ2_S, src, dst, blocks);
  const ts = IQ2_S.typeSize;
  const half = f16Table(),
    t = (iq2sSigned ??= signedGrid(IQ2S_GRID.values));
  const { d: D, qs: QS, signs: SG, qh: QH, scales: SC } = IQ2_S_AT;
  const signsAfter = SG - QS; // sign byte of grid index byte q: q + signsAfter
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const d = half[dh]!;
    for (let ib = 0, q = o + QS; ib < 8; ib++) {
      const sc = src[o + SC + ib]!;
      const qh = src[o + QH + ib]!;
      const db0 = d * (0.5 + (sc & 15)) * 0.25;
      const db1 = d * (0.5 + (sc >> 4)) * 0.25;
      for (let l = 0; l < 4; l++, q++, y += 8) {
        const s = src[q + signsAfter]!;
        const g = (src[q]! | (((qh >> (2 * l)) & 3) << 8)) << 7;
        put4x2(dst, y, l < 2 ? db0 : db1, t, g | ((s & 15) << 2), g | 64 | ((s >> 4) << 2));
      }
    }
    if (d !== d) fixNanSigns(decodeIQ2_S, src, o, ts, D, dh, dst, y - QK);
  }
};

/**
 * IQ3_XXS, 98 bytes per 256 values: f16 d; 64 grid-index bytes (4 values each); 8 u32 of four
 * 7-bit sign indices and a 4-bit scale s (top bits): d·(0.5+s)/2.
 */
export const decodeIQ3_XXS: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ3_XXS, src, dst, blocks);
  const ts = IQ3_XXS.typeSize;
  const half = f16Table(),
    t = (iq3xxsSigned ??= signedGrid(IQ3XXS_GRID.values)),
    signs = IQ2_SIGNS;
  const { d: D, qs: QS, signs_scales: SS } = IQ3_XXS_AT;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const d = half[dh]!;
    for (let ib = 0, q = o + QS, a = o + SS; ib < 8; ib++, a += 4) {
      const aux = (src[a]! | (src[a + 1]! << 8) | (src[a + 2]! << 16) | (src[a + 3]! << 24)) >>> 0;
      const db = d * (0.5 + (aux >>> 28)) * 0.5;
      for (let l = 0; l < 4; l++, q += 2, y += 8) {
        const s = signs[(aux >>> (7 * l)) & 127]!;
        put4x2(dst, y, db, t, (src[q]! << 6) | ((s & 15) << 2), (src[q + 1]! << 6) | ((s >> 4) << 2));
      }
    }
    if (d !== d) fixNanSigns(decodeIQ3_XXS, src, o, ts, D, dh, dst, y - QK);
  }
};

/**
 * IQ3_S, 110 bytes per 256 values: f16 d; 64 low grid-index bytes (4 values each); 8 bytes of
 * ninth index bits (one per index); 32 sign bytes (one per 8 values); 4 scale bytes, a 4-bit
 * scale s per 32 values: d·(1+2s).
 */
export const decodeIQ3_S: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ3_S, src, dst, blocks);
  const ts = IQ3_S.typeSize;
  const half = f16Table(),
    t = (iq3sSigned ??= signedGrid(IQ3S_GRID.values));
  const { d: D, qs: QS, qh: QH, signs: SG, scales: SC } = IQ3_S_AT;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const d = half[dh]!;
    for (let ib = 0, q = o + QS, sq = o + SG; ib < 8; ib++) {
      const db = d * (1 + 2 * ((src[o + SC + (ib >> 1)]! >> (4 * (ib & 1))) & 15));
      const qh = src[o + QH + ib]!;
      for (let l = 0; l < 4; l++, q += 2, sq++, y += 8) {
        const s = src[sq]!;
        const g1 = (src[q]! | (((qh >> (2 * l)) & 1) << 8)) << 6;
        const g2 = (src[q + 1]! | (((qh >> (2 * l + 1)) & 1) << 8)) << 6;
        put4x2(dst, y, db, t, g1 | ((s & 15) << 2), g2 | ((s >> 4) << 2));
      }
    }
    if (d !== d) fixNanSigns(decodeIQ3_S, src, o, ts, D, dh, dst, y - QK);
  }
};

/**
 * IQ1_S, 50 bytes per 256 values: f16 d; 32 low grid-index bytes (8 values each); 8 u16, per 32
 * values: three high index bits per 8 values, a 3-bit scale s at bit 12 (d·(2s+1)) and the
 * delta's sign at bit 15. Each value is scale·(grid ± delta).
 */
export const decodeIQ1_S: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ1_S, src, dst, blocks);
  const t = (iq1PlusMinus ??= plusMinusDelta(IQ1S_GRID.values));
  const ts = IQ1_S.typeSize;
  const half = f16Table();
  const { d: D, qs: QS, qh: QH } = IQ1_S_AT;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const d = half[src[o + D]! | (src[o + D + 1]! << 8)]!;
    for (let ib = 0, q = o + QS, h = o + QH; ib < 8; ib++, q += 4, h += 2, y += 32) {
      const qh = src[h]! | (src[h + 1]! << 8);
      const dl = d * (2 * ((qh >> 12) & 7) + 1);
      const base = (qh >> 15) * IQ1_MINUS; // qh is 16 bits: bit 15 picks grid − delta
      put8iq1(dst, y, dl, t, (base + (src[q]! | ((qh & 7) << 8))) << 3);
      put8iq1(dst, y + 8, dl, t, (base + (src[q + 1]! | ((qh & 0x38) << 5))) << 3);
      put8iq1(dst, y + 16, dl, t, (base + (src[q + 2]! | ((qh & 0x1c0) << 2))) << 3);
      put8iq1(dst, y + 24, dl, t, (base + (src[q + 3]! | ((qh & 0xe00) >> 1))) << 3);
    }
  }
};

/**
 * IQ1_M, 56 bytes per 256 values: 32 low grid-index bytes (8 values each); 16 bytes of nibbles,
 * one per 8 values (three high index bits, delta sign at bit 3); 4 u16 whose low 12 bits hold
 * four 3-bit scales s (one per 16 values, d·(2s+1)) and whose top nibbles make the f16 d.
 */
export const decodeIQ1_M: BlockDecoder = (src, dst, blocks) => {
  checkSpan(IQ1_M, src, dst, blocks);
  const t = (iq1PlusMinus ??= plusMinusDelta(IQ1S_GRID.values));
  const ts = IQ1_M.typeSize;
  const half = f16Table();
  const { qs: QS, qh: QH, scales: SC } = IQ1_M_AT;
  for (let i = 0, o = 0, y = 0; i < blocks; i++, o += ts) {
    const s = o + SC;
    const d =
      half[(src[s + 1]! >> 4) | ((src[s + 3]! >> 4) << 4) | ((src[s + 5]! >> 4) << 8) | ((src[s + 7]! >> 4) << 12)]!;
    for (let ib = 0, q = o + QS, h = o + QH; ib < 8; ib++, q += 4, h += 2, y += 32) {
      const sc = (src[s + 2 * (ib >> 1)]! | (src[s + 1 + 2 * (ib >> 1)]! << 8)) >> (6 * (ib & 1));
      const dl1 = d * (2 * (sc & 7) + 1);
      const dl2 = d * (2 * ((sc >> 3) & 7) + 1);
      // Per 8 values a nibble: bits 0..2 the high index bits, bit 3 picks grid − delta.
      const h0 = src[h]!,
        h1 = src[h + 1]!;
      put8iq1(dst, y, dl1, t, (src[q]! | ((h0 & 15) << 8)) << 3);
      put8iq1(dst, y + 8, dl1, t, (src[q + 1]! | ((h0 & 0xf0) << 4)) << 3);
      put8iq1(dst, y + 16, dl2, t, (src[q + 2]! | ((h1 & 15) << 8)) << 3);
      put8iq1(dst, y + 24, dl2, t, (src[q + 3]! | ((h1 & 0xf0) << 4)) << 3);
    }
  }
};

/**
 * IQ4_NL, 18 bytes per 32 values: f16 d; 16 bytes of two 4-bit indices into the non-linear
 * table (low nibbles: values 0..15, high nibbles: 16..31).
 */
export const decodeIQ4_NL: BlockDecoder = wasmBlockDecoder(IQ4_NL, 'decodeIQ4_NL');

/**
 * IQ4_XS, 136 bytes per 256 values: f16 d; u16 of high scale bits (2 per 32 values); 4 bytes of
 * low scale nibbles; 128 bytes of 4-bit indices, laid out per 32 values as IQ4_NL. The 6-bit
 * scale ls gives d·(ls−32).
 */
export const decodeIQ4_XS: BlockDecoder = wasmBlockDecoder(IQ4_XS, 'decodeIQ4_XS');
