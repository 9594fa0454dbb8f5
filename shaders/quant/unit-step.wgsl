// The decode mat-vec's step (matmul.wgsl with MATVEC) one 32-value unit at a time: the unit of x
// loaded once, then each of the thread's rows dotted with it by the decoder's
//   fn unit_row_dot(row: u32, u: u32, x: array<vec4<f32>, 8>) -> f32
// (quant/unit-matvec.wgsl's decodes the unit; Q8_0 dots its integer codes and scales once).
#if MATVEC
const MV_UNITS = 1u;

fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let x = x_unit(xb, 32u * u);
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    (*acc)[r] += unit_row_dot(row0 + r, u, x);
  }
}
#endif
