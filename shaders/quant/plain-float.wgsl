// Decoder of plain floats stored row after row (F32, F16, BF16), in two forms chosen once per
// weight, not per row: a row may start inside a 16-byte quad (cols not a multiple of QUAD_VALUES)
// and may end inside a unit. The including type file defines
//   const QUAD_VALUES: u32         values per 16-byte quad of W
//   fn decode_quads(row, u, w)     as decode_unit, when every row starts on a quad: whole quads,
//                                  those past the row's end as 0 (QUAD_VALUES divides cols, so
//                                  no quad straddles the end)
//   fn plain_value(i: u32) -> f32  the value at element i of W (any i: rows may start anywhere)
const UNIT_PARTIAL = true;

fn rows_on_quads() -> bool {
  return P.cols % QUAD_VALUES == 0u;
}

// Any row: value by value, those past the row's end as 0.
fn decode_values(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let c0 = u * 32u;
  let e0 = row * P.cols + c0;
  for (var i = 0u; i < 8u; i++) {
    for (var k = 0u; k < 4u; k++) {
      let c = 4u * i + k;
      (*w)[i][k] = select(0.0, plain_value(e0 + c), c0 + c < P.cols);
    }
  }
}

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  if (rows_on_quads()) {
    decode_quads(row, u, w);
  } else {
    decode_values(row, u, w);
  }
}

#if MATVEC
const MV_UNITS = 1u;

// The decode mat-vec's step: each token's unit of x loaded once, each of the thread's rows decoded
// once for all of them. The branch is the same for every row, so it is taken once, outside the
// row loops; the rare value by value loop is never unrolled (with the branch inside one row loop
// unrolled ROWS times, lavapipe took up to a minute to compile the kernel).
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  #unroll T 0 {{TT}} 1
  let x{{T}} = x_unit(token_x(xb, {{T}}u), 32u * u);
  #endunroll
  var w: array<vec4<f32>, 8>;
  if (rows_on_quads()) {
    for (var r = 0u; r < {{MV_ROW_END}}; r++) {
      if (r >= rows) { break; }
      decode_quads(row0 + r, u, &w);
      #unroll T 0 {{TT}} 1
      (*acc)[r * TT + {{T}}u] += unit_dot(w, x{{T}});
      #endunroll
    }
  } else {
    for (var r = 0u; r < rows; r++) {
      decode_values(row0 + r, u, &w);
      #unroll T 0 {{TT}} 1
      (*acc)[r * TT + {{T}}u] += unit_dot(w, x{{T}});
      #endunroll
    }
  }
}
#endif
