/**
 * Block decoders in WebAssembly SIMD (AssemblyScript), bit-exact with llama.cpp's dequantize_row_*.
 * Compiled by `npm run build:wasm` into src-main/core/wasm/decoders.wasm.ts; the host side is
 * src-main/core/wasm/decoders.ts, which copies blocks into IN_AT, calls decode*(IN_AT, OUT_AT, blocks)
 * and copies the f32 values out of OUT_AT, a chunk at a time.
 *
 * Exactness is argued per type in the family files (src-main/core/quants/*-quants.ts): every product
 * of a small integer and an f16-derived scale is exact in f32, so f32x4 arithmetic lands on ggml's
 * values. Operands keep ggml's order (scale · q − min), so NaN payloads of corrupt blocks match too.
 */

// The memory layout, exported as globals for the host to read.

/** f16 → f32 bit patterns, 65536 × 4 bytes, filled by the host from half.ts (one place for the conversion). */
export const F16_AT: usize = 0x10000;
/** IQ4_NL's 16 non-linear values as int8, filled by the host from iq-tables.ts. */
export const IQ4NL_AT: usize = 0x50000;
/** Q4_K/Q5_K's per-group factors of the block being decoded (kFactors), 64 bytes. */
const K_FACTORS_AT: usize = 0x50010;
/** Whole blocks of one chunk. */
export const IN_AT: usize = 0x60000;
export const IN_BYTES: i32 = 0x10000;
/** The f32 values of one chunk. */
export const OUT_AT: usize = 0x70000;
export const OUT_VALUES: i32 = 0x8000;

@inline function f16At(p: usize): f32 {
  return load<f32>(F16_AT + ((<usize>load<u16>(p)) << 2));
}

/** 4 int32 lanes to f32, times `scale` (scale first: ggml's operand order). */
@inline function scaled(scale: v128, q: v128): v128 {
  return f32x4.mul(scale, f32x4.convert_i32x4_s(q));
}

/**
 * Swizzle masks: byte 4k + j of 16 to the low byte of int32 lane j (zero-extended: indices ≥ 16
 * give 0). One swizzle per 4 values instead of two extends.
 */
const LOW_0 = i8x16(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1);
const LOW_1 = i8x16(4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7, -1, -1, -1);
const LOW_2 = i8x16(8, -1, -1, -1, 9, -1, -1, -1, 10, -1, -1, -1, 11, -1, -1, -1);
const LOW_3 = i8x16(12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1);

/**
 * 16 signed bytes, each times `scale`, to 16 f32 at `y`, as (q · 2^24) · (scale · 2^-24): both
 * factors exact (scale is 0, ±inf, NaN or at least 2^-24 in magnitude, an f16 times an integer, so
 * scale · 2^-24 stays a normal f32), so the one rounding of the product is that of q · scale.
 * q · 2^24 (each byte to the top of its int32 lane, sign in place) by two rounds of interleaving
 * below zeros, shuffles V8 turns into one punpck each: 6 for 16 values, faster than 4 swizzles.
 */
