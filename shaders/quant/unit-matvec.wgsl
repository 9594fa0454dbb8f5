// The decode mat-vec's step for a decoder without one of its own: quant/unit-step.wgsl's, each
// row's unit decoded (decode_unit) and dotted with x.
#include "quant/unit-step.wgsl"
#if MATVEC
fn unit_row_dot(row: u32, u: u32, x: array<vec4<f32>, 8>) -> f32 {
  var w: array<vec4<f32>, 8>;
  decode_unit(row, u, &w);
  return unit_dot(w, x);
}
#endif
