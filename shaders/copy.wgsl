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
// attention (attention-decode.wgsl's attend_split_cpu): READ_LANES lanes side by side on
// consecutive rows of ROW_VEC4 vec4s, each reading its whole row, a workgroup per chunk of rows;
// each lane's sum is written so the reads cannot be dropped.
override ROW_VEC4: u32;
override READ_LANES: u32;

@compute @workgroup_size(READ_LANES)
fn read_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let rows = arrayLength(&SRC) / ROW_VEC4;
  let chunk = (rows + nwg.x - 1u) / nwg.x;
  let begin = wid.x * chunk;
  let end = min(begin + chunk, rows);
  var sum = vec4<u32>(0u);
  for (var r = begin + lid; r < end; r += READ_LANES) {
    for (var i = 0u; i < ROW_VEC4; i++) {
      sum += SRC[r * ROW_VEC4 + i];
    }
  }
  DST[wid.x * READ_LANES + lid] = sum;
}
