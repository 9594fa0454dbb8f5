// Q2_K, as in the file, at the words the block layout gives: scales[16] (from W_SCALES; low
// nibble scale, high nibble min, one byte per 16 values), qs[64] (from W_QS), W_D = f16 d | f16 dmin << 16.
// Unit u (values 32u..32u+31) is half n = u / 4, shift s = 2 (u % 4): value l of the unit is the
// 2-bit field at shift s of qs[32n + l], scaled by scales[8n + 2(u % 4) + (l >= 16)]:
// value = d · (sc & 15) · q - dmin · (sc >> 4).
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let n = sub >> 2u;
  let s = sub & 3u;
  let dm = f16x2(W[b + {{W_D}}u]);
  let si = 8u * n + 2u * s; // even: both scale bytes sit in one word
  let sw = W[b + {{W_SCALES}}u + (si >> 2u)] >> ((si & 3u) * 8u);
  for (var h = 0u; h < 2u; h++) {
    let sc = (sw >> (8u * h)) & 0xffu;
    let dl = dm.x * f32(sc & 15u);
    let ml = dm.y * f32(sc >> 4u);
    for (var i = 4u * h; i < 4u * h + 4u; i++) {
      let q = crumbs4(W[b + {{W_QS}}u + 8u * n + i], 2u * s);
      (*w)[i] = dl * vec4<f32>(q) - ml;
    }
  }
}

#if INT_DOT
// Unit u of `row` dotted with x's q8_1 block (INT_DOT): per 16 values, with the half's scale and
// min, d · sc · d_x · Σ q·q_x − dmin · m · d_x · Σ q_x, the sums exact in integers.
fn unit_qdot(row: u32, u: u32, x: XQ8) -> f32 {
  let sub = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let n = sub >> 2u;
  let s = sub & 3u;
  let dm = f16x2(W[b + {{W_D}}u]);
  let si = 8u * n + 2u * s;
  let sw = W[b + {{W_SCALES}}u + (si >> 2u)] >> ((si & 3u) * 8u);
  let q = b + {{W_QS}}u + 8u * n;
  let m = vec4<u32>(0x03030303u);
  let lo = (vec4<u32>(W[q], W[q + 1u], W[q + 2u], W[q + 3u]) >> vec4<u32>(2u * s)) & m;
  let hi = (vec4<u32>(W[q + 4u], W[q + 5u], W[q + 6u], W[q + 7u]) >> vec4<u32>(2u * s)) & m;
  let sc = vec2<i32>(i32(sw & 15u), i32((sw >> 8u) & 15u));
  let mn = vec2<i32>(i32((sw >> 4u) & 15u), i32((sw >> 12u) & 15u));
  let dots = sc.x * qdot16(lo, x.lo) + sc.y * qdot16(hi, x.hi);
  let sums = mn.x * xq_sum16(x.lo) + mn.y * xq_sum16(x.hi);
  return x.d * (dm.x * f32(dots) - dm.y * f32(sums));
}
#endif
