// The bindings and x loads shared by the weight kernels (matmul.wgsl, matmat.wgsl): W (also as
// vec4<u32> for the decoders' w_quad), x, y and the WeightUniform; x read one unit at a time.
@group(0) @binding(0) var<storage, read> W: array<u32>;
// W again, 16 bytes at a time, for the decoders' w_quad (W_VEC4 is always on here).
@group(0) @binding(5) var<storage, read> W4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: WeightUniform;

#if X_VEC4
// x read 16 bytes at a time: token vectors start at multiples of 4 elements (matmul.ts checks).
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;

// x values c .. c + 3 of the token whose vector starts at xb (zero past the row's end).
fn load_x4(xb: u32, c: u32) -> vec4<f32> {
  let v = X[(xb + c) >> 2u];
  if (UNIT_PARTIAL) { return select(vec4<f32>(0.0), v, c < P.cols); }
  return v;
}
#else
@group(0) @binding(1) var<storage, read> X: array<f32>;

// x values c .. c + 3 of the token whose vector starts at xb (zero past the row's end).
fn load_x4(xb: u32, c: u32) -> vec4<f32> {
  if (UNIT_PARTIAL && c + 4u > P.cols) {
    var v = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k++) {
      if (c + k < P.cols) { v[k] = X[xb + c + k]; }
    }
    return v;
  }
  let i = xb + c;
  return vec4<f32>(X[i], X[i + 1u], X[i + 2u], X[i + 3u]);
}
#endif

// The 32 x values of the unit starting at column c of the token whose vector starts at xb, as
// eight vec4s (constant indices: the software adapters keep them in registers).
fn x_unit(xb: u32, c: u32) -> array<vec4<f32>, 8> {
  return array<vec4<f32>, 8>(
    load_x4(xb, c), load_x4(xb, c + 4u), load_x4(xb, c + 8u), load_x4(xb, c + 12u),
    load_x4(xb, c + 16u), load_x4(xb, c + 20u), load_x4(xb, c + 24u), load_x4(xb, c + 28u),
  );
}

// Σ w · x over a unit, w its eight decoded vec4s.
fn unit_dot(w: array<vec4<f32>, 8>, x: array<vec4<f32>, 8>) -> f32 {
  return dot(w[0], x[0]) + dot(w[1], x[1]) + dot(w[2], x[2]) + dot(w[3], x[3])
    + dot(w[4], x[4]) + dot(w[5], x[5]) + dot(w[6], x[6]) + dot(w[7], x[7]);
}
