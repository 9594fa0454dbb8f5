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

/** The memory layout the host relies on (read by it through these exported globals). */
/** f16 → f32 bit patterns, 65536 × 4 bytes, filled by the host from half.ts (one place for the conversion). */
export const F16_AT: usize = 0x10000;
/** IQ4_NL's 16 non-linear values as int8, filled by the host from iq-tables.ts. */
export const IQ4NL_AT: usize = 0x50000;
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

/** 16 signed bytes, each times `scale`, to 16 f32 at `y`. */
@inline function put16(y: usize, scale: v128, q: v128): void {
  const lo = i16x8.extend_low_i8x16_s(q);
  const hi = i16x8.extend_high_i8x16_s(q);
  v128.store(y, scaled(scale, i32x4.extend_low_i16x8_s(lo)));
  v128.store(y, scaled(scale, i32x4.extend_high_i16x8_s(lo)), 16);
  v128.store(y, scaled(scale, i32x4.extend_low_i16x8_s(hi)), 32);
  v128.store(y, scaled(scale, i32x4.extend_high_i16x8_s(hi)), 48);
}

/** 16 signed bytes, each times `scale` minus `min`, to 16 f32 at `y`. */
@inline function put16min(y: usize, scale: v128, min: v128, q: v128): void {
  const lo = i16x8.extend_low_i8x16_s(q);
  const hi = i16x8.extend_high_i8x16_s(q);
  v128.store(y, f32x4.sub(scaled(scale, i32x4.extend_low_i16x8_s(lo)), min));
  v128.store(y, f32x4.sub(scaled(scale, i32x4.extend_high_i16x8_s(lo)), min), 16);
  v128.store(y, f32x4.sub(scaled(scale, i32x4.extend_low_i16x8_s(hi)), min), 32);
  v128.store(y, f32x4.sub(scaled(scale, i32x4.extend_high_i16x8_s(hi)), min), 48);
}

/** Q8_0, 34 bytes per 32 values: f16 d, int8 qs[32]; value = q · d. */
export function decodeQ8_0(x: usize, y: usize, blocks: i32): void {
  for (let b = 0; b < blocks; b++, x += 34, y += 128) {
    const d = f32x4.splat(f16At(x));
    put16(y, d, v128.load(x, 2));
    put16(y + 64, d, v128.load(x, 18));
  }
}
