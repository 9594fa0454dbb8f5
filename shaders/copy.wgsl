// A plain buffer copy, 16 bytes per invocation per step (grid-stride loop): the memory bandwidth
// yardstick for `gufo bench` (bandwidth.ts); and read_rows, reads alone, below.
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

// Reads alone (bandwidth.ts's measureRowReadBandwidth), in the pattern of CPU-shape decode
// attention (attention-decode.wgsl's attend_split_cpu): SRC holds positions of HEADS rows of
// ROW_VEC4 vec4s (the KV cache's heads side by side); workgroup x reads head x % HEADS over its
// share of the positions, READ_LANES lanes side by side on consecutive positions, each reading its
// head's whole row; each lane's sum is written so the reads cannot be dropped.
override ROW_VEC4: u32;
override HEADS: u32;
override READ_LANES: u32;

@compute @workgroup_size(READ_LANES)
fn read_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let positions = arrayLength(&SRC) / (HEADS * ROW_VEC4);
  let head = wid.x % HEADS;
  let shares = nwg.x / HEADS;
  let chunk = (positions + shares - 1u) / shares;
  let begin = (wid.x / HEADS) * chunk;
  let end = min(begin + chunk, positions);
  var sum = vec4<u32>(0u);
  for (var r = begin + lid; r < end; r += READ_LANES) {
    let row = (r * HEADS + head) * ROW_VEC4;
    for (var i = 0u; i < ROW_VEC4; i++) {
      sum += SRC[row + i];
    }
  }
  DST[wid.x * READ_LANES + lid] = sum;
}