@inline function put16(y: usize, scale: v128, q: v128): void {
  const s = f32x4.mul(scale, f32x4.splat(5.9604644775390625e-8));
  const zero = i32x4.splat(0);
  const lo = i8x16.shuffle(zero, q, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const hi = i8x16.shuffle(zero, q, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128.store(y, scaled(s, i8x16.shuffle(zero, lo, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23)));
  v128.store(y, scaled(s, i8x16.shuffle(zero, lo, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31)), 16);
  v128.store(y, scaled(s, i8x16.shuffle(zero, hi, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23)), 32);
  v128.store(y, scaled(s, i8x16.shuffle(zero, hi, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31)), 48);
}

/** 16 unsigned bytes, each times `scale` minus `min`, to 16 f32 at `y` (ggml: scale · q − min). */
@inline function put16min(y: usize, scale: v128, min: v128, q: v128): void {
  v128.store(y, f32x4.sub(scaled(scale, i8x16.swizzle(q, LOW_0)), min));
  v128.store(y, f32x4.sub(scaled(scale, i8x16.swizzle(q, LOW_1)), min), 16);
  v128.store(y, f32x4.sub(scaled(scale, i8x16.swizzle(q, LOW_2)), min), 32);
  v128.store(y, f32x4.sub(scaled(scale, i8x16.swizzle(q, LOW_3)), min), 48);
}

/** Q8_0, 34 bytes per 32 values: f16 d, int8 qs[32]; value = q · d. */
export function decodeQ8_0(x: usize, y: usize, blocks: i32): void {
  for (let b = 0; b < blocks; b++, x += 34, y += 128) {
    const d = f32x4.splat(f16At(x));
    put16(y, d, v128.load(x, 2));
    put16(y + 64, d, v128.load(x, 18));
  }
}

/** Q4_0, 18 bytes per 32 values: f16 d, qs[16]; byte j holds values j (low nibble) and j + 16; value = (nibble − 8) · d. */
export function decodeQ4_0(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  const eight = i8x16.splat(8);
  for (let b = 0; b < blocks; b++, x += 18, y += 128) {
    const d = f32x4.splat(f16At(x));
    const q = v128.load(x, 2);
    put16(y, d, i8x16.sub(v128.and(q, low), eight));
    put16(y + 64, d, i8x16.sub(i8x16.shr_u(q, 4), eight));
  }
}

@inline function byte(p: usize): i32 {
  return <i32>load<u8>(p);
}

/** Byte picks of the 12 scale bytes: bytes 0..7 take the low 6 or 4 bits of a scale, 8..15 of a min. */
const K_LOW_BYTES = i8x16(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11);
const K_LOW_MASK = i8x16(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0);
const K_NIBBLE_MASK = i8x16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
/** Sub-blocks 4..7 take their top 2 bits from the top 2 bits of scale bytes 0..3 (scales) and 4..7 (mins). */
const K_TOP_BYTES = i8x16(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7);

/**
 * The 6-bit scales of Q4_K/Q5_K's 8 sub-blocks in bytes 0..7 and their mins in bytes 8..15, from
 * the 12 scale bytes at the start of `s` (k-quants.ts kScale, kMin: sub-block i < 4 has scale
 * s[i] & 63 and min s[i + 4] & 63; i ≥ 4 has scale s[i + 4] & 15 | (s[i − 4] >> 6) << 4 and min
 * s[i + 4] >> 4 | (s[i] >> 6) << 4), all 16 at once instead of a branch each.
 */
@inline function kScalesMins(s: v128): v128 {
  const picked = i8x16.swizzle(s, K_LOW_BYTES);
  const low = v128.or(v128.and(picked, K_LOW_MASK), v128.and(i8x16.shr_u(picked, 4), K_NIBBLE_MASK));
  return v128.or(low, i8x16.shl(i8x16.shr_u(i8x16.swizzle(s, K_TOP_BYTES), 6), 4));
}

/**
 * A Q4_K/Q5_K block's d·scale and dmin·min of all 8 sub-blocks (products exact, as ggml's scalar
 * ones), to K_FACTORS_AT as the kGroup factors of its 4 groups, 16 bytes each. The one head both
 * decoders share: going through memory costs 4 stores and loads per 256 values, nothing measurable.
 */
@inline function kFactors(x: usize): void {
  const sm = kScalesMins(v128.load(x, 4));
  const d = f32x4.splat(f16At(x));
  const min = f32x4.splat(f16At(x + 2));
  const ds0 = scaled(d, i8x16.swizzle(sm, LOW_0));
  const ds1 = scaled(d, i8x16.swizzle(sm, LOW_1));
  const ms0 = scaled(min, i8x16.swizzle(sm, LOW_2));
  const ms1 = scaled(min, i8x16.swizzle(sm, LOW_3));
  v128.store(K_FACTORS_AT, i32x4.shuffle(ds0, ms0, 0, 1, 4, 5));
  v128.store(K_FACTORS_AT, i32x4.shuffle(ds0, ms0, 2, 3, 6, 7), 16);
  v128.store(K_FACTORS_AT, i32x4.shuffle(ds1, ms1, 0, 1, 4, 5), 32);
  v128.store(K_FACTORS_AT, i32x4.shuffle(ds1, ms1, 2, 3, 6, 7), 48);
}

/**
 * A Q4_K/Q5_K block's 64-value groups, each from 32 qs bytes with low nibbles in sub-block 2j and
 * high nibbles in 2j + 1. `f` holds [d·scale of 2j, of 2j + 1, dmin·min of 2j, of 2j + 1]; `lo`
 * and `hi` are the 32 bytes' 4- or 5-bit values of the two sub-blocks, in two halves of 16.
 */
@inline function kGroup(y: usize, f: v128, lo0: v128, lo1: v128, hi0: v128, hi1: v128): void {
  const d1 = i32x4.shuffle(f, f, 0, 0, 0, 0);
  const d2 = i32x4.shuffle(f, f, 1, 1, 1, 1);
  const m1 = i32x4.shuffle(f, f, 2, 2, 2, 2);
  const m2 = i32x4.shuffle(f, f, 3, 3, 3, 3);
  put16min(y, d1, m1, lo0);
  put16min(y + 64, d1, m1, lo1);
  put16min(y + 128, d2, m2, hi0);
  put16min(y + 192, d2, m2, hi1);
}

/**
 * Q4_K, 144 bytes per 256 values: f16 d, f16 dmin, scales[12], qs[128]; per 64 values 32 qs bytes,
 * low nibbles sub-block 2j, high nibbles 2j + 1; value = d·scale · q − dmin·min.
 */
export function decodeQ4_K(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  for (let b = 0; b < blocks; b++, x += 144, y += 1024) {
    kFactors(x);
    kGroup4(y, x + 16, v128.load(K_FACTORS_AT), low);
    kGroup4(y + 256, x + 48, v128.load(K_FACTORS_AT, 16), low);
    kGroup4(y + 512, x + 80, v128.load(K_FACTORS_AT, 32), low);
    kGroup4(y + 768, x + 112, v128.load(K_FACTORS_AT, 48), low);
  }
}

/**
 * Q4_K's 64 values of the 32 qs bytes at q (kGroup). High nibbles by a 16-bit shift and the mask
 * already in a register: V8 emulates i8x16.shr_u with a shift and a mask it rebuilds each time.
 */
@inline function kGroup4(y: usize, q: usize, f: v128, low: v128): void {
  const a = v128.load(q);
  const c = v128.load(q, 16);
  kGroup(y, f, v128.and(a, low), v128.and(c, low), v128.and(i16x8.shr_u(a, 4), low), v128.and(i16x8.shr_u(c, 4), low));
}

/** Q5_K, 176 bytes per 256 values: Q4_K's fields plus qh[32] before qs; bit 2j of qh[l] is the fifth bit of sub-block 2j, bit 2j + 1 of 2j + 1. */
export function decodeQ5_K(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  const fifth = i8x16.splat(16);
  for (let b = 0; b < blocks; b++, x += 176, y += 1024) {
    kFactors(x);
    // The fifth bits of group j sit in bits 2j (low nibbles) and 2j + 1 (high nibbles) of qh,
    // moved to bit 4 (value 16) by 16-bit shifts: the bits crossing into the next byte are masked off.
    const ha = v128.load(x, 16);
    const hc = v128.load(x, 32);
    kGroup5(y, x + 48, v128.load(K_FACTORS_AT), i16x8.shl(ha, 4), i16x8.shl(hc, 4), i16x8.shl(ha, 3), i16x8.shl(hc, 3), low, fifth);
    kGroup5(y + 256, x + 80, v128.load(K_FACTORS_AT, 16), i16x8.shl(ha, 2), i16x8.shl(hc, 2), i16x8.shl(ha, 1), i16x8.shl(hc, 1), low, fifth);
    kGroup5(y + 512, x + 112, v128.load(K_FACTORS_AT, 32), ha, hc, i16x8.shr_u(ha, 1), i16x8.shr_u(hc, 1), low, fifth);
    kGroup5(y + 768, x + 144, v128.load(K_FACTORS_AT, 48), i16x8.shr_u(ha, 2), i16x8.shr_u(hc, 2), i16x8.shr_u(ha, 3), i16x8.shr_u(hc, 3), low, fifth);
  }
}

/** Q5_K's 64 values of the 32 qs bytes at q; the fifth bits are bit 4 of la, lc (low nibbles) and ha, hc (high) (kGroup). */
@inline function kGroup5(y: usize, q: usize, f: v128, la: v128, lc: v128, ha: v128, hc: v128, low: v128, fifth: v128): void {
  const a = v128.load(q);
  const c = v128.load(q, 16);
  kGroup(y, f,
    v128.or(v128.and(a, low), v128.and(la, fifth)),
    v128.or(v128.and(c, low), v128.and(lc, fifth)),
    v128.or(v128.and(i16x8.shr_u(a, 4), low), v128.and(ha, fifth)),
    v128.or(v128.and(i16x8.shr_u(c, 4), low), v128.and(hc, fifth)));
}

/**
 * Q6_K, 210 bytes per 256 values: ql[128], qh[64], int8 scales[16], f16 d. Per 128 values, byte l
 * of ql[64] and qh[32] gives values l and l + 64, byte l + 32 of ql gives l + 32 and l + 96 (see
 * k-quants.ts); value = d·scale · (q − 32), one scale per 16 values.
 */
export function decodeQ6_K(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  const top = i8x16.splat(48);
  const bias = i8x16.splat(32);
  for (let b = 0; b < blocks; b++, x += 210) {
    const d = f16At(x + 208);
    for (let n = 0; n < 2; n++, y += 512) {
      for (let half = 0; half < 2; half++) {
        const sc = x + 192 + 8 * n + half;
        const ql = x + 64 * n + 16 * half;
        const a = v128.load(ql);
        const c = v128.load(ql, 32);
        const h = v128.load(x + 128 + 32 * n + 16 * half);
        const z = y + 64 * half;
        put16(z, f32x4.splat(d * <f32>load<i8>(sc)), i8x16.sub(v128.or(v128.and(a, low), v128.and(i8x16.shl(h, 4), top)), bias));
        put16(z + 128, f32x4.splat(d * <f32>load<i8>(sc, 2)), i8x16.sub(v128.or(v128.and(c, low), v128.and(i8x16.shl(h, 2), top)), bias));
        put16(z + 256, f32x4.splat(d * <f32>load<i8>(sc, 4)), i8x16.sub(v128.or(i8x16.shr_u(a, 4), v128.and(h, top)), bias));
        put16(z + 384, f32x4.splat(d * <f32>load<i8>(sc, 6)), i8x16.sub(v128.or(i8x16.shr_u(c, 4), v128.and(i8x16.shr_u(h, 2), top)), bias));
      }
    }
  }
}

/**
 * IQ4_XS, 136 bytes per 256 values: f16 d, u16 scales_h, scales_l[4], qs[128]; per 32 values a
 * 6-bit scale ls and 16 qs bytes of two indices into IQ4_NL's table (low nibbles first);
 * value = d·(ls − 32) · table[index].
 */
export function decodeIQ4_XS(x: usize, y: usize, blocks: i32): void {
  const table = v128.load(IQ4NL_AT);
  const low = i8x16.splat(15);
  for (let b = 0; b < blocks; b++, x += 136) {
    const d = f16At(x);
    const sh = <i32>load<u16>(x, 2);
    for (let ib = 0; ib < 8; ib++, y += 128) {
      const ls = ((byte(x + 4 + (ib >> 1)) >> (4 * (ib & 1))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
      const dl = f32x4.splat(d * <f32>(ls - 32));
      const q = v128.load(x + 8 + 16 * ib);
      put16(y, dl, i8x16.swizzle(table, v128.and(q, low)));
      put16(y + 64, dl, i8x16.swizzle(table, i8x16.shr_u(q, 4)));
    }
  }
}

/** 16 unsigned bytes, each times `scale` plus `min`, to 16 f32 at `y` (ggml: q · d + m). */
@inline function put16plus(y: usize, scale: v128, min: v128, q: v128): void {
  v128.store(y, f32x4.add(scaled(scale, i8x16.swizzle(q, LOW_0)), min));
  v128.store(y, f32x4.add(scaled(scale, i8x16.swizzle(q, LOW_1)), min), 16);
  v128.store(y, f32x4.add(scaled(scale, i8x16.swizzle(q, LOW_2)), min), 32);
  v128.store(y, f32x4.add(scaled(scale, i8x16.swizzle(q, LOW_3)), min), 48);
}

/** Which byte of a 32-bit qh word holds the fifth bit of each value: bytes 0, 1 for values 0..15. */
const QH_LOW_BYTES = i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
const QH_HIGH_BYTES = i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
const BIT_OF_LANE = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);

/** 16 in the lanes whose bit is set in `bytes` (byte k/8, bit k%8 for lane k), else 0. */
@inline function fifthBits(bytes: v128): v128 {
  return v128.and(i8x16.eq(v128.and(bytes, BIT_OF_LANE), BIT_OF_LANE), i8x16.splat(16));
}

/** Q4_1, 20 bytes per 32 values: f16 d, f16 m, qs[16] as Q4_0's; value = nibble · d + m. */
export function decodeQ4_1(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  for (let b = 0; b < blocks; b++, x += 20, y += 128) {
    const d = f32x4.splat(f16At(x));
    const m = f32x4.splat(f16At(x + 2));
    const q = v128.load(x, 4);
    put16plus(y, d, m, v128.and(q, low));
    put16plus(y + 64, d, m, i8x16.shr_u(q, 4));
  }
}

/** Q5_0, 22 bytes per 32 values: f16 d, u32 qh (bit j: fifth bit of value j), qs[16]; value = (q − 16) · d. */
export function decodeQ5_0(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  const bias = i8x16.splat(16);
  for (let b = 0; b < blocks; b++, x += 22, y += 128) {
    const d = f32x4.splat(f16At(x));
    const qh = i32x4.splat(load<i32>(x, 2));
    const q = v128.load(x, 6);
    put16(y, d, i8x16.sub(v128.or(v128.and(q, low), fifthBits(i8x16.swizzle(qh, QH_LOW_BYTES))), bias));
    put16(y + 64, d, i8x16.sub(v128.or(i8x16.shr_u(q, 4), fifthBits(i8x16.swizzle(qh, QH_HIGH_BYTES))), bias));
  }
}

/** Q5_1, 24 bytes per 32 values: f16 d, f16 m, u32 qh, qs[16]; value = q · d + m. */
export function decodeQ5_1(x: usize, y: usize, blocks: i32): void {
  const low = i8x16.splat(15);
  for (let b = 0; b < blocks; b++, x += 24, y += 128) {
    const d = f32x4.splat(f16At(x));
    const m = f32x4.splat(f16At(x + 2));
    const qh = i32x4.splat(load<i32>(x, 4));
    const q = v128.load(x, 8);
    put16plus(y, d, m, v128.or(v128.and(q, low), fifthBits(i8x16.swizzle(qh, QH_LOW_BYTES))));
    put16plus(y + 64, d, m, v128.or(i8x16.shr_u(q, 4), fifthBits(i8x16.swizzle(qh, QH_HIGH_BYTES))));
  }
}

/** IQ4_NL, 18 bytes per 32 values: f16 d, qs[16] of two indices into the non-linear table; value = d · table[index]. */
export function decodeIQ4_NL(x: usize, y: usize, blocks: i32): void {
  const table = v128.load(IQ4NL_AT);
  const low = i8x16.splat(15);
  for (let b = 0; b < blocks; b++, x += 18, y += 128) {
    const d = f32x4.splat(f16At(x));
    const q = v128.load(x, 2);
    put16(y, d, i8x16.swizzle(table, v128.and(q, low)));
    put16(y + 64, d, i8x16.swizzle(table, i8x16.shr_u(q, 4)));
  }
}

/**
 * Q2_K, 84 bytes per 256 values: scales[16] (low nibble scale, high nibble min), qs[64], f16 d,
 * f16 dmin. Per 128 values 32 qs bytes; their 2-bit field s is values 32s..32s + 31, scale byte
 * 8n + 2s for the first 16, 8n + 2s + 1 for the next; value = d·scale · q − dmin·min.
 */
export function decodeQ2_K(x: usize, y: usize, blocks: i32): void {
  const three = i8x16.splat(3);
  for (let b = 0; b < blocks; b++, x += 84) {
    const d = f16At(x + 80);
    const min = f16At(x + 82);
    for (let n = 0; n < 2; n++) {
      const a = v128.load(x + 16 + 32 * n);
      const c = v128.load(x + 16 + 32 * n, 16);
      for (let s = 0; s < 4; s++, y += 128) {
        const s0 = byte(x + 8 * n + 2 * s);
        const s1 = byte(x + 8 * n + 2 * s + 1);
        put16min(y, f32x4.splat(d * <f32>(s0 & 15)), f32x4.splat(min * <f32>(s0 >> 4)), v128.and(i8x16.shr_u(a, 2 * s), three));
        put16min(y + 64, f32x4.splat(d * <f32>(s1 & 15)), f32x4.splat(min * <f32>(s1 >> 4)), v128.and(i8x16.shr_u(c, 2 * s), three));
      }
    }
  }
}

/** Q3_K's 6-bit scale k (0..15), unbiased (k-quants.ts q3kScale). */
@inline function q3kScale(s: usize, k: i32): i32 {
  const lo = k < 8 ? byte(s + k) & 15 : byte(s + k - 8) >> 4;
  const hi = (byte(s + 8 + (k & 3)) >> (2 * (k >> 2))) & 3;
  return (lo | (hi << 4)) - 32;
}

/**
 * Q3_K, 110 bytes per 256 values: hmask[32], qs[64], scales[12], f16 d. The low 2 bits as Q2_K's;
 * the third bit of field s in the 128-value half n is bit 4n + s of hmask[l] (clear: subtract 4);
 * value = d·scale · q.
 */
export function decodeQ3_K(x: usize, y: usize, blocks: i32): void {
  const three = i8x16.splat(3);
  const four = i8x16.splat(4);
  const zero = i8x16.splat(0);
  for (let b = 0; b < blocks; b++, x += 110) {
    const d = f16At(x + 108);
    const ha = v128.load(x);
    const hc = v128.load(x, 16);
    for (let n = 0; n < 2; n++) {
      const a = v128.load(x + 32 + 32 * n);
      const c = v128.load(x + 32 + 32 * n, 16);
      for (let s = 0; s < 4; s++, y += 128) {
        const mask: i32 = 1 << (4 * n + s);
        const bit = i8x16.splat(<i8>mask);
        const qa = i8x16.sub(v128.and(i8x16.shr_u(a, 2 * s), three), v128.and(i8x16.eq(v128.and(ha, bit), zero), four));
        const qc = i8x16.sub(v128.and(i8x16.shr_u(c, 2 * s), three), v128.and(i8x16.eq(v128.and(hc, bit), zero), four));
        put16(y, f32x4.splat(d * <f32>q3kScale(x + 96, 8 * n + 2 * s)), qa);
        put16(y + 64, f32x4.splat(d * <f32>q3kScale(x + 96, 8 * n + 2 * s + 1)), qc);
      }
    }
  }
}

/**
 * Q8_K, 292 bytes per 256 values: f32 d, int8 qs[256], int16 bsums[16] (not needed); value = d · q.
 * d is any f32, so d · 2^-24 could underflow: the int8 values are sign-extended instead of put16's trick.
 */
export function decodeQ8_K(x: usize, y: usize, blocks: i32): void {
  for (let b = 0; b < blocks; b++, x += 292) {
    const d = f32x4.splat(load<f32>(x));
    for (let j = 0; j < 256; j += 16, y += 64) {
      const q = v128.load(x + 4 + j);
      const lo = i16x8.extend_low_i8x16_s(q);
      const hi = i16x8.extend_high_i8x16_s(q);
      v128.store(y, scaled(d, i32x4.extend_low_i16x8_s(lo)));
      v128.store(y, scaled(d, i32x4.extend_high_i16x8_s(lo)), 16);
      v128.store(y, scaled(d, i32x4.extend_low_i16x8_s(hi)), 32);
      v128.store(y, scaled(d, i32x4.extend_high_i16x8_s(hi)), 48);
    }
  }
}

/**
 * BF16, 2 bytes per value: its 16 bits on top of the f32's (ggml_bf16_to_fp32; NaNs kept as they
 * are). Each half of 8 words is interleaved below zeros: a shuffle V8 turns into one punpck.
 */
export function decodeBF16(x: usize, y: usize, n: i32): void {
  const zero = i32x4.splat(0);
  let i = 0;
  for (; i + 8 <= n; i += 8, x += 16, y += 32) {
    const h = v128.load(x);
    v128.store(y, i8x16.shuffle(zero, h, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23));
    v128.store(y, i8x16.shuffle(zero, h, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31), 16);
  }
  for (; i < n; i++, x += 2, y += 4) store<u32>(y, (<u32>load<u16>(x)) << 16);
}

/**
 * 4 f16 (zero-extended in int32 lanes) to f32 as ggml_fp16_to_fp32: the 15 magnitude bits moved
 * to the f32's exponent and mantissa fields and scaled by 2^112 (exact, subnormals included: the
 * product is the f32 of exponent + 112, or mant · 2^-24 for a subnormal half); exponent 31 gives
 * ±inf, or a NaN made quiet with its payload kept; the sign on top.
 */
@inline function f16x4(h: v128): v128 {
  const magnitude = v128.and(h, i32x4.splat(0x7fff));
  const moved = i32x4.shl(magnitude, 13);
  const finite = f32x4.mul(moved, f32x4.splat(5.192296858534828e33));
  const special = v128.or(v128.or(moved, i32x4.splat(0x7f800000)), v128.and(i32x4.gt_s(magnitude, i32x4.splat(0x7c00)), i32x4.splat(0x400000)));
  const value = v128.bitselect(special, finite, i32x4.ge_s(magnitude, i32x4.splat(0x7c00)));
  return v128.or(value, i32x4.shl(v128.xor(h, magnitude), 16));
}

/** F16, 2 bytes per value (ggml_fp16_to_fp32, f16x4); the last n mod 8 through the host's table. */
export function decodeF16(x: usize, y: usize, n: i32): void {
  let i = 0;
  for (; i + 8 <= n; i += 8, x += 16, y += 32) {
    const h = v128.load(x);
    v128.store(y, f16x4(i32x4.extend_low_i16x8_u(h)));
    v128.store(y, f16x4(i32x4.extend_high_i16x8_u(h)), 16);
  }
  for (; i < n; i++, x += 2, y += 4) store<u32>(y, load<u32>(F16_AT + ((<usize>load<u16>(x)) << 2)));
}
