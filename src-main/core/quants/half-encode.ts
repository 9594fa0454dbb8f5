/**
 * f32 → IEEE half (f16) and f32 → bfloat16, bit for bit as ggml converts them on the CPU
 * (ggml_compute_fp32_to_fp16 / ggml_compute_fp32_to_bf16). Platform-free, integer arithmetic on
 * the f32 bit pattern, no tables.
 *
 * f16: round to nearest, ties to even; results past the largest half (65504) become ±Inf
 * (from 65520 up, which is where rounding would reach 65536); every NaN becomes the quiet
 * 0x7E00 with its sign kept (ggml drops the payload); f32 values below the half range become
 * half subnormals (or ±0), rounded the same way.
 *
 * bf16: round to nearest, ties to even (f32 subnormals are rounded, not flushed); NaNs keep their
 * top 16 bits and are made quiet (bit 6 set), as ggml does.
 */

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** The f32 bit pattern of `x` (rounded to f32 first if it is not one already). */
export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0]!;
}

/** f16 bits (0..65535) of the f32 whose bit pattern is `w`. */
export function f32BitsToF16Bits(w: number): number {
  const sign = (w >>> 16) & 0x8000;
  const a = w & 0x7fffffff;
  if (a >= 0x38800000) {
    // |x| ≥ 2^-14: a normal half, or too large, Inf or NaN.
    if (a >= 0x477ff000) return sign | (a > 0x7f800000 ? 0x7e00 : 0x7c00);
    // Re-bias the exponent (127 → 15) and round the 23-bit mantissa to 10 bits, ties to even;
    // a carry out of the mantissa correctly bumps the exponent.
    return sign | (((a + 0x0fff + ((a >>> 13) & 1)) >>> 13) - 0x1c000);
  }
  // |x| < 2^-14: a half subnormal, value = round(|x| · 2^24) units of 2^-24.
  const e = a >>> 23;
  if (e < 102) return sign; // below 2^-25: rounds to zero (2^-25 itself ties to the even zero)
  const m = (a & 0x7fffff) | 0x800000; // |x| = m · 2^(e - 150)
  const shift = 126 - e; // 14..24
  let q = m >>> shift;
  const rem = m & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  if (rem > half || (rem === half && (q & 1) !== 0)) q++;
  return sign | q;
}

/** f16 bits of `x` (taken as f32). */
export function f32ToF16Bits(x: number): number {
  scratchF32[0] = x;
  return f32BitsToF16Bits(scratchU32[0]!);
}

/** bfloat16 bits (0..65535) of the f32 whose bit pattern is `w`. */
export function f32BitsToBF16Bits(w: number): number {
  w |= 0;
  if ((w & 0x7fffffff) > 0x7f800000) return (w >>> 16) | 64;
  // Add just under half of the dropped part (plus one when the kept part is odd: ties to even)
  // and drop it; a carry into the exponent is the correct rounding. In int32 this cannot
  // overflow: the largest finite magnitudes stay below 0x7f808000.
  return ((w + 0x7fff + ((w >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bfloat16 bits of `x` (taken as f32). */
export function f32ToBF16Bits(x: number): number {
  scratchF32[0] = x;
  return f32BitsToBF16Bits(scratchU32[0]!);
}

/** Stores `x` as a little-endian f16 at dst[o]; returns the f16 bits written. */
export function writeF16(dst: Uint8Array, o: number, x: number): number {
  const h = f32ToF16Bits(x);
  dst[o] = h & 0xff;
  dst[o + 1] = h >>> 8;
  return h;
}
