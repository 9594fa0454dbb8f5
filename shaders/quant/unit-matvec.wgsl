// The decode mat-vec's step for a decoder without one of its own: quant/unit-step.wgsl's, each
// row's unit decoded (decode_unit) and dotted with x.
#include "quant/unit-step.wgsl"
#if MATVEC
struct UnitRow {
  w: array<vec4<f32>, 8>,
}

fn unit_row(row: u32, u: u32) -> UnitRow {
  var w: array<vec4<f32>, 8>;
  decode_unit(row, u, &w);
  return UnitRow(w);
}

fn unit_row_dot(w: UnitRow, x: array<vec4<f32>, 8>) -> f32 {
  return unit_dot(w.w, x);
}
#endif
