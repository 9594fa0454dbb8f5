// IQ4_NL, repacked (weights.ts): main plane qs[16] per block (4 words); scale plane f16 d per block.
// Byte j of qs: low nibble indexes value j, high nibble value j + 16; value = d · KVALUES_IQ4NL[nibble].
#include "quant/iq4_values.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let qs = 4u * blk;
  for (var i = 0u; i < 4u; i++) {
    let q = W[qs + i];
    (*w)[i] = d * iq4_values(nib_lo(q));
    (*w)[i + 4u] = d * iq4_values(nib_hi(q));
  }
}
