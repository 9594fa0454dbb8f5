/**
 * Block encoders in WebAssembly SIMD (AssemblyScript), byte for byte as llama.cpp's reference
 * quantizers (quantize_row_q8_0_ref, quantize_row_q4_1_ref, ggml_fp32_to_bf16_row_ref), which
 * ggml_quantize_chunk runs for these types without an importance matrix. Compiled by `npm run build:wasm` into
 * src-main/core/wasm/encoders.wasm.ts; the host side is src-main/core/wasm/encoders.ts, which copies
 * a chunk of f32 values into X_AT, calls encode*(X_AT, Y_AT, blocks) and copies the blocks out.
 *
 * f32x4 arithmetic rounds as ggml's scalar C does (one f32 rounding per operation, in its order).
 * Where C's result depends on the order it visits a block (a NaN in Q8_0's running max, which zero
 * of ±0 becomes Q4_1's min or max), the block's head is redone in that order.
 */

/** One chunk's f32 values, and its blocks. */
export const X_AT: usize = 0x10000;
export const X_VALUES: i32 = 0x4000;
export const Y_AT: usize = 0x20000;
export const Y_BYTES: i32 = 0x8000;

/** f16 bits of the f32 `x`, as ggml_compute_fp32_to_fp16 (src-main/core/quants/half-encode.ts f32BitsToF16Bits). */
@inline function f16Bits(x: f32): u16 {
  const w = reinterpret<u32>(x);
  const sign = (w >> 16) & 0x8000;
  const a = w & 0x7fffffff;
  if (a >= 0x38800000) {
    if (a >= 0x477ff000) return <u16>(sign | (a > 0x7f800000 ? 0x7e00 : 0x7c00));
    return <u16>(sign | (((a + 0x0fff + ((a >> 13) & 1)) >> 13) - 0x1c000));
  }
  const e = a >> 23;
  if (e < 102) return <u16>sign;
  const m = (a & 0x7fffff) | 0x800000;
  const shift = 126 - e;
  let q = m >> shift;
  const rem = m & ((1 << shift) - 1);
  const half: u32 = 1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1) != 0)) q++;
  return <u16>(sign | q);
}

/** Exports the f16 conversion for its test (test/core/wasm/encoders.test.ts). */
export function f32ToF16Bits(x: f32): i32 {
  return <i32>f16Bits(x);
}

@inline function laneMax(v: v128): f32 {
  const a = f32x4.pmax(v, i32x4.shuffle(v, v, 2, 3, 0, 1));
  return f32x4.extract_lane(f32x4.pmax(a, i32x4.shuffle(a, a, 1, 0, 3, 2)), 0);
}

@inline function laneMin(v: v128): f32 {
  const a = f32x4.pmin(v, i32x4.shuffle(v, v, 2, 3, 0, 1));
  return f32x4.extract_lane(f32x4.pmin(a, i32x4.shuffle(a, a, 1, 0, 3, 2)), 0);
}

/**
 * 4 f32 to int32 as C's (int) cast on x86-64 (cvttss2si): truncated, and 0x80000000 for NaN and
 * anything out of range, whose low byte (all the int8 callers keep) is 0.
 */
@inline function truncC(v: v128): v128 {
  return v128.and(i32x4.trunc_sat_f32x4_s(v), f32x4.lt(f32x4.abs(v), f32x4.splat(2147483648.0)));
}

/** The low bytes of 16 int32 lanes (a, b, c, d in order), as C's narrowing to (u)int8 keeps them. */
@inline function lowBytes(a: v128, b: v128, c: v128, d: v128): v128 {
  const byte = i32x4.splat(255);
  return i8x16.narrow_i16x8_u(
    i16x8.narrow_i32x4_u(v128.and(a, byte), v128.and(b, byte)),
    i16x8.narrow_i32x4_u(v128.and(c, byte), v128.and(d, byte)));
}

/** C's roundf (ties away from zero) of 4 f32: the truncation, plus ±1 where the dropped part is at least a half. */
@inline function roundAway(v: v128): v128 {
  const t = f32x4.trunc(v);
  const up = f32x4.ge(f32x4.abs(f32x4.sub(v, t)), f32x4.splat(0.5));
  return f32x4.add(t, v128.and(up, v128.or(v128.and(v, i32x4.splat(0x80000000)), f32x4.splat(1.0))));
}

