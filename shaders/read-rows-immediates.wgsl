// Reads alone with every lane of a workgroup reading every word of its rows from one address
// (bench:read-paths; copy.wgsl's read_rows has each lane read its own key's row). llvmpipe 25.0
// loads once for all lanes only where NIR proves the address uniform: made of constants and push
// constants (WGSL's immediates). A loop counter never is, so each tile's first position is rebuilt
// from lookups in IDENTITY = (0, 1, 2, 3), two bits at a time (legal: it is the same in every
// lane of the workgroup), and the positions within a tile and the words within a row are written
// out. Such a kernel's lanes would split the query heads, not the keys.
requires immediate_address_space;

#include "read-rows.wgsl"

const HEADS: u32 = {{HEADS}}u;
const ROW_VEC4: u32 = {{ROW_VEC4}}u;
const READ_LANES: u32 = {{READ_LANES}}u;
const TILE: u32 = {{TILE}}u;

var<immediate> IDENTITY: vec4<u32>;
@group(0) @binding(0) var<storage, read> SRC: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> DST: array<vec4<u32>>;

// x (below 2^20) as a value NIR takes for uniform.
fn uniform_u32(x: u32) -> u32 {
  var u = 0u;
  #unroll B 0 20 2
  u |= IDENTITY[(x >> {{B}}u) & 3u] << {{B}}u;
  #endunroll
  return u;
}

@compute @workgroup_size(READ_LANES)
fn read_rows_immediates(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let share = row_share(wid.x, nwg.x, arrayLength(&SRC) / (HEADS * ROW_VEC4), HEADS);
  let head = uniform_u32(share.head);
  var sum = vec4<u32>(0u);
  for (var at = share.begin; at < share.end; at += TILE) {
    let first = uniform_u32(at);
    #unroll K 0 {{TILE}} 1
    if (first + {{K}}u < share.end) {
      let row = ((first + {{K}}u) * HEADS + head) * ROW_VEC4;
      #unroll I 0 {{ROW_VEC4}} 1
      sum += SRC[row + {{I}}u];
      #endunroll
    }
    #endunroll
  }
  // Every lane holds the whole sum: one writes it.
  if (lid == 0u) {
    DST[wid.x * READ_LANES] = sum;
  }
}
