// Decoder of the repacked 4-bit layouts with one f16 scale d per 32-value block (Q4_0, IQ4_NL):
// main plane qs[16] per block (4 words); scale plane f16 d per block (weights.ts). Byte j of qs:
// low nibble gives value j, high nibble value j + 16. The including type file defines
//   fn nibble_values(q: vec4<u32>, d: f32) -> vec4<f32>   four values from their nibbles and d
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u && {{BLOCK_WORDS}}u % 4u == 0u; // qs read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  let q4 = w_quad(qs);
  for (var i = 0u; i < 4u; i++) {
    (*w)[i] = nibble_values(nib_lo(q4[i]), d);
    (*w)[i + 4u] = nibble_values(nib_hi(q4[i]), d);
  }
}
