// out[t] = row ids[t] of W, as f32, decoded exactly as the CPU decoders do. One thread per
// 32-value unit of one token's row: workgroup_id.x picks WG units, workgroup_id.y the token.
// A weight split into parts runs once per part; each part writes the tokens whose id it holds,
// and the last part writes zeros for ids past the end of the table.
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"

const WG: u32 = {{WG}}u;

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> IDS: array<u32>;
@group(0) @binding(2) var<storage, read_write> OUT: array<f32>;
@group(0) @binding(3) var<uniform> P: WeightUniform;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let u = wid.x * WG + lid;
  let t = wid.y;
  if (u >= P.units || t >= P.n) { return; }
  let id = IDS[P.x_offset + t];
  let last_part = P.row_start + P.rows == P.total_rows;
  var w: array<vec4<f32>, 8>;
  if (id >= P.row_start && id < P.row_start + P.rows) {
    decode_unit(id - P.row_start, u, &w);
  } else if (!(last_part && id >= P.total_rows)) {
    return;
  }
  let o = P.y_offset + t * P.y_stride + 32u * u;
  for (var i = 0u; i < 8u; i++) {
    for (var k = 0u; k < 4u; k++) {
      let c = 32u * u + 4u * i + k;
      if (!UNIT_PARTIAL || c < P.cols) { OUT[o + 4u * i + k] = w[i][k]; }
    }
  }
}
