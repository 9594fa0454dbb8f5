// y = W · x for a prefill's n tokens on a CPU adapter (a GPU's is matmat-tiled.wgsl; matmul.wgsl
// keeps decode and the routed experts). Each invocation owns RT rows of W (WG apart) and a tile of TT tokens: it walks the
// rows, decoding each 32-value unit once (the type's decode_unit, into registers) and using it for
// all TT tokens, with one f32 accumulator per (row, token) summed in column order; each token's
// unit of x is loaded once for the RT rows. On the software adapters (lanes are SIMD lanes of a
// CPU) the x loads, not the decoding, were the cost: RT rows per load cut them RT-fold. No shared
// memory, no barrier, no reduction. Rows past the end decode the last row and skip the store;
// the token loop always runs TT times (tokens past n reread token n − 1 and skip the store), so
// the loops unroll to constant indices.
// SMALL_TILE (SwiftShader, a CPU adapter without shader-f16): RT = TT = 4, every value in a named
// variable (the tile's four x units, one vec4 of four token sums per row) and no private array
// indexed in a loop; the same sums in the same order. Measured there against the RT = 8, TT = 16
// shape: Q4_K and Q8_0 1.2–1.3× faster, Q6_K about even
// (`git show fec2e69:docs/performance.md`, "Prefill on the CPU adapters").
// X_LANES: x_unit loads a unit of x a vec4 a lane of the subgroup and broadcasts it (matmul.wgsl's
// note); on lavapipe and SwiftShader 1.15–1.3× faster at 16 tokens.
// Workgroups beyond 65535 in x wrap into y (row group = x + y · num_workgroups.x);
// workgroup_id.z picks the token tile.
#if SHADER_F16
enable f16;
#endif
#if X_LANES
enable subgroups;
#endif
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"
#include "weight-io.wgsl"

const WG: u32 = {{WG}}u;
const TT: u32 = {{TT}}u;
const RT: u32 = {{RT}}u;

#if SMALL_TILE
const_assert RT == 4u && TT == 4u;

// Σ w · x of one row's unit for the tile's four tokens.
fn tile_dots(w: array<vec4<f32>, 8>, x0: array<vec4<f32>, 8>, x1: array<vec4<f32>, 8>, x2: array<vec4<f32>, 8>, x3: array<vec4<f32>, 8>) -> vec4<f32> {
  return vec4<f32>(unit_dot(w, x0), unit_dot(w, x1), unit_dot(w, x2), unit_dot(w, x3));
}

// Stores one row's sums of the tile's tokens (those before n), rows past the end skipped.
fn store_row(row: u32, first: u32, sums: vec4<f32>) {
  if (row >= P.rows) { return; }
  for (var t = 0u; t < TT; t++) {
    if (first + t >= P.n) { break; }
    let i = P.y_offset + (first + t) * P.y_stride + out_row(row);
    store_y(i, sums[t]);
  }
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
#if X_LANES
  @builtin(subgroup_invocation_id) lane: u32,
#endif
) {
#if X_LANES
  x_lane = lane;
#endif
  let first = wid.z * TT;
  if (first >= P.n) { return; }
  let row0 = (wid.x + wid.y * nwg.x) * WG * RT + lid;
  let last_row = P.rows - 1u;
  let last_token = P.n - 1u;
  let xb0 = P.x_offset + first * P.x_stride;
  let xb1 = P.x_offset + min(first + 1u, last_token) * P.x_stride;
  let xb2 = P.x_offset + min(first + 2u, last_token) * P.x_stride;
  let xb3 = P.x_offset + min(first + 3u, last_token) * P.x_stride;
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var a2 = vec4<f32>(0.0);
  var a3 = vec4<f32>(0.0);
  for (var u = 0u; u < P.units; u++) {
    let c = 32u * u;
    let x0 = x_unit(xb0, c);
    let x1 = x_unit(xb1, c);
    let x2 = x_unit(xb2, c);
    let x3 = x_unit(xb3, c);
    var w: array<vec4<f32>, 8>;
    decode_unit(min(row0, last_row), u, &w);
    a0 += tile_dots(w, x0, x1, x2, x3);
    decode_unit(min(row0 + WG, last_row), u, &w);
    a1 += tile_dots(w, x0, x1, x2, x3);
    decode_unit(min(row0 + 2u * WG, last_row), u, &w);
    a2 += tile_dots(w, x0, x1, x2, x3);
    decode_unit(min(row0 + 3u * WG, last_row), u, &w);
    a3 += tile_dots(w, x0, x1, x2, x3);
  }
  store_row(row0, first, a0);
  store_row(row0 + WG, first, a1);
  store_row(row0 + 2u * WG, first, a2);
  store_row(row0 + 3u * WG, first, a3);
}
#else
@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
#if X_LANES
  @builtin(subgroup_invocation_id) lane: u32,
#endif
) {
#if X_LANES
  x_lane = lane;
#endif
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
      let i = P.y_offset + (first + t) * P.y_stride + out_row(row);
      store_y(i, acc[r * TT + t]);
    }
  }
}
#endif