/** Q8_0: amax = max |x| (C's MAX(amax, |x|) in order), d = amax / 127, q = roundf(x · (1 / d)). */
export function encodeQ8_0(x: usize, y: usize, blocks: i32): void {
  for (let b = 0; b < blocks; b++, x += 128, y += 34) {
    let m = f32x4.splat(0);
    let nan = i32x4.splat(0);
    for (let j = 0; j < 128; j += 16) {
      const a = f32x4.abs(v128.load(x + j));
      m = v128.bitselect(m, a, f32x4.gt(m, a)); // MAX(amax, a): a unless amax is greater (NaN a wins)
      nan = v128.or(nan, f32x4.ne(a, a));
    }
    let amax: f32 = 0;
    if (v128.any_true(nan)) {
      for (let j = 0; j < 32; j++) {
        const a = Mathf.abs(load<f32>(x + 4 * j));
        amax = amax > a ? amax : a;
      }
    } else {
      amax = laneMax(m);
    }
    const d = amax / 127;
    const id = f32x4.splat(d != 0 ? 1 / d : 0);
    store<u16>(y, f16Bits(d));
    for (let j = 0; j < 2; j++) {
      const p = x + 64 * j;
      v128.store(y + 2 + 16 * j, lowBytes(
        truncC(roundAway(f32x4.mul(v128.load(p), id))),
        truncC(roundAway(f32x4.mul(v128.load(p, 16), id))),
        truncC(roundAway(f32x4.mul(v128.load(p, 32), id))),
        truncC(roundAway(f32x4.mul(v128.load(p, 48), id)))));
    }
  }
}

/** The first ±0 of the block's 32 values (the one C's running min or max keeps when that is 0). */
@inline function firstZero(x: usize): f32 {
  for (let j = 0; j < 32; j++) {
    const v = load<f32>(x + 4 * j);
    if (v == 0) return v;
  }
  return 0;
}

/**
 * Q4_1: min and max (C's `if (v < min)`, `if (v > max)`: NaNs skipped), d = (max − min) / 15,
 * q = MIN(15, (int8_t)((x − min) · (1 / d) + 0.5)); value j and j + 16 share byte j.
 */
export function encodeQ4_1(x: usize, y: usize, blocks: i32): void {
  const fifteen = i32x4.splat(15);
  for (let b = 0; b < blocks; b++, x += 128, y += 20) {
    let lo = f32x4.splat(3.4028234663852886e38);
    let hi = f32x4.splat(-3.4028234663852886e38);
    for (let j = 0; j < 128; j += 16) {
      const v = v128.load(x + j);
      lo = f32x4.pmin(lo, v); // v < lo ? v : lo
      hi = f32x4.pmax(hi, v); // lo < v ? v : lo
    }
    let min = laneMin(lo);
    let max = laneMax(hi);
    if (min == 0) min = firstZero(x);
    if (max == 0) max = firstZero(x);
    const d: f32 = (max - min) / 15;
    const id = f32x4.splat(d != 0 ? 1 / d : 0);
    const m = f32x4.splat(min);
    const half = f32x4.splat(0.5);
    store<u16>(y, f16Bits(d));
    store<u16>(y, f16Bits(min), 2);
    const lowHalf = lowBytes(q4_1(x, m, id, half, fifteen), q4_1(x + 16, m, id, half, fifteen), q4_1(x + 32, m, id, half, fifteen), q4_1(x + 48, m, id, half, fifteen));
    const highHalf = lowBytes(q4_1(x + 64, m, id, half, fifteen), q4_1(x + 80, m, id, half, fifteen), q4_1(x + 96, m, id, half, fifteen), q4_1(x + 112, m, id, half, fifteen));
    // Codes are 0..15, so a 16-bit shift moves each byte's nibble up without crossing bytes.
    v128.store(y + 4, v128.or(lowHalf, i16x8.shl(highHalf, 4)));
  }
}

/** Q4_1's codes of the 4 values at p: MIN(15, (int8_t)((x − min) · id + 0.5)). */
@inline function q4_1(p: usize, min: v128, id: v128, half: v128, fifteen: v128): v128 {
  return i32x4.min_s(truncC(f32x4.add(f32x4.mul(f32x4.sub(v128.load(p), min), id), half)), fifteen);
}

/** bfloat16 bits of 4 f32 (src-main/core/quants/half-encode.ts f32BitsToBF16Bits), in the low halves of their lanes. */
@inline function bf16x4(w: v128): v128 {
  const nan = i32x4.gt_s(v128.and(w, i32x4.splat(0x7fffffff)), i32x4.splat(0x7f800000));
  const odd = v128.and(i32x4.shr_u(w, 16), i32x4.splat(1));
  const rounded = i32x4.shr_u(i32x4.add(i32x4.add(w, i32x4.splat(0x7fff)), odd), 16);
  return v128.bitselect(v128.or(i32x4.shr_u(w, 16), i32x4.splat(64)), rounded, nan);
}

/** BF16: round to nearest even, NaNs kept quiet with their top bits (ggml_compute_fp32_to_bf16). */
export function encodeBF16(x: usize, y: usize, n: i32): void {
  let i = 0;
  for (; i + 8 <= n; i += 8, x += 32, y += 16) {
    v128.store(y, i16x8.narrow_i32x4_u(bf16x4(v128.load(x)), bf16x4(v128.load(x, 16))));
  }
  for (; i < n; i++, x += 4, y += 2) store<u16>(y, <u16>i32x4.extract_lane(bf16x4(i32x4.splat(load<i32>(x))), 0));
}
