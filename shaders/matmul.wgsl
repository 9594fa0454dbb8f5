// y = W · x for n tokens, with W's blocks decoded in registers (never stored dequantized) and f32
// accumulation. One workgroup computes ROWS consecutive rows of one part of W for TT consecutive
// tokens: its WG threads stride over the 32-value units of each row, each decoding a unit once and
// using it for all TT tokens; the per-thread sums are then reduced across the workgroup (subgroup
// sums plus a small shared array where subgroups exist, a shared-memory tree otherwise).
//   decode (n = 1): TT = 1;  prefill: TT tokens per workgroup, workgroup_id.z picks the token tile.
// Workgroups beyond 65535 in x wrap into y (row group = x + y · num_workgroups.x).
// ACCUMULATE: y += W · x (a residual add folded into the product).
#if SUBGROUPS
enable subgroups;
requires subgroup_id;
#endif
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"

const WG: u32 = {{WG}}u;
const ROWS: u32 = {{ROWS}}u;
const TT: u32 = {{TT}}u;
const ACC: u32 = ROWS * TT;

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;

#if SUBGROUPS
// One slot per subgroup (subgroups have at least 4 invocations).
var<workgroup> partial: array<f32, ACC * (WG / 4u)>;
#else
var<workgroup> partial: array<f32, ACC * WG>;
#endif

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

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
#if SUBGROUPS
  @builtin(subgroup_id) sg_id: u32,
  @builtin(num_subgroups) sg_count: u32,
#endif
) {
  let row0 = (wid.x + wid.y * nwg.x) * ROWS;
  let t0 = wid.z * TT;
  var acc: array<f32, ACC>;
  for (var r = 0u; r < ROWS; r++) {
    let row = row0 + r;
    if (row >= P.rows) { break; }
    for (var u = lid; u < P.units; u += WG) {
      var w: array<vec4<f32>, 8>;
      decode_unit(row, u, &w);
      let c0 = 32u * u;
      for (var t = 0u; t < TT; t++) {
        if (t0 + t >= P.n) { break; }
        let xb = P.x_offset + (t0 + t) * P.x_stride;
        var s = 0.0;
        for (var i = 0u; i < 8u; i++) {
          s += dot(w[i], load_x4(xb, c0 + 4u * i));
        }
        acc[r * TT + t] += s;
      }
    }
  }

#if SUBGROUPS
  for (var k = 0u; k < ACC; k++) {
    let s = subgroupAdd(acc[k]);
    if (subgroupElect()) { partial[k * (WG / 4u) + sg_id] = s; }
  }
  workgroupBarrier();
  if (lid < ACC) {
    var sum = 0.0;
    for (var j = 0u; j < sg_count; j++) { sum += partial[lid * (WG / 4u) + j]; }
    store(row0, t0, lid, sum);
  }
#else
  for (var k = 0u; k < ACC; k++) { partial[k * WG + lid] = acc[k]; }
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid < stride) {
      for (var k = 0u; k < ACC; k++) { partial[k * WG + lid] += partial[k * WG + lid + stride]; }
    }
  }
  workgroupBarrier();
  if (lid < ACC) { store(row0, t0, lid, partial[lid * WG]); }
#endif
}

// Output k of this workgroup (row k / TT, token k % TT).
fn store(row0: u32, t0: u32, k: u32, v: f32) {
  let row = row0 + k / TT;
  let t = t0 + k % TT;
  if (row < P.rows && t < P.n) {
    let i = P.y_offset + t * P.y_stride + P.row_start + row;
#if ACCUMULATE
    Y[i] += v;
#else
    Y[i] = v;
#endif
  }
}
