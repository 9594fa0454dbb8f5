// Q8_0, repacked (weights.ts): main plane int8 qs[32] per block (8 words); scale plane f16 d per block.
// value = q · d.
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u && {{BLOCK_WORDS}}u % 4u == 0u; // qs read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  // Constant indices, no loop: SwiftShader keeps w in registers.
  let a = w_quad(qs);
  let c = w_quad(qs + 4u);
  (*w)[0] = vec4<f32>(sbytes4(a.x)) * d;
  (*w)[1] = vec4<f32>(sbytes4(a.y)) * d;
  (*w)[2] = vec4<f32>(sbytes4(a.z)) * d;
  (*w)[3] = vec4<f32>(sbytes4(a.w)) * d;
  (*w)[4] = vec4<f32>(sbytes4(c.x)) * d;
  (*w)[5] = vec4<f32>(sbytes4(c.y)) * d;
  (*w)[6] = vec4<f32>(sbytes4(c.z)) * d;
  (*w)[7] = vec4<f32>(sbytes4(c.w)) * d;
}

#include "quant/unit-step.wgsl"
#if MATVEC
// Block u of `row` as its scale d and its 32 int8 codes (two quads): the dot is d · Σ q·x.
struct UnitRow {
  d: f32,
  a: vec4<u32>,
  c: vec4<u32>,
}

fn unit_row(row: u32, u: u32) -> UnitRow {
  let blk = row * P.blocks_per_row + u;
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  return UnitRow(f16_to_f32(w_half(2u * P.scale_word + blk)), w_quad(qs), w_quad(qs + 4u));
}

fn unit_row_dot(w: UnitRow, x: array<vec4<f32>, 8>) -> f32 {
  let a = w.a;
  let c = w.c;
  return w.d * (dot(vec4<f32>(sbytes4(a.x)), x[0]) + dot(vec4<f32>(sbytes4(a.y)), x[1])
    + dot(vec4<f32>(sbytes4(a.z)), x[2]) + dot(vec4<f32>(sbytes4(a.w)), x[3])
    + dot(vec4<f32>(sbytes4(c.x)), x[4]) + dot(vec4<f32>(sbytes4(c.y)), x[5])
    + dot(vec4<f32>(sbytes4(c.z)), x[6]) + dot(vec4<f32>(sbytes4(c.w)), x[7]));
}
#endif

#if INT_DOT
// Unit u of `row` dotted with x's q8_1 block: d · d_x · Σ q·q_x, the codes' products summed exactly.
fn unit_qdot(row: u32, u: u32, x: XQ8) -> f32 {
  let blk = row * P.blocks_per_row + u;
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  return d * (x.d * f32(qdot16(w_quad(qs), x.lo) + qdot16(w_quad(qs + 4u), x.hi)));
}
#endif
