// y = W · x for a prefill's n tokens (the mat-mat kernel; matmul.wgsl keeps decode and the routed
// experts). Each invocation owns RT rows of W (WG apart) and a tile of TT tokens: it walks the
// rows, decoding each 32-value unit once (the type's decode_unit, into registers) and using it for
// all TT tokens, with one f32 accumulator per (row, token) summed in column order; each token's
// unit of x is loaded once for the RT rows. On the software adapters (lanes are SIMD lanes of a
// CPU) the x loads, not the decoding, were the cost: RT rows per load cut them RT-fold. No shared
// memory, no barrier, no reduction. Rows past the end decode the last row and skip the store;
// the token loop always runs TT times (tokens past n reread token n − 1 and skip the store), so
// the loops unroll to constant indices.
// Workgroups beyond 65535 in x wrap into y (row group = x + y · num_workgroups.x);
// workgroup_id.z picks the token tile. ACCUMULATE: y += W · x.
#if SHADER_F16
enable f16;
#endif
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"

const WG: u32 = {{WG}}u;
const TT: u32 = {{TT}}u;
const RT: u32 = {{RT}}u;

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

// Σ w · x over a unit.
fn unit_dot(w: array<vec4<f32>, 8>, x: array<vec4<f32>, 8>) -> f32 {
  return dot(w[0], x[0]) + dot(w[1], x[1]) + dot(w[2], x[2]) + dot(w[3], x[3])
    + dot(w[4], x[4]) + dot(w[5], x[5]) + dot(w[6], x[6]) + dot(w[7], x[7]);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let first = wid.z * TT;
  if (first >= P.n) { return; }
  // This thread's rows: RT of them, WG apart (consecutive threads, consecutive rows).
  let row0 = (wid.x + wid.y * nwg.x) * WG * RT + lid;
  var acc: array<f32, RT * TT>;
  for (var u = 0u; u < P.units; u++) {
    var w: array<array<vec4<f32>, 8>, RT>;
    for (var r = 0u; r < RT; r++) {
      decode_unit(min(row0 + r * WG, P.rows - 1u), u, &w[r]);
    }
    for (var t = 0u; t < TT; t++) {
      let x = x_unit(P.x_offset + min(first + t, P.n - 1u) * P.x_stride, 32u * u);
      for (var r = 0u; r < RT; r++) {
        acc[r * TT + t] += unit_dot(w[r], x);
      }
    }
  }
  for (var r = 0u; r < RT; r++) {
    let row = row0 + r * WG;
    if (row >= P.rows) { break; }
    for (var t = 0u; t < TT; t++) {
      if (first + t >= P.n) { break; }
      let i = P.y_offset + (first + t) * P.y_stride + P.row_start + row;
#if ACCUMULATE
      Y[i] += acc[r * TT + t];
#else
      Y[i] = acc[r * TT + t];
#endif
    }
  }
}
