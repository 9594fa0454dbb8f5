// tanh for the soft-caps and GELU, as close to C's tanhf as f32 allows. WGSL's builtin may be
// sinh/cosh, which loses the relative precision of small results (and overflows to NaN for large
// x on some drivers), so:
//   |x| < 0.5: the odd Taylor series through x^15 (truncation error < 1e-8 relative)
//   else:      1 − 2/(e^{2|x|} + 1), whose small term keeps its precision, so 1 + tanh(x) for
//              large negative x (GELU's tail) comes out as llama.cpp's does
fn tanh_f32(x: f32) -> f32 {
  let a = abs(x);
  if (a < 0.5) {
    let y = x * x;
    let p = 1.0 + y * (-1.0 / 3.0 + y * (2.0 / 15.0 + y * (-17.0 / 315.0 + y * (62.0 / 2835.0
      + y * (-1382.0 / 155925.0 + y * (21844.0 / 6081075.0 + y * (-929569.0 / 638512875.0)))))));
    return x * p;
  }
  let t = 1.0 - 2.0 / (exp(2.0 * min(a, 15.0)) + 1.0);
  return select(t, -t, x < 0.0);
}
