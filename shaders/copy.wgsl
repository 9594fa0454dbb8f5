// A plain buffer copy, 16 bytes per invocation per step (grid-stride loop): the memory bandwidth
// yardstick for `gufo bench` (bandwidth.ts); and read_rows, reads alone, below, with a variant.
const WG: u32 = {{WG}}u;

@group(0) @binding(0) var<storage, read> SRC: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> DST: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let step = nwg.x * WG;
  let n = arrayLength(&SRC);
  for (var i = gid.x; i < n; i += step) {
    DST[i] = SRC[i];
  }
}

#include "read-rows.wgsl"

// Reads alone (bandwidth.ts's rowReads), in the pattern of CPU-shape decode
// attention: rows of ROW_VEC4 vec4s divided as read-rows.wgsl says, READ_LANES lanes side by side
// on consecutive positions, each reading its head's whole row; each lane's sum is written so the
// reads cannot be dropped.
override ROW_VEC4: u32;
override HEADS: u32;
override READ_LANES: u32;

@compute @workgroup_size(READ_LANES)
fn read_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let share = row_share(wid.x, nwg.x, arrayLength(&SRC) / (HEADS * ROW_VEC4), HEADS);
  var sum = vec4<u32>(0u);
  for (var r = share.begin + lid; r < share.end; r += READ_LANES) {
    let row = (r * HEADS + share.head) * ROW_VEC4;
    for (var i = 0u; i < ROW_VEC4; i++) {
      sum += SRC[row + i];
    }
  }
  DST[wid.x * READ_LANES + lid] = sum;
}

// read_rows from a texture (bench:read-paths): the same words as the texels of an rgba32uint
// texture 2^TEXELS_WIDE_LOG2 texels wide, in order, row by row; POSITIONS positions of rows.
override TEXELS_WIDE_LOG2: u32 = 0u;
override POSITIONS: u32 = 0u;
@group(0) @binding(2) var SRC_TEXELS: texture_2d<u32>;

@compute @workgroup_size(READ_LANES)
fn read_rows_texture(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let share = row_share(wid.x, nwg.x, POSITIONS, HEADS);
  let wide = (1u << TEXELS_WIDE_LOG2) - 1u;
  var sum = vec4<u32>(0u);
  for (var r = share.begin + lid; r < share.end; r += READ_LANES) {
    let row = (r * HEADS + share.head) * ROW_VEC4;
    for (var i = 0u; i < ROW_VEC4; i++) {
      let texel = row + i;
      sum += textureLoad(SRC_TEXELS, vec2<u32>(texel & wide, texel >> TEXELS_WIDE_LOG2), 0);
    }
  }
  DST[wid.x * READ_LANES + lid] = sum;
}
