// The decode mat-vec's step (matmul.wgsl with MATVEC) for a decoder without one of its own: one
// 32-value unit per step, decoded (decode_unit) for each of the workgroup's rows.
#if MATVEC
const MV_UNITS = 1u;

fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let x = x_unit(xb, 32u * u);
  for (var r = 0u; r < ROWS; r++) {
    if (r >= rows) { break; }
    var w: array<vec4<f32>, 8>;
    decode_unit(row0 + r, u, &w);
    (*acc)[r] += unit_dot(w, x);
  }
}
#endif
