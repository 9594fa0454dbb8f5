// Decoder of 16-bit floats stored row after row (two per word; a row may start mid-word when cols
// is odd), shared by F16 and BF16. The including type file defines
//   fn half_value(h: u32) -> f32        one value from its 16 bits (the low half of h)
//   fn half_pair(w: u32) -> vec2<f32>   both values of a word, low first
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = true;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let c0 = u * 32u;
  let e0 = row * P.cols + c0;
  if (c0 + 32u <= P.cols && (e0 & 7u) == 0u) {
    for (var i = 0u; i < 4u; i++) {
      let q = w_quad((e0 >> 1u) + 4u * i);
      (*w)[2u * i] = vec4<f32>(half_pair(q.x), half_pair(q.y));
      (*w)[2u * i + 1u] = vec4<f32>(half_pair(q.z), half_pair(q.w));
    }
  } else if (c0 + 32u <= P.cols && (e0 & 1u) == 0u) {
    let h = e0 >> 1u;
    for (var i = 0u; i < 8u; i++) {
      (*w)[i] = vec4<f32>(half_pair(W[h + 2u * i]), half_pair(W[h + 2u * i + 1u]));
    }
  } else {
    for (var i = 0u; i < 8u; i++) {
      for (var k = 0u; k < 4u; k++) {
        let c = 4u * i + k;
        (*w)[i][k] = select(0.0, half_value(w_half(e0 + c)), c0 + c < P.cols);
      }
    }
  }
}
