// F32: plain floats, row after row.
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = true;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let c0 = u * 32u;
  let e0 = row * P.cols + c0;
  if (c0 + 32u <= P.cols && (e0 & 3u) == 0u) {
    for (var i = 0u; i < 8u; i++) { (*w)[i] = bitcast<vec4<f32>>(w_quad(e0 + 4u * i)); }
  } else if (c0 + 32u <= P.cols) {
    for (var i = 0u; i < 8u; i++) {
      let e = e0 + 4u * i;
      (*w)[i] = bitcast<vec4<f32>>(vec4<u32>(W[e], W[e + 1u], W[e + 2u], W[e + 3u]));
    }
  } else {
    for (var i = 0u; i < 8u; i++) {
      for (var k = 0u; k < 4u; k++) {
        let c = 4u * i + k;
        (*w)[i][k] = select(0.0, bitcast<f32>(W[e0 + c]), c0 + c < P.cols);
      }
    }
  }
}
