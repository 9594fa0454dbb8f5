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
#include "weight-io.wgsl"

const WG: u32 = {{WG}}u;
const TT: u32 = {{TT}}u;
const RT: u32 = {{RT}}u;

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
