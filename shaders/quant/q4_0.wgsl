// Q4_0, repacked (weights.ts): main plane qs[16] per block (4 words); scale plane f16 d per block.
// Byte j of qs: low nibble is value j, high nibble value j + 16; value = (nibble - 8) · d.
#include "quant/nibbles.wgsl"

fn nibble_values(q: vec4<u32>, d: f32) -> vec4<f32> {
  return (vec4<f32>(q) - 8.0) * d;
}

#if INT_DOT
// Unit u of `row` dotted with x's q8_1 block: Σ (q − 8)·d · q_x·d_x = d · (d_x · Σ q·q_x − 8 · s_x),
// the nibbles (bytes 0 .. 15, values j and j + 16 of byte j) dotted four at a time.
fn unit_qdot(row: u32, u: u32, x: XQ8) -> f32 {
  let blk = row * P.blocks_per_row + u;
  let q4 = w_quad({{BLOCK_WORDS}}u * blk + {{W_QS}}u);
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let m = vec4<u32>(0x0f0f0f0fu);
  let q = qdot16(q4 & m, x.lo) + qdot16((q4 >> vec4<u32>(4u)) & m, x.hi);
  return d * (x.d * f32(q) - 8.0 * x.s);
}
#endif
