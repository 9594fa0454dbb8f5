// Q3_K, repacked (weights.ts): main plane hmask[32], qs[64], scales[12] per block, at the words
// the block layout gives (W_HMASK, W_QS, W_SCALES, BLOCK_WORDS); scale plane f16 d per block.
// Unit u (values 32u..32u+31) is half n = u / 4, s = u % 4: value l of the unit has its low 2 bits
// at shift 2s of qs[32n + l] and its third bit at bit 4n + s of hmask[l] (q = low | bit << 2, minus 4),
// and the 6-bit scale k = 8n + 2s + (l >= 16) (low 4 bits: nibble k of scales[0..8), high 2 bits:
// bits 2(k / 4) of scales[8 + k % 4]), biased by 32: value = d · (scale - 32) · (q - 4).
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn q3k_scale_byte(b: u32, i: u32) -> u32 {
  return (W[b + {{W_SCALES}}u + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu;
}

fn q3k_scale(b: u32, k: u32) -> i32 {
  let lo = select(q3k_scale_byte(b, k) & 15u, q3k_scale_byte(b, k - 8u) >> 4u, k >= 8u);
  let hi = (q3k_scale_byte(b, 8u + (k & 3u)) >> (2u * (k >> 2u))) & 3u;
  return i32(lo | (hi << 4u)) - 32;
}

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let blk = row * P.blocks_per_row + (u >> 3u);
  let b = {{BLOCK_WORDS}}u * blk;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let n = sub >> 2u;
  let s = sub & 3u;
  for (var h = 0u; h < 2u; h++) {
    let dl = d * f32(q3k_scale(b, 8u * n + 2u * s + h));
    for (var i = 4u * h; i < 4u * h + 4u; i++) {
      let low = crumbs4(W[b + {{W_QS}}u + 8u * n + i], 2u * s);
      let high = (vec4<u32>(W[b + {{W_HMASK}}u + i]) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(4u * n + s))) & vec4<u32>(1u);
      (*w)[i] = dl * vec4<f32>(vec4<i32>(low | (high << vec4<u32>(2u))) - 4);
    }
  }
}

#if INT_DOT
// Unit u of `row` dotted with x's q8_1 block (INT_DOT): per 16 values, with the half's scale,
// d · (scale − 32) · d_x · (Σ q·q_x − 4 Σ q_x), q the 3-bit code (0 .. 7), the sums exact in integers.
fn unit_qdot(row: u32, u: u32, x: XQ8) -> f32 {
  let sub = u & 7u;
  let blk = row * P.blocks_per_row + (u >> 3u);
  let b = {{BLOCK_WORDS}}u * blk;
  let n = sub >> 2u;
  let s = sub & 3u;
  let q = b + {{W_QS}}u + 8u * n;
  let hm = b + {{W_HMASK}}u;
  let two = vec4<u32>(0x03030303u);
  let one = vec4<u32>(0x01010101u);
  let lo = ((vec4<u32>(W[q], W[q + 1u], W[q + 2u], W[q + 3u]) >> vec4<u32>(2u * s)) & two)
    | (((vec4<u32>(W[hm], W[hm + 1u], W[hm + 2u], W[hm + 3u]) >> vec4<u32>(4u * n + s)) & one) << vec4<u32>(2u));
  let hi = ((vec4<u32>(W[q + 4u], W[q + 5u], W[q + 6u], W[q + 7u]) >> vec4<u32>(2u * s)) & two)
    | (((vec4<u32>(W[hm + 4u], W[hm + 5u], W[hm + 6u], W[hm + 7u]) >> vec4<u32>(4u * n + s)) & one) << vec4<u32>(2u));
  let k = 8u * n + 2u * s;
  let dots = q3k_scale(b, k) * (qdot16(lo, x.lo) - 4 * xq_sum16(x.lo)) + q3k_scale(b, k + 1u) * (qdot16(hi, x.hi) - 4 * xq_sum16(x.hi));
  return f16_to_f32(w_half(2u * P.scale_word + blk)) * (x.d * f32(dots));
}
#endif
