// F32: plain floats, row after row.
const QUAD_VALUES = 4u;
#include "quant/plain-float.wgsl"

fn decode_quads(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let c0 = u * 32u;
  let e0 = row * P.cols + c0;
  for (var i = 0u; i < 8u; i++) {
    (*w)[i] = select(vec4<f32>(0.0), bitcast<vec4<f32>>(w_quad(e0 + 4u * i)), c0 + 4u * i < P.cols);
  }
}

fn plain_value(i: u32) -> f32 {
  return bitcast<f32>(W[i]);
}
