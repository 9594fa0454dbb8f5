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
