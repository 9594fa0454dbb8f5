// IQ4_XS, as in the file, at the words the block layout gives: W_D = f16 d | scales_h << 16,
// W_SCALES_L = scales_l[4], qs[128] from word W_QS. Sub-block ib (32 values) has the 6-bit scale
// ls = (nibble ib of scales_l) | (bits 2ib, 2ib+1 of scales_h) << 4, and dl = d · (ls - 32);
// qs[16 ib + j]: low nibble indexes value j, high nibble value j + 16; value = dl · KVALUES_IQ4NL[nibble].
#include "quant/iq4_values.wgsl"
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let ib = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let w0 = W[b + {{W_D}}u];
  let d = f16_to_f32(w0 & 0xffffu);
  let ls = ((W[b + {{W_SCALES_L}}u] >> (4u * ib)) & 15u) | (((w0 >> (16u + 2u * ib)) & 3u) << 4u);
  let dl = d * f32(i32(ls) - 32);
  let qs = b + {{W_QS}}u + 4u * ib;
  for (var i = 0u; i < 4u; i++) {
    let q = W[qs + i];
    (*w)[i] = dl * iq4_values(nib_lo(q));
    (*w)[i + 4u] = dl * iq4_values(nib_hi(q));
  }
}
