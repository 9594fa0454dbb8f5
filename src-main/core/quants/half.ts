/**
 * Small float formats to f32, exactly as ggml converts them: IEEE half (f16), bfloat16, the E8M0
 * power-of-two scale of MXFP4 and the unsigned E4M3 scale of NVFP4. Platform-free.
 *
 * f16 goes through a 65536-entry table built on first use. Entries are stored as bit patterns, so
 * NaN payloads survive when copied through the Uint32Array view (ggml quiets f16 NaNs: the f32 quiet
 * bit is set and the 10 payload bits move to the top of the f32 mantissa).
 */

let f16Bits: Uint32Array | undefined;
let f16BitsI32: Int32Array | undefined;
let f16Floats: Float32Array | undefined;

/** The exact f32 bit pattern of f16 `h` (0..65535), as ggml_fp16_to_fp32 produces it. */
export function f16BitsToF32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  let mant = h & 0x3ff;
  if (exp === 0x1f) return (sign | 0x7f800000 | (mant === 0 ? 0 : 0x00400000 | (mant << 13))) >>> 0;
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  if (mant === 0) return sign >>> 0;
  // Subnormal half: normalize. Value = mant × 2^-24.
  let e = 113; // biased f32 exponent of 2^-14, shifted down as the mantissa is normalized
  while ((mant & 0x400) === 0) {
    mant <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((mant & 0x3ff) << 13)) >>> 0;
}

function buildF16(): void {
  const bits = new Uint32Array(65536);
  for (let h = 0; h < 65536; h++) bits[h] = f16BitsToF32Bits(h);
  f16Bits = bits;
  f16BitsI32 = new Int32Array(bits.buffer);
  f16Floats = new Float32Array(bits.buffer);
}

/** f16 → f32 as bit patterns (index by the f16 bits). Copy through a Uint32Array to keep NaN payloads. */
export function f16BitsTable(): Uint32Array {
  if (!f16Bits) buildF16();
  return f16Bits!;
}

/**
 * The same bit patterns as signed 32-bit integers: faster in loops that write through an
 * Int32Array view (V8 keeps them as small integers instead of boxing values ≥ 2^31).
 */
export function f16BitsTableI32(): Int32Array {
  if (!f16BitsI32) buildF16();
  return f16BitsI32!;
}

/** f16 → f32 values (index by the f16 bits). */
export function f16Table(): Float32Array {
  if (!f16Floats) buildF16();
  return f16Floats!;
}

/** One f16 (given as its 16 bits) as a number. */
export function f16ToF32(h: number): number {
  return f16Table()[h & 0xffff]!;
}

/** The f32 bit pattern of bfloat16 `b`: its 16 bits on top, zeros below (NaNs kept as they are). */
export function bf16BitsToF32Bits(b: number): number {
  return ((b & 0xffff) << 16) >>> 0;
}

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** One bfloat16 (given as its 16 bits) as a number. */
export function bf16ToF32(b: number): number {
  scratchBits[0] = bf16BitsToF32Bits(b);
  return scratch[0]!;
}

/**
 * E8M0 scale byte → 2^(e-127) / 2, i.e. 2^(e-128): what ggml multiplies MXFP4's doubled value table
 * by. e = 0 and 1 give the f32 subnormals 2^-128 and 2^-127; e = 255 gives 2^127 (not NaN).
 */
export function e8m0ToF32Half(e: number): number {
  return 2 ** ((e & 0xff) - 128);
}

let ue4m3: Float32Array | undefined;

/**
 * Unsigned E4M3 scale byte → f32, as NVFP4 reads it: 4 exponent bits (bias 7), 3 mantissa bits,
 * subnormals below exponent 1; 0x7F (the format's NaN) reads as 0. The top bit is ignored except
 * that 0xFF is not the NaN pattern and so reads as 480.
 */
export function ue4m3ToF32(s: number): number {
  return ue4m3Table()[s & 0xff]!;
}

export function ue4m3Table(): Float32Array {
  if (!ue4m3) {
    const t = new Float32Array(256);
    for (let s = 0; s < 256; s++) {
      if (s === 0x7f) continue;
      const exp = (s >>> 3) & 0xf;
      const man = s & 7;
      t[s] = exp === 0 ? man * 2 ** -9 : 2 ** (exp - 7) * (1 + man / 8);
    }
    ue4m3 = t;
  }
  return ue4m3;
}

/**
 * The FP4 (E2M1) values doubled, as ggml stores them for MXFP4 and NVFP4: index = 4-bit code,
 * sign in bit 3. Multiply by half the block scale.
 */
export const FP4_DOUBLED: Int8Array = Int8Array.of(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
