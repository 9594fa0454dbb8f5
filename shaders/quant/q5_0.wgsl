// Q5_0, repacked (weights.ts): main plane qh (word W_QH) + qs[16] (from word W_QS) per block; scale plane
// f16 d per block. Bit j of qh is the fifth bit of value j; value = (nibble | bit << 4) - 16, times d.
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let b = {{BLOCK_WORDS}}u * blk;
  let qh = W[b + {{W_QH}}u];
  for (var i = 0u; i < 4u; i++) {
    let q = W[b + {{W_QS}}u + i];
    let lo = nib_lo(q) | (bits4(qh, 4u * i) << vec4<u32>(4u));
    let hi = nib_hi(q) | (bits4(qh, 16u + 4u * i) << vec4<u32>(4u));
    (*w)[i] = vec4<f32>(vec4<i32>(lo) - 16) * d;
    (*w)[i + 4u] = vec4<f32>(vec4<i32>(hi) - 16) * d;
  }
}
