// MXFP4, repacked (weights.ts): main plane qs[16] per block (4 words); scale plane one E8M0 byte e
// per block. Byte j of qs: low nibble indexes value j, high nibble value j + 16;
// value = KVALUES_MXFP4[nibble] · 2^(e - 128) (ggml's doubled E2M1 table times half the scale).
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;
const KVALUES_MXFP4 = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

fn e8m0_half(e: u32) -> f32 {
  return bitcast<f32>(select((e - 1u) << 23u, 0x00200000u << e, e < 2u));
}

fn mxfp4_values(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(KVALUES_MXFP4[q.x], KVALUES_MXFP4[q.y], KVALUES_MXFP4[q.z], KVALUES_MXFP4[q.w]);
}

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = e8m0_half(w_byte(4u * P.scale_word + blk));
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  for (var i = 0u; i < 4u; i++) {
    let q = W[qs + i];
    (*w)[i] = mxfp4_values(nib_lo(q)) * d;
    (*w)[i + 4u] = mxfp4_values(nib_hi(q)) * d;
  }
}
