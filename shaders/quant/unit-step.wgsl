// The decode mat-vec's step for a decoder without one of its own, one 32-value unit at a time:
// each token's unit of x loaded once, then each of the thread's rows read once for all of them by
// the decoder's
//   struct UnitRow                                      a row's unit as the dot needs it
//   fn unit_row(row: u32, u: u32) -> UnitRow
//   fn unit_row_dot(w: UnitRow, x: array<vec4<f32>, 8>) -> f32
// (quant/unit-matvec.wgsl's decodes the unit; Q8_0 keeps its integer codes and scale).
#if MATVEC
const MV_UNITS = 1u;

#if INT_DOT
// With x as q8_1 (INT_DOT): the unit's block of x read once, each row's unit dotted with it by the
// type's fn unit_qdot(row: u32, u: u32, x: XQ8) -> f32.
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let x = xq_block(u);
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    (*acc)[r] += unit_qdot(row0 + r, u, x);
  }
}
#else
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  #unroll T 0 {{TT}} 1
  let x{{T}} = x_unit(token_x(xb, {{T}}u), 32u * u);
  #endunroll
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let w = unit_row(row0 + r, u);
    #unroll T 0 {{TT}} 1
    (*acc)[r * TT + {{T}}u] += unit_row_dot(w, x{{T}});
    #endunroll
  }
}
#endif
#endif
