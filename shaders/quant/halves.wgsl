// Decoder of 16-bit floats stored row after row (two per word; a row may start mid-word when cols
// is odd), shared by F16 and BF16. The including type file defines
//   fn half_value(h: u32) -> f32        one value from its 16 bits (the low half of h)
//   fn half_pair(w: u32) -> vec2<f32>   both values of a word, low first
const QUAD_VALUES = 8u;
#include "quant/plain-float.wgsl"

fn decode_quads(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let c0 = u * 32u;
  let h = (row * P.cols + c0) >> 1u;
  for (var i = 0u; i < 4u; i++) {
    let q = w_quad(h + 4u * i);
    let inside = c0 + 8u * i < P.cols;
    (*w)[2u * i] = select(vec4<f32>(0.0), vec4<f32>(half_pair(q.x), half_pair(q.y)), inside);
    (*w)[2u * i + 1u] = select(vec4<f32>(0.0), vec4<f32>(half_pair(q.z), half_pair(q.w)), inside);
  }
}

fn plain_value(i: u32) -> f32 {
  return half_value(w_half(i));
}
